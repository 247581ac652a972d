// Direct 2-D convolution (conv_direct.h). The zero-padded input plane of each channel is split into
// stride x stride phases (phase (p, q) holds padded rows p, p + s, ... and columns q, q + s, ...), so
// that for output (r, j) every tap (a, b) reads its phase at r * qw + j + a fixed offset: one tap is
// one multiply-add over the whole output plane, a contiguous run the compiler vectorises; blocks of
// outputs are summed in registers over all taps. Columns past each row's ow (up to qw) are computed
// and dropped.
#include "conv_direct.h"

#include <algorithm>

#include "../src/scratch.h"
#include "parity/refrt/cpu_isa.h"
#include "../src/thread_pool.h"

namespace parity::refrt::conv_direct {
namespace {

// acc[o * span + j] = sum over taps t of w[o * ntaps + t] * src[off[t] + j], for the `nout` output
// channels o that read the same input channels and j in [0, span). Blocks of four 32-byte vectors are
// summed in registers over all taps (GCC vector types: ymm registers in the AVX2 build, pairs of xmm
// in the baseline one), so each tap costs one load and one multiply-add per vector; the output
// channels loop inside the block loop, so the input block they all read stays in L1.
template <typename T>
[[gnu::always_inline]] inline void taps_body(T* __restrict acc, int64_t nout, const T* __restrict src,
                                             const int64_t* __restrict off, const T* __restrict w, int64_t ntaps,
                                             int64_t span) {
  typedef T V __attribute__((vector_size(32)));
  constexpr int64_t kLanes = 32 / sizeof(T), kBlock = 4 * kLanes;
  int64_t j0 = 0;
  for (; j0 + kBlock <= span; j0 += kBlock)
    for (int64_t o = 0; o < nout; ++o) {
      const T* wo = w + o * ntaps;
      V r0 = {}, r1 = {}, r2 = {}, r3 = {};
      for (int64_t t = 0; t < ntaps; ++t) {
        const V wv = V{} + wo[t];
        const T* s = src + off[t] + j0;
        V s0, s1, s2, s3;
        __builtin_memcpy(&s0, s, sizeof(V));
        __builtin_memcpy(&s1, s + kLanes, sizeof(V));
        __builtin_memcpy(&s2, s + 2 * kLanes, sizeof(V));
        __builtin_memcpy(&s3, s + 3 * kLanes, sizeof(V));
        r0 += wv * s0;
        r1 += wv * s1;
        r2 += wv * s2;
        r3 += wv * s3;
      }
      T* ao = acc + o * span + j0;
      __builtin_memcpy(ao, &r0, sizeof(V));
      __builtin_memcpy(ao + kLanes, &r1, sizeof(V));
      __builtin_memcpy(ao + 2 * kLanes, &r2, sizeof(V));
      __builtin_memcpy(ao + 3 * kLanes, &r3, sizeof(V));
    }
  for (int64_t o = 0; o < nout; ++o) {  // the rest: one vector at a time, then one by one
    const T* wo = w + o * ntaps;
    int64_t j = j0;
    for (; j + kLanes <= span; j += kLanes) {
      V r = {};
      for (int64_t t = 0; t < ntaps; ++t) {
        V sv;
        __builtin_memcpy(&sv, src + off[t] + j, sizeof(V));
        r += (V{} + wo[t]) * sv;
      }
      __builtin_memcpy(acc + o * span + j, &r, sizeof(V));
    }
    for (; j < span; ++j) {
      T sum = 0;
      for (int64_t t = 0; t < ntaps; ++t) sum += wo[t] * src[off[t] + j];
      acc[o * span + j] = sum;
    }
  }
}

// Built for AVX2+FMA and for the baseline, chosen once from the CPU's features (not its model name:
// target_clones("arch=haswell") picks the baseline on AMD CPUs that have every Haswell feature).
__attribute__((target("avx2,fma"))) void taps_avx2(float* acc, int64_t nout, const float* src, const int64_t* off,
                                                   const float* w, int64_t ntaps, int64_t span) {
  taps_body(acc, nout, src, off, w, ntaps, span);
}
void taps_base(float* acc, int64_t nout, const float* src, const int64_t* off, const float* w, int64_t ntaps,
               int64_t span) {
  taps_body(acc, nout, src, off, w, ntaps, span);
}
const bool kAvx2Fma = isa_allows(IsaLevel::kAvx2);

void taps(float* acc, int64_t nout, const float* src, const int64_t* off, const float* w, int64_t ntaps, int64_t span) {
  kAvx2Fma ? taps_avx2(acc, nout, src, off, w, ntaps, span) : taps_base(acc, nout, src, off, w, ntaps, span);
}
void taps(double* acc, int64_t nout, const double* src, const int64_t* off, const double* w, int64_t ntaps,
          int64_t span) {
  taps_body(acc, nout, src, off, w, ntaps, span);
}

struct Layout {
  int64_t s, qh, qw, span, phase_size, channel_size;
  bool direct;  // stride 1, no padding: the input plane itself is the only phase
};

Layout layout_of(const nn::WindowGeometry& g) {
  Layout l;
  const int64_t oh = g.out[0], ow = g.out[1];
  l.s = g.stride[0];
  l.direct = l.s == 1 && g.pad_begin[0] == 0 && g.pad_begin[1] == 0 && g.pad_end[0] == 0 && g.pad_end[1] == 0;
  l.qh = l.direct ? g.in[0] : oh + (g.kernel[0] - 1) * g.dilation[0] / l.s;
  l.qw = l.direct ? g.in[1] : ow + (g.kernel[1] - 1) * g.dilation[1] / l.s;
  l.span = (oh - 1) * l.qw + ow;
  l.phase_size = l.qh * l.qw;
  l.channel_size = l.s * l.s * l.phase_size;
  return l;
}

// dst[j] = src[2 * j] for j < n: the even columns of a row (a stride-2 conv's column phase). Two
// loads and a shuffle per 8 floats in the AVX2 build; scalar strided loads took half of a stride-2
// depthwise conv's time.
__attribute__((target("avx2"))) void gather_stride2_avx2(float* dst, const float* src, int64_t n) {
  typedef float V __attribute__((vector_size(32)));
  typedef int I __attribute__((vector_size(32)));
  int64_t j = 0;
  for (; j + 8 <= n && 2 * j + 16 <= 2 * n - 1; j += 8) {  // never reads past src[2 * (n - 1)]
    V a, b;
    __builtin_memcpy(&a, src + 2 * j, sizeof(V));
    __builtin_memcpy(&b, src + 2 * j + 8, sizeof(V));
#if defined(__clang__)  // clang spells GCC's vector shuffle differently
    const V even = __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14);
#else
    const V even = __builtin_shuffle(a, b, I{0, 2, 4, 6, 8, 10, 12, 14});
#endif
    __builtin_memcpy(dst + j, &even, sizeof(V));
  }
  for (; j < n; ++j) dst[j] = src[2 * j];
}
void gather_stride2(float* dst, const float* src, int64_t n) {
  if (kAvx2Fma) return gather_stride2_avx2(dst, src, n);
  for (int64_t j = 0; j < n; ++j) dst[j] = src[2 * j];
}
void gather_stride2(double* dst, const double* src, int64_t n) {
  for (int64_t j = 0; j < n; ++j) dst[j] = src[2 * j];
}

// The s * s phases of one zero-padded input plane x [ih, iw] into dst.
template <typename T>
void fill_phases(const nn::WindowGeometry& g, const Layout& l, const T* x, T* dst) {
  const int64_t ih = g.in[0], iw = g.in[1], ph = g.pad_begin[0], pwd = g.pad_begin[1], s = l.s;
  for (int64_t p = 0; p < s; ++p)
    for (int64_t q = 0; q < s; ++q) {
      T* phase = dst + (p * s + q) * l.phase_size;
      // Entry j of a phase row: input column j * s + q - pwd, inside the row for j in [jl, jh).
      const int64_t off = q - pwd;
      const int64_t jl = std::min(l.qw, off >= 0 ? 0 : (-off + s - 1) / s);
      const int64_t jh = std::max(jl, std::min(l.qw, iw - off <= 0 ? 0 : (iw - off - 1) / s + 1));
      for (int64_t i = 0; i < l.qh; ++i) {
        T* row = phase + i * l.qw;
        const int64_t in_row = i * s + p - ph;
        if (in_row < 0 || in_row >= ih) {
          std::fill(row, row + l.qw, T(0));
          continue;
        }
        const T* src = x + in_row * iw;
        std::fill(row, row + jl, T(0));
        if (s == 1)
          std::copy(src + jl + off, src + jh + off, row + jl);
        else if (s == 2)
          gather_stride2(row + jl, src + jl * 2 + off, jh - jl);
        else
          for (int64_t j = jl; j < jh; ++j) row[j] = src[j * s + off];
        std::fill(row + jh, row + l.qw, T(0));
      }
    }
}

}  // namespace

