// conv_depthwise.h. Own code; AVX2+FMA by function attribute, used only when the ISA level (cpu_isa.h) allows avx2.
#include "conv_depthwise.h"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>
#include <vector>

#include "../src/scratch.h"
#include "../src/thread_pool.h"
#include "conv_gemm.h"
#include "parity/refrt/cpu_isa.h"

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

// ---- AVX-512: one channel at a time, straight from NCHW, any plane size ----
// The channel's plane is copied once into a zero-padded buffer split into `stride` column phases (phase p holds
// the padded columns p, p + stride, ...), so that every tap of every output row is a run of contiguous loads:
// 16 outputs per vector, one broadcast weight per tap for several rows. No channel interleave and no de-interleave.
// MobileNetV3-small at 1 thread (best of 4 profiles, amx host): 240-channel 5x5 on 14x14 94 -> 74 us (AVX2 path
// before), 72-channel 3x3 stride 2 on 56x56 156 -> 88 us and 88-channel 3x3 on 28x28 79 -> 54 us (conv_direct
// before); on 7-wide rows the AVX2 path stays faster (conv.cc picks).
const bool kAvx512 = isa_allows(IsaLevel::kAvx512);
constexpr int64_t kVec = 16, kMaxVecs = 8;

struct Phases {
  int64_t stride, rows, width;  // phase planes: `stride` of them, rows x width each
  float* at(int64_t phase, int64_t row) const { return data + (phase * rows + row) * width; }
  float* data;
};

// The padded plane's width per phase: every column a tap reads, and the last vector's lanes past the row (vectors of
// `vec` outputs).
int64_t phase_width(const nn::WindowGeometry& g, int64_t wp, int64_t vec) {
  const int64_t sw = g.stride[1], vectors = (g.out[1] + vec - 1) / vec;
  return std::max((wp + sw - 1) / sw, vectors * vec + (g.kernel[1] - 1) * g.dilation[1] / sw + 1);
}

// The columns [w, iw) of one input row into the phases, one at a time, the phase and its index carried along (no
// division per column).
void fill_columns(const float* src, int64_t w, int64_t iw, int64_t pl, int64_t row, const Phases& ph) {
  int64_t phase = (w + pl) % ph.stride, index = (w + pl) / ph.stride;
  for (; w < iw; ++w) {
    ph.at(phase, row)[index] = src[w];
    if (++phase == ph.stride) phase = 0, ++index;
  }
}

// The first n lanes of 16 (none for n <= 0, all for n >= 16).
inline __mmask16 lanes(int64_t n) {
  return n <= 0 ? 0 : n >= kVec ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << n) - 1);
}

__attribute__((target("avx512f"))) void fill_phases(const nn::WindowGeometry& g, const float* x, const Phases& ph) {
  const int64_t ih = g.in[0], iw = g.in[1], pt = g.pad_begin[0], pl = g.pad_begin[1], sw = ph.stride;
  std::memset(ph.data, 0, static_cast<size_t>(sw * ph.rows * ph.width) * sizeof(float));
  for (int64_t h = 0; h < ih; ++h) {
    const float* src = x + h * iw;
    if (sw == 1) {
      std::memcpy(ph.at(0, h + pt) + pl, src, static_cast<size_t>(iw) * sizeof(float));
      continue;
    }
    int64_t w = 0;
    if (sw == 2) {  // 32 inputs -> 16 even and 16 odd columns per step
      const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
      const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
      float* to_even = ph.at(pl % 2, h + pt) + pl / 2;             // input column w (even) is padded column w + pl
      float* to_odd = ph.at((pl + 1) % 2, h + pt) + (pl + 1) / 2;  // w odd: (w - 1) / 2 past this
      for (; w < iw; w += 2 * kVec) {  // the last step masked: its loads and stores stop at the row's end
        const int64_t left = std::min<int64_t>(iw - w, 2 * kVec);
        const __mmask16 lo = lanes(left), hi = lanes(left - kVec);
        const __m512 a = _mm512_maskz_loadu_ps(lo, src + w), b = _mm512_maskz_loadu_ps(hi, src + w + kVec);
        _mm512_mask_storeu_ps(to_even + w / 2, lanes((left + 1) / 2), _mm512_permutex2var_ps(a, even, b));
        _mm512_mask_storeu_ps(to_odd + w / 2, lanes(left / 2), _mm512_permutex2var_ps(a, odd, b));
      }
    }
    fill_columns(src, w, iw, pl, h + pt, ph);
  }
}

