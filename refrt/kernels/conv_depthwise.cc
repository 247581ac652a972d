// conv_depthwise.h. Own code; AVX2+FMA by function attribute, used only when the ISA level (cpu_isa.h) allows avx2.
#include "conv_depthwise.h"

#include <immintrin.h>

#include <algorithm>

#include "../src/scratch.h"
#include "../src/thread_pool.h"
#include "conv_gemm.h"

namespace parity::refrt::conv_depthwise {
namespace {

constexpr int64_t kLanes = 8, kCols = 8;  // channels per vector; output columns summed together

// One block of 8 channels: in = [hp, wp, 8] zero-padded input, w = [taps, 8], out = [oh, ow, 8]. Each
// row is computed in groups of 8 outputs (8 independent multiply-add chains, one weight load each);
// the last group of a row runs past ow: its extra outputs land on the next row's first ones, which
// are computed after (out has kCols * 8 floats of slack past the plane, in enough past its end).
__attribute__((target("avx2,fma"))) void block(const nn::WindowGeometry& g, int64_t wp, const float* in, const float* w,
                                               float* out) {
  const int64_t oh = g.out[0], ow = g.out[1], kh = g.kernel[0], kw = g.kernel[1], s = g.stride[1], sh = g.stride[0];
  const int64_t dh = g.dilation[0], dw = g.dilation[1];
  for (int64_t r = 0; r < oh; ++r)
    for (int64_t j = 0; j < ow; j += kCols) {
      __m256 acc[kCols];
#pragma GCC unroll 8
      for (int64_t q = 0; q < kCols; ++q) acc[q] = _mm256_setzero_ps();
      for (int64_t a = 0; a < kh; ++a) {
        const float* row = in + ((r * sh + a * dh) * wp + j * s) * kLanes;
        for (int64_t b = 0; b < kw; ++b) {
          const __m256 wv = _mm256_loadu_ps(w + (a * kw + b) * kLanes);
          const float* p = row + b * dw * kLanes;
#pragma GCC unroll 8
          for (int64_t q = 0; q < kCols; ++q) acc[q] = _mm256_fmadd_ps(wv, _mm256_loadu_ps(p + q * s * kLanes), acc[q]);
        }
      }
#pragma GCC unroll 8
      for (int64_t q = 0; q < kCols; ++q) _mm256_storeu_ps(out + (r * ow + j + q) * kLanes, acc[q]);
    }
}

}  // namespace

bool applies(const nn::WindowGeometry& g, int64_t c, int64_t m, int64_t group) {
  return conv_gemm::available() && g.rank() == 2 && group == c && m == c && g.out_size() > 0 &&
         g.out_size() <= kMaxPlane && g.kernel[0] * g.kernel[1] > 1;
}

void run(const KernelIO& io, const nn::WindowGeometry& g, int64_t n, int64_t c, const float* px, const float* pw,
         const float* pb, const float* pz, float* py, const std::vector<ActStep>& acts) {
  const int64_t ih = g.in[0], iw = g.in[1], pt = g.pad_begin[0], pl = g.pad_begin[1];
  const int64_t hp = ih + pt + g.pad_end[0], wp = iw + pl + g.pad_end[1], taps = g.kernel[0] * g.kernel[1];
  const int64_t in_size = ih * iw, out_size = g.out_size(), blocks = (c + kLanes - 1) / kLanes;
  parallel_for(io, n * blocks, 1, [&](int64_t u0, int64_t u1) {
    // Slack for the last group of the last row: kCols outputs past the plane read up to kCols * stride
    // input columns past the last row's end.
    const int64_t in_floats = (hp * wp + kCols * g.stride[1]) * kLanes;
    float* in = scratch<float>(static_cast<size_t>(in_floats + taps * kLanes + (out_size + kCols) * kLanes),
                               ScratchSlot::kConvPhases);
    float* w = in + in_floats;
    float* out = w + taps * kLanes;
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t i = u / blocks, c0 = u % blocks * kLanes, lanes = std::min(kLanes, c - c0);
      // Interleave the block's planes into the padded buffer (zeros around, and in lanes past c).
      std::fill(in, in + in_floats, 0.0f);
      for (int64_t q = 0; q < lanes; ++q) {
        const float* x = px + (i * c + c0 + q) * in_size;
        for (int64_t h = 0; h < ih; ++h) {
          float* dst = in + ((h + pt) * wp + pl) * kLanes + q;
          for (int64_t j = 0; j < iw; ++j) dst[j * kLanes] = x[h * iw + j];
        }
      }
      for (int64_t t = 0; t < taps; ++t)
        for (int64_t q = 0; q < kLanes; ++q) w[t * kLanes + q] = q < lanes ? pw[(c0 + q) * taps + t] : 0.0f;
      block(g, wp, in, w, out);
      for (int64_t q = 0; q < lanes; ++q) {  // de-interleave with the epilogue
        const int64_t o = c0 + q;
        float* y = py + (i * c + o) * out_size;
        const float bias = pb ? pb[o] : 0.0f;
        for (int64_t p = 0; p < out_size; ++p) y[p] = out[p * kLanes + q] + bias;
        if (pz) {
          const float* z = pz + (i * c + o) * out_size;
          for (int64_t p = 0; p < out_size; ++p) y[p] += z[p];
        }
        apply_activations(acts, y, out_size);
      }
    }
  });
}

}  // namespace parity::refrt::conv_depthwise