bool applies(const nn::WindowGeometry& g, int64_t channels_per_group) {
  if (g.rank() != 2 || g.stride[0] != g.stride[1] || g.out_size() == 0) return false;
  const int64_t area = g.kernel[0] * g.kernel[1];
  return area > 1 && channels_per_group * area <= kMaxTaps;
}

template <typename T>
void run(const KernelIO& io, const nn::WindowGeometry& g, int64_t n, int64_t c, int64_t m, int64_t group, const T* px,
         const T* pw, const T* pb, const T* pz, T* py, const std::vector<ActStep>& acts) {
  const Layout l = layout_of(g);
  const int64_t cg = c / group, mg = m / group, kh = g.kernel[0], kw = g.kernel[1], s = l.s;
  const int64_t oh = g.out[0], ow = g.out[1], in_size = g.in_size(), out_size = oh * ow, ntaps = cg * kh * kw;
  // Tap t = (ci, a, b) reads its channel's phase (a*dh % s, b*dw % s) at a fixed offset.
  std::vector<int64_t> off(static_cast<size_t>(ntaps));
  for (int64_t ci = 0, t = 0; ci < cg; ++ci)
    for (int64_t a = 0; a < kh; ++a)
      for (int64_t b = 0; b < kw; ++b, ++t) {
        const int64_t ra = a * g.dilation[0], cb = b * g.dilation[1];
        off[static_cast<size_t>(t)] =
            (l.direct ? ci * in_size : ci * l.channel_size + ((ra % s) * s + cb % s) * l.phase_size) + (ra / s) * l.qw +
            cb / s;
      }
  // Work units: (image, group, block of output channels), enough of them for every thread.
  const int64_t threads = io.pool ? io.pool->size() : 1;
  const int64_t blocks = std::min(mg, std::max<int64_t>(1, (threads + n * group - 1) / (n * group)));
  parallel_for(io, n * group * blocks, 1, [&](int64_t u0, int64_t u1) {
    T* phases = l.direct ? nullptr : scratch<T>(static_cast<size_t>(cg * l.channel_size), ScratchSlot::kConvPhases);
    int64_t filled = -1;  // the (image, group) whose phases are in `phases`
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t ig = u / blocks, blk = u % blocks, i = ig / group, gi = ig % group;
      const T* xg = px + (i * c + gi * cg) * in_size;
      const T* src = xg;
      if (!l.direct) {
        if (filled != ig)
          for (int64_t ci = 0; ci < cg; ++ci) fill_phases(g, l, xg + ci * in_size, phases + ci * l.channel_size);
        filled = ig;
        src = phases;
      }
      const int64_t o0 = gi * mg + mg * blk / blocks, o1 = gi * mg + mg * (blk + 1) / blocks;
      T* acc = scratch<T>(static_cast<size_t>((o1 - o0) * l.span), ScratchSlot::kConvAccumulator);
      taps(acc, o1 - o0, src, off.data(), pw + o0 * ntaps, ntaps, l.span);
      for (int64_t o = o0; o < o1; ++o) {
        T* y = py + (i * m + o) * out_size;
        const T* z = pz ? pz + (i * m + o) * out_size : nullptr;
        const T bias = pb ? pb[o] : T(0);
        for (int64_t r = 0; r < oh; ++r) {
          const T* a = acc + (o - o0) * l.span + r * l.qw;
          T* dst = y + r * ow;
          for (int64_t j = 0; j < ow; ++j) dst[j] = a[j] + bias;
          if (z)
            for (int64_t j = 0; j < ow; ++j) dst[j] += z[r * ow + j];
        }
        apply_activations(acts, y, out_size);
      }
    }
  });
}

template void run<float>(const KernelIO&, const nn::WindowGeometry&, int64_t, int64_t, int64_t, int64_t, const float*,
                         const float*, const float*, const float*, float*, const std::vector<ActStep>&);
template void run<double>(const KernelIO&, const nn::WindowGeometry&, int64_t, int64_t, int64_t, int64_t, const double*,
                          const double*, const double*, const double*, double*, const std::vector<ActStep>&);

}  // namespace parity::refrt::conv_direct
