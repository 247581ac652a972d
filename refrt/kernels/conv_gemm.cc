// conv_gemm.h: a 6 x 16 AVX2+FMA register tile (12 accumulators, 2 vectors of B, 1 broadcast of A:
// 15 of the 16 ymm registers), blocked BLIS-style: k in blocks of kKC (one panel of B, kKC x 16
// floats = 16 KiB, stays in L1 while the tiles of a block of kMC rows of A, from L2, pass over it).
// Own code, written for refrt; compiled for AVX2+FMA by function attribute and called only when
// the ISA level (cpu_isa.h) allows avx2 (not target_clones: it picked the baseline on this AMD CPU).
#include "conv_gemm.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "parity/refrt/cpu_isa.h"

namespace parity::refrt::conv_gemm {
namespace {

constexpr int64_t kKCMax = 512, kMaxDotTail = 3;
constexpr int64_t kMR = 6, kKC = 256, kMC = 120, kFewPanels = 8;

// -1 for the first n of 16 lanes, then 0: loadu(kMaskSource + 16 - n) and + 8 of that.
alignas(64) const int32_t kMaskSource[32] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                             0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0};

// How a tile is stored: added to c's values (k blocks after the first), and on the last k block the
// epilogue (pointers at the tile's first row / element).
struct Out {
  bool accumulate = false;
  const float* bias = nullptr;
  const float* add = nullptr;
  int64_t ldz = 0;
  bool relu = false;
  Out at(int64_t i, int64_t j) const {  // the same for the tile at row i, column j
    Out o = *this;
    if (bias) o.bias = bias + i;
    if (add) o.add = add + i * ldz + j;
    return o;
  }
};

// c[MR rows, nr <= 16 columns] (+)= a[MR rows, kc] (leading dim lda) times one packed panel bp [kc, 16],
// then the epilogue in registers: + bias[row], + add, max(0, .) (the order of the unfused epilogue).
// kDirect (gemm_direct): row k of the panel is the 16 floats at bp + off[k] instead of bp + 16 k.
template <int MR, bool kDirect = false>
__attribute__((target("avx2,fma"), always_inline)) inline void tile(int64_t kc, const float* __restrict a, int64_t lda,
                                                                    const float* __restrict bp, float* __restrict c,
                                                                    int64_t ldc, int64_t nr, const Out& o,
                                                                    const int64_t* __restrict off = nullptr) {
  __m256 lo[MR], hi[MR];
#pragma GCC unroll 6
  for (int i = 0; i < MR; ++i) {
    lo[i] = hi[i] = _mm256_setzero_ps();
    // The tile's rows of C (both lines where a row's 16 floats straddle two), asked for now and written at the end:
    // a store missing a cold line of C waited on it (MobileNetV3-small 3.31 -> 3.20 ms at one thread, 2.83 -> 2.69 at
    // two; AMD EPYC Zen 2). A prefetch past the end of C (a partial panel) does not fault.
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(c + i * ldc) + (kNR - 1) * sizeof(float)),
                 _MM_HINT_T0);
  }
  for (int64_t k = 0; k < kc; ++k) {
    const float* bk = kDirect ? bp + off[k] : bp + 16 * k;
    const __m256 b0 = _mm256_loadu_ps(bk), b1 = _mm256_loadu_ps(bk + 8);
#pragma GCC unroll 6
    for (int i = 0; i < MR; ++i) {
      const __m256 av = _mm256_broadcast_ss(a + i * lda + k);
      lo[i] = _mm256_fmadd_ps(av, b0, lo[i]);
      hi[i] = _mm256_fmadd_ps(av, b1, hi[i]);
    }
  }
  const __m256 zero = _mm256_setzero_ps();
  if (nr == kNR) {
#pragma GCC unroll 6
    for (int i = 0; i < MR; ++i) {
      float* ci = c + i * ldc;
      if (o.accumulate) {
        lo[i] = _mm256_add_ps(lo[i], _mm256_loadu_ps(ci));
        hi[i] = _mm256_add_ps(hi[i], _mm256_loadu_ps(ci + 8));
      }
      if (o.bias) {
        const __m256 bv = _mm256_broadcast_ss(o.bias + i);
        lo[i] = _mm256_add_ps(lo[i], bv);
        hi[i] = _mm256_add_ps(hi[i], bv);
      }
      if (o.add) {
        lo[i] = _mm256_add_ps(lo[i], _mm256_loadu_ps(o.add + i * o.ldz));
        hi[i] = _mm256_add_ps(hi[i], _mm256_loadu_ps(o.add + i * o.ldz + 8));
      }
      if (o.relu) {  // max(0, x): x itself when x is NaN, as the scalar x < 0 ? 0 : x
        lo[i] = _mm256_max_ps(zero, lo[i]);
        hi[i] = _mm256_max_ps(zero, hi[i]);
      }
      _mm256_storeu_ps(ci, lo[i]);
      _mm256_storeu_ps(ci + 8, hi[i]);
    }
    return;
  }
  const __m256i m0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kMaskSource + kNR - nr));
  const __m256i m1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kMaskSource + kNR - nr + 8));