// Where each tap of output row 0, column 0 reads in the phase buffer (row r reads r * stride rows further down).
std::vector<int64_t> tap_offsets(const nn::WindowGeometry& g, const Phases& ph) {
  std::vector<int64_t> at;
  for (int64_t a = 0; a < g.kernel[0]; ++a)
    for (int64_t b = 0; b < g.kernel[1]; ++b) {
      const int64_t col = b * g.dilation[1];
      at.push_back(ph.at(col % ph.stride, a * g.dilation[0]) - ph.data + col / ph.stride);
    }
  return at;
}

// Output rows [r, r + R), vectors [0, V) of each from column j0: bias plus every tap, the last vector masked to the
// row's end. R rows at once so that a narrow row (one vector: 14 outputs) is not one chain of dependent
// multiply-adds (a 5x5 conv: 25 in a row, 4 cycles each); each tap's weight is broadcast once for the R rows.
template <int V, int R>
__attribute__((target("avx512f"))) void row_vectors(const nn::WindowGeometry& g, const Phases& ph, const int64_t* taps,
                                                    const float* w, float bias, int64_t r, int64_t j0, float* y) {
  const int64_t count = g.kernel[0] * g.kernel[1], step = g.stride[0] * ph.width;
  const float* row = ph.data + r * step + j0;
  __m512 acc[R][V];
#pragma GCC unroll 8
  for (int k = 0; k < R; ++k)
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v) acc[k][v] = _mm512_set1_ps(bias);
  for (int64_t t = 0; t < count; ++t) {
    const float* p = row + taps[t];
    const __m512 wv = _mm512_set1_ps(w[t]);
#pragma GCC unroll 8
    for (int k = 0; k < R; ++k)
#pragma GCC unroll 8
      for (int v = 0; v < V; ++v) acc[k][v] = _mm512_fmadd_ps(wv, _mm512_loadu_ps(p + k * step + v * kVec), acc[k][v]);
  }
  const int64_t ow = g.out[1];
#pragma GCC unroll 8
  for (int k = 0; k < R; ++k)
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v) {
      const int64_t j = j0 + v * kVec, left = ow - j;
      float* out = y + (r + k) * ow + j;
      if (left >= kVec)
        _mm512_storeu_ps(out, acc[k][v]);
      else
        _mm512_mask_storeu_ps(out, lanes(left), acc[k][v]);
    }
}

using RowFn = void (*)(const nn::WindowGeometry&, const Phases&, const int64_t*, const float*, float, int64_t, int64_t,
                       float*);
// Rows per call for V vectors a row: about 8 accumulators (16 for one vector a row).
constexpr int kRowsFor[kMaxVecs + 1] = {0, 8, 4, 2, 2, 1, 1, 1, 1};

template <int V, int... R>
constexpr std::array<RowFn, sizeof...(R)> rows_of(std::integer_sequence<int, R...>) {
  return {row_vectors<V, R + 1>...};
}
// kRows[V - 1][R - 1]: V vectors a row, R rows (calls take R <= kRowsFor[V]).
const std::array<std::array<RowFn, 8>, kMaxVecs> kRows = {
    rows_of<1>(std::make_integer_sequence<int, 8>()), rows_of<2>(std::make_integer_sequence<int, 8>()),
    rows_of<3>(std::make_integer_sequence<int, 8>()), rows_of<4>(std::make_integer_sequence<int, 8>()),
    rows_of<5>(std::make_integer_sequence<int, 8>()), rows_of<6>(std::make_integer_sequence<int, 8>()),
    rows_of<7>(std::make_integer_sequence<int, 8>()), rows_of<8>(std::make_integer_sequence<int, 8>())};