#pragma GCC unroll 6
  for (int i = 0; i < MR; ++i) {
    float* ci = c + i * ldc;
    if (o.accumulate) {  // masked loads never touch the lanes past nr (they may be past the buffer)
      lo[i] = _mm256_add_ps(lo[i], _mm256_maskload_ps(ci, m0));
      hi[i] = _mm256_add_ps(hi[i], _mm256_maskload_ps(ci + 8, m1));
    }
    if (o.bias) {
      const __m256 bv = _mm256_broadcast_ss(o.bias + i);
      lo[i] = _mm256_add_ps(lo[i], bv);
      hi[i] = _mm256_add_ps(hi[i], bv);
    }
    if (o.add) {
      lo[i] = _mm256_add_ps(lo[i], _mm256_maskload_ps(o.add + i * o.ldz, m0));
      hi[i] = _mm256_add_ps(hi[i], _mm256_maskload_ps(o.add + i * o.ldz + 8, m1));
    }
    if (o.relu) {
      lo[i] = _mm256_max_ps(zero, lo[i]);
      hi[i] = _mm256_max_ps(zero, hi[i]);
    }
    _mm256_maskstore_ps(ci, m0, lo[i]);
    _mm256_maskstore_ps(ci + 8, m1, hi[i]);
  }
}

// sum of a[i] * b[i], i < n
__attribute__((target("avx2,fma"), always_inline)) inline float dot(const float* a, const float* b, int64_t n) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
  }
  for (; i + 8 <= n; i += 8) s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
  s0 = _mm256_add_ps(s0, s1);
  __m128 h = _mm_add_ps(_mm256_castps256_ps128(s0), _mm256_extractf128_ps(s0, 1));
  h = _mm_add_ps(h, _mm_movehl_ps(h, h));
  h = _mm_add_ss(h, _mm_movehdup_ps(h));
  float sum = _mm_cvtss_f32(h);
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