// ---- AVX2: the same phases, 8 outputs per vector (planes too large for the interleaved blocks above) ----
// Before, those went to conv_direct. MobileNetV3-small at 1 thread (AMD EPYC Zen 2, 300-run profiles): 16-channel 3x3
// stride 2 on 112x112 130 -> 78 us, 72-channel stride 2 on 56x56 177 -> 128 us, 88-channel 3x3 on 28x28 106 -> 85 us;
// the model 3.42 -> 3.27 ms. On 14x14 outputs the interleaved blocks stay faster (3.27 against 3.37 ms with them here).
constexpr int64_t kVec8 = 8;

// The first n of 8 lanes, as maskstore's mask.
__attribute__((target("avx2"))) inline __m256i lanes8(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(std::min<int64_t>(n, 8))),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

__attribute__((target("avx2"))) void fill_phases_avx2(const nn::WindowGeometry& g, const float* x, const Phases& ph) {
  const int64_t ih = g.in[0], iw = g.in[1], pt = g.pad_begin[0], pl = g.pad_begin[1];
  std::memset(ph.data, 0, static_cast<size_t>(ph.stride * ph.rows * ph.width) * sizeof(float));
  for (int64_t h = 0; h < ih; ++h) {
    const float* src = x + h * iw;
    if (ph.stride == 1) {
      std::memcpy(ph.at(0, h + pt) + pl, src, static_cast<size_t>(iw) * sizeof(float));
      continue;
    }
    int64_t w = 0;
    if (ph.stride == 2) {  // 16 inputs -> 8 even and 8 odd columns per step (in-lane shuffle, then the 64-bit halves)
      float* to_even = ph.at(pl % 2, h + pt) + pl / 2;
      float* to_odd = ph.at((pl + 1) % 2, h + pt) + (pl + 1) / 2;
      for (; w + 2 * kVec8 <= iw; w += 2 * kVec8) {
        const __m256 a = _mm256_loadu_ps(src + w), b = _mm256_loadu_ps(src + w + kVec8);
        const __m256 e = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)),
                     o = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
        _mm256_storeu_ps(to_even + w / 2, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xd8)));
        _mm256_storeu_ps(to_odd + w / 2, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(o), 0xd8)));
      }
    }
    fill_columns(src, w, iw, pl, h + pt, ph);
  }
}

// row_vectors with 8 outputs a vector: output rows [r, r + R), vectors [0, V) of each from column j0.
template <int V, int R>
__attribute__((target("avx2,fma"))) void row_vectors_avx2(const nn::WindowGeometry& g, const Phases& ph,
                                                          const int64_t* taps, const float* w, float bias, int64_t r,
                                                          int64_t j0, float* y) {
  const int64_t count = g.kernel[0] * g.kernel[1], step = g.stride[0] * ph.width;
  const float* row = ph.data + r * step + j0;
  __m256 acc[R][V];
#pragma GCC unroll 8
  for (int k = 0; k < R; ++k)
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v) acc[k][v] = _mm256_set1_ps(bias);
  for (int64_t t = 0; t < count; ++t) {
    const float* p = row + taps[t];
    const __m256 wv = _mm256_broadcast_ss(w + t);
#pragma GCC unroll 8
    for (int k = 0; k < R; ++k)
#pragma GCC unroll 8
      for (int v = 0; v < V; ++v) acc[k][v] = _mm256_fmadd_ps(wv, _mm256_loadu_ps(p + k * step + v * kVec8), acc[k][v]);
  }
  const int64_t ow = g.out[1];
#pragma GCC unroll 8
  for (int k = 0; k < R; ++k)
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v) {
      const int64_t j = j0 + v * kVec8, left = ow - j;
      float* out = y + (r + k) * ow + j;
      if (left >= kVec8)
        _mm256_storeu_ps(out, acc[k][v]);
      else
        _mm256_maskstore_ps(out, lanes8(left), acc[k][v]);
    }
}

template <int V, int... R>
constexpr std::array<RowFn, sizeof...(R)> rows_of_avx2(std::integer_sequence<int, R...>) {
  return {row_vectors_avx2<V, R + 1>...};
}
const std::array<std::array<RowFn, 8>, kMaxVecs> kRows8 = {
    rows_of_avx2<1>(std::make_integer_sequence<int, 8>()), rows_of_avx2<2>(std::make_integer_sequence<int, 8>()),
    rows_of_avx2<3>(std::make_integer_sequence<int, 8>()), rows_of_avx2<4>(std::make_integer_sequence<int, 8>()),
    rows_of_avx2<5>(std::make_integer_sequence<int, 8>()), rows_of_avx2<6>(std::make_integer_sequence<int, 8>()),
    rows_of_avx2<7>(std::make_integer_sequence<int, 8>()), rows_of_avx2<8>(std::make_integer_sequence<int, 8>())};