// Rows [i, i1) of c against panel p: 6-row tiles, then one tile of the remaining 1-5 rows.
template <bool kDirect = false>
__attribute__((target("avx2,fma"), always_inline)) inline void rows(int64_t i, int64_t i1, int64_t kc, const float* a,
                                                                    int64_t lda, const float* bp, float* c, int64_t ldc,
                                                                    int64_t nr, const Out& o,
                                                                    const int64_t* off = nullptr) {
  for (; i + kMR <= i1; i += kMR) tile<6, kDirect>(kc, a + i * lda, lda, bp, c + i * ldc, ldc, nr, o.at(i, 0), off);
  const float* ai = a + i * lda;
  float* ci = c + i * ldc;
  const Out oi = o.at(i, 0);
  switch (i1 - i) {
    case 5:
      tile<5, kDirect>(kc, ai, lda, bp, ci, ldc, nr, oi, off);
      break;
    case 4:
      tile<4, kDirect>(kc, ai, lda, bp, ci, ldc, nr, oi, off);
      break;
    case 3:
      tile<3, kDirect>(kc, ai, lda, bp, ci, ldc, nr, oi, off);
      break;
    case 2:
      tile<2, kDirect>(kc, ai, lda, bp, ci, ldc, nr, oi, off);
      break;
    case 1:
      tile<1, kDirect>(kc, ai, lda, bp, ci, ldc, nr, oi, off);
      break;
    default:
      break;
  }
}

// kDirect: pb is the base of gemm_direct's implicit B (row r of B at pb + off[r]), which takes the
// blocked path whatever its width (its users have wide planes); otherwise pb is packed panels.
template <bool kDirect>
__attribute__((target("avx2,fma"))) void gemm_avx2(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                                                   const float* pb, const int64_t* off, float* c, int64_t ldc,
                                                   const Epilogue& ep) {
  const int64_t panels = (n + kNR - 1) / kNR;
  // k in equal blocks of at most kKC (576 = 3 x 192, not 256 + 256 + 64: a short last block pays the
  // loads and stores of C for few products).
  const int64_t kblocks = (k + kKC - 1) / kKC, kstep = (k + kblocks - 1) / kblocks;
  for (int64_t k0 = 0; k0 < k; k0 += kstep) {
    const int64_t kc = std::min(kstep, k - k0);
    Out o;
    o.accumulate = k0 > 0;
    if (k0 + kc == k) {  // the last k block stores the finished values: the epilogue goes with it
      o.bias = ep.bias;
      o.add = ep.add;
      o.ldz = ep.ldz;
      o.relu = ep.relu;
    }
    if (!kDirect && panels <= kFewPanels) {
      // Few columns (pointwise convs on 7x7 / 14x14 planes, 3x3 on 7x7): B's kc rows (<= 128 KiB) stay
      // in L2, and each 6-row strip of A, read once from memory, is kept in L1 over every panel.
      // 1-3 columns past the last whole panel (a 7x7 plane is 3 x 16 + 1) are dot products of A's rows
      // with those columns (copied out contiguous), not a 16-wide tile that would be 15/16 padding.
      const int64_t full = n / kNR, tail = n - full * kNR;
      const bool dot_tail = tail > 0 && tail <= kMaxDotTail;
      alignas(32) float columns[kMaxDotTail][kKCMax];
      if (dot_tail) {
        const float* last = pb + full * kNR * k + k0 * kNR;
        for (int64_t r = 0; r < kc; ++r)
          for (int64_t q = 0; q < tail; ++q) columns[q][r] = last[r * kNR + q];
      }
      const int64_t tiled = dot_tail ? full : panels;
      for (int64_t i = 0; i < m; i += kMR) {
        const int64_t i1 = std::min(m, i + kMR);
        for (int64_t p = 0; p < tiled; ++p)
          rows(i, i1, kc, a + k0, lda, pb + p * kNR * k + k0 * kNR, c + p * kNR, ldc, std::min(kNR, n - p * kNR),
               o.at(0, p * kNR));
        if (dot_tail)
          for (int64_t r = i; r < i1; ++r)
            for (int64_t q = 0; q < tail; ++q) {
              const int64_t j = full * kNR + q;
              float& out = c[r * ldc + j];
              const float d = dot(a + r * lda + k0, columns[q], kc);
              float v = o.accumulate ? out + d : d;
              if (o.bias) v += o.bias[r];
              if (o.add) v += o.add[r * o.ldz + j];
              if (o.relu) v = v < 0.0f ? 0.0f : v;
              out = v;
            }
      }
      continue;
    }
    for (int64_t i0 = 0; i0 < m; i0 += kMC)  // a block of A's rows stays in L2, each panel of B in L1
      for (int64_t p = 0; p < panels; ++p)
        rows<kDirect>(i0, std::min(m, i0 + kMC), kc, a + k0, lda, kDirect ? pb + p * kNR : pb + p * kNR * k + k0 * kNR,
                      c + p * kNR, ldc, std::min(kNR, n - p * kNR), o.at(0, p * kNR), kDirect ? off + k0 : nullptr);
  }
}

const bool kAvx2Fma = isa_allows(IsaLevel::kAvx2);

}  // namespace

bool available() { return kAvx2Fma; }

namespace {
template <bool kZero>
__attribute__((target("avx2"))) void run_avx2(int64_t r, int64_t k, int64_t j0, int64_t j1, const float* src,
                                              float* packed) {
  float* row = packed + r * kNR;
  int64_t j = j0;
  for (; j < j1 && j % kNR != 0; ++j) row[j / kNR * kNR * k + j % kNR] = kZero ? 0.0f : src[j];  // up to a panel start
  for (; j + kNR <= j1; j += kNR) {  // whole panels: two vectors
    float* d = row + j / kNR * kNR * k;
    const __m256 v0 = kZero ? _mm256_setzero_ps() : _mm256_loadu_ps(src + j);
    const __m256 v1 = kZero ? _mm256_setzero_ps() : _mm256_loadu_ps(src + j + 8);
    _mm256_storeu_ps(d, v0);
    _mm256_storeu_ps(d + 8, v1);
  }
  for (; j < j1; ++j) row[j / kNR * kNR * k + j % kNR] = kZero ? 0.0f : src[j];
}
}  // namespace

__attribute__((target("avx2"))) void gather_stride2(float* dst, const float* src, int64_t n) {
  int64_t j = 0;
  // Reads src[2j .. 2j + 15] while j + 8 < n, i.e. never past src[2 (n - 1)].
  for (; j + 8 < n; j += 8) {
    const __m256 a = _mm256_loadu_ps(src + 2 * j), b = _mm256_loadu_ps(src + 2 * j + 8);
    // even lanes of a and b: (a0 a2 b0 b2 | a4 a6 b4 b6), then the 64-bit pairs into order
    const __m256 even = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
    _mm256_storeu_ps(dst + j, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(even), _MM_SHUFFLE(3, 1, 2, 0))));
  }
  for (; j < n; ++j) dst[j] = src[2 * j];
}

void pack_run(int64_t r, int64_t k, int64_t j0, int64_t j1, const float* src, float* packed) {
  run_avx2<false>(r, k, j0, j1, src, packed);
}
void zero_run(int64_t r, int64_t k, int64_t j0, int64_t j1, float* packed) {
  run_avx2<true>(r, k, j0, j1, nullptr, packed);
}

void pack_b(int64_t k, int64_t n, const float* b, int64_t ldb, float* packed) {
  for (int64_t r = 0; r < k; ++r) pack_row(r, k, n, b + r * ldb, packed);
}

void gemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* packed_b, float* c, int64_t ldc,
          const Epilogue& ep) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {  // an empty sum, then the epilogue
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float v = 0.0f;
        if (ep.bias) v += ep.bias[i];
        if (ep.add) v += ep.add[i * ep.ldz + j];
        if (ep.relu) v = v < 0.0f ? 0.0f : v;
        c[i * ldc + j] = v;
      }
    return;
  }
  gemm_avx2<false>(m, n, k, a, lda, packed_b, nullptr, c, ldc, ep);
}

void gemm_direct(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* base,
                 const int64_t* offsets, float* c, int64_t ldc, const Epilogue& epilogue) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  gemm_avx2<true>(m, n, k, a, lda, base, offsets, c, ldc, epilogue);
}

}  // namespace parity::refrt::conv_gemm