// One ISA's phase kernels: outputs per vector, the phase fill and the row functions.
struct PhaseKernels {
  int64_t vec;
  void (*fill)(const nn::WindowGeometry&, const float*, const Phases&);
  const std::array<std::array<RowFn, 8>, kMaxVecs>* rows;
};
struct Planes {
  const float *x, *w, *b, *z;
  float* y;
};

void run_phases(const KernelIO& io, const nn::WindowGeometry& g, int64_t n, int64_t c, const Planes& pl,
                const std::vector<ActStep>& acts, const PhaseKernels& k) {
  const int64_t hp = g.in[0] + g.pad_begin[0] + g.pad_end[0], wp = g.in[1] + g.pad_begin[1] + g.pad_end[1];
  const int64_t sw = g.stride[1], width = phase_width(g, wp, k.vec), taps = g.kernel[0] * g.kernel[1];
  const int64_t in_size = g.in[0] * g.in[1], out_size = g.out_size(), vectors = (g.out[1] + k.vec - 1) / k.vec;
  // About 2k multiply-adds per grain on MobileNet's smallest planes (7x7, 5x5 taps: 175 vector FMAs a channel).
  const int64_t grain = std::max<int64_t>(1, 2048 / std::max<int64_t>(1, g.out[0] * vectors * taps));
  parallel_for(io, n * c, grain, [&](int64_t u0, int64_t u1) {
    const Phases ph{sw, hp, width, scratch<float>(static_cast<size_t>(sw * hp * width), ScratchSlot::kConvPhases)};
    const std::vector<int64_t> at = tap_offsets(g, ph);
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t ch = u % c;
      k.fill(g, pl.x + u * in_size, ph);
      float* y = pl.y + u * out_size;
      const float* w = pl.w + ch * taps;
      const float bias = pl.b ? pl.b[ch] : 0.0f;
      for (int64_t v0 = 0; v0 < vectors; v0 += kMaxVecs) {
        const int64_t v = std::min(kMaxVecs, vectors - v0);
        for (int64_t r = 0; r < g.out[0];) {
          const int64_t rows = std::min<int64_t>(kRowsFor[v], g.out[0] - r);
          (*k.rows)[static_cast<size_t>(v - 1)][static_cast<size_t>(rows - 1)](g, ph, at.data(), w, bias, r, v0 * k.vec,
                                                                               y);
          r += rows;
        }
      }
      if (pl.z) {
        const float* z = pl.z + u * out_size;
        for (int64_t p = 0; p < out_size; ++p) y[p] += z[p];
      }
      apply_activations(acts, y, out_size);
    }
  });
}

}  // namespace

bool applies_avx512(const nn::WindowGeometry& g, int64_t c, int64_t m, int64_t group) {
  return kAvx512 && g.rank() == 2 && group == c && m == c && g.out_size() > 0 && g.kernel[0] * g.kernel[1] > 1;
}

void run_avx512(const KernelIO& io, const nn::WindowGeometry& g, int64_t n, int64_t c, const float* px, const float* pw,
                const float* pb, const float* pz, float* py, const std::vector<ActStep>& acts) {
  run_phases(io, g, n, c, {px, pw, pb, pz, py}, acts, {kVec, fill_phases, &kRows});
}

bool applies_avx2_phases(const nn::WindowGeometry& g, int64_t c, int64_t m, int64_t group) {
  return isa_allows(IsaLevel::kAvx2) && g.rank() == 2 && group == c && m == c && g.out_size() > 0 &&
         g.kernel[0] * g.kernel[1] > 1;
}

void run_avx2_phases(const KernelIO& io, const nn::WindowGeometry& g, int64_t n, int64_t c, const float* px,
                     const float* pw, const float* pb, const float* pz, float* py, const std::vector<ActStep>& acts) {
  run_phases(io, g, n, c, {px, pw, pb, pz, py}, acts, {kVec8, fill_phases_avx2, &kRows8});
}

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
