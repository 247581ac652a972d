// gemm.h's refrt_sgemv: the float32 matrix-vector product of decode steps (one row of A), AVX2 + FMA; and
// refrt_half_gemv, the same arithmetic on a float16 / bfloat16 A widened in registers (a half KV cache).
//
// Why refrt's own: a GEMV streams the matrix once and is bound by memory, not arithmetic, so it needs no
// library's kernels, only a sequential stream; OpenBLAS's speed here depends on the core it guessed from
// the CPU's model number (its generic Prescott core: the LLaMA-style decode step 3.3 ms against 2.1 with
// its SkylakeX core, Intel Xeon with AVX-512, 1 thread), and oneDNN's packed-weight matmul reads B in its
// blocked layout at 2.4 ms. Sums are in float32 in a fixed order (no dependence on threads or CPU).
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "dispatch.h"
#include "gemm.h"
#include "scratch.h"
#include "parity/refrt/cpu_isa.h"

namespace parity::refrt {
namespace {

// How A's elements become float32: as they are, or widened from float16 / bfloat16 in registers (both exact). The
// kernels below are templates on this, so a half A is summed in exactly the float32 path's order.
struct Float32A {
  using E = float;
  __attribute__((target("avx2,fma,f16c"), always_inline)) static inline __m256 load8(const float* p) {
    return _mm256_loadu_ps(p);
  }
  static float at(const float* p) { return *p; }
};
struct BFloat16A {
  using E = uint16_t;
  __attribute__((target("avx2,fma,f16c"), always_inline)) static inline __m256 load8(const uint16_t* p) {
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
  }
  static float at(const uint16_t* p) { return bf16_to_float(*p); }
};
struct Float16A {
  using E = uint16_t;
  __attribute__((target("avx2,fma,f16c"), always_inline)) static inline __m256 load8(const uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static float at(const uint16_t* p) { return half_to_float(*p); }
};

// acc[0, cols) += sum_q s * x[q] * A[q, 0, cols) for the group's kRows rows of A, each read as a contiguous stream,
// summed into acc in row order.
template <typename L, int kRows>
__attribute__((target("avx2,fma,f16c"), always_inline)) inline void accumulate_group(int64_t cols, float s,
                                                                                     const typename L::E* a,
                                                                                     int64_t lda, const float* x,
                                                                                     float* acc) {
  float sq[kRows];
  __m256 v[kRows];
  const typename L::E* r[kRows];
#pragma GCC unroll 8
  for (int q = 0; q < kRows; ++q) {
    sq[q] = s * x[q];
    v[q] = _mm256_set1_ps(sq[q]);
    r[q] = a + q * lda;
  }
  int64_t j = 0;
  for (; j + 8 <= cols; j += 8) {
    __m256 sum = _mm256_loadu_ps(acc + j);
#pragma GCC unroll 8
    for (int q = 0; q < kRows; ++q) sum = _mm256_fmadd_ps(v[q], L::load8(r[q] + j), sum);
    _mm256_storeu_ps(acc + j, sum);
  }
  for (; j < cols; ++j) {
    float sum = acc[j];
    for (int q = 0; q < kRows; ++q) sum = std::fma(sq[q], L::at(r[q] + j), sum);
    acc[j] = sum;
  }
}

// acc[0, cols) += sum_i s * x[i] * A[i, 0, cols): eight rows of A at a time (then four, then one), summed in row order
// whatever the grouping (so it does not change a bit); acc stays in cache. Eight streams keep more of the memory's
// requests in flight than four: a decode step's 1-3 MB weight matrices at 16.7 against 14.4 GB/s, 46 MB ones at 24
// against 23 (AMD EPYC Zen 2, one thread).
template <typename L>
__attribute__((target("avx2,fma,f16c"))) void accumulate_rows(int64_t rows, int64_t cols, float s,
                                                              const typename L::E* a, int64_t lda, const float* x,
                                                              float* acc) {
  int64_t i = 0;
  for (; i + 8 <= rows; i += 8) accumulate_group<L, 8>(cols, s, a + i * lda, lda, x + i, acc);
  for (; i + 4 <= rows; i += 4) accumulate_group<L, 4>(cols, s, a + i * lda, lda, x + i, acc);
  for (; i < rows; ++i) accumulate_group<L, 1>(cols, s, a + i * lda, lda, x + i, acc);
}

// y[0, cols) = alpha * sum_i x[i] * A[i, 0, cols) + beta * y. The sum starts from zero, as BLAS's does, and
// beta * y is added once at the end: summed into a y that holds a bias (Gemm's C with beta 1), each small
// product would be rounded at the bias's magnitude (a spatial transformer's theta came out ~20 ulp off).
template <typename L>
void rows_axpy(int64_t rows, int64_t cols, float alpha, const typename L::E* a, int64_t lda, const float* x, float beta,
               float* y) {
  if (beta == 0.0f) {
    std::fill(y, y + cols, 0.0f);
    return accumulate_rows<L>(rows, cols, alpha, a, lda, x, y);
  }
  float* acc = scratch<float>(static_cast<size_t>(cols), ScratchSlot::kGemv);
  std::fill(acc, acc + cols, 0.0f);
  accumulate_rows<L>(rows, cols, alpha, a, lda, x, acc);
  for (int64_t j = 0; j < cols; ++j) y[j] = acc[j] + (beta == 1.0f ? y[j] : beta * y[j]);
}

__attribute__((target("avx2,fma,f16c"))) inline float hsum(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_movehdup_ps(t)));
}

// y[i] = alpha * dot(A[i, 0, cols), x) + beta * y[i] for i < rows: four rows at a time against one x.
template <typename L>
__attribute__((target("avx2,fma,f16c"))) void rows_dot(int64_t rows, int64_t cols, float alpha, const typename L::E* a,
                                                       int64_t lda, const float* x, float beta, float* y) {
  int64_t i = 0;
  auto finish = [&](int64_t r, float dot) { y[r] = alpha * dot + (beta == 0.0f ? 0.0f : beta * y[r]); };
  for (; i + 4 <= rows; i += 4) {
    const typename L::E *r0 = a + i * lda, *r1 = r0 + lda, *r2 = r1 + lda, *r3 = r2 + lda;
    __m256 c0 = _mm256_setzero_ps(), c1 = c0, c2 = c0, c3 = c0;
    int64_t j = 0;
    for (; j + 8 <= cols; j += 8) {
      const __m256 xv = _mm256_loadu_ps(x + j);
      c0 = _mm256_fmadd_ps(L::load8(r0 + j), xv, c0);
      c1 = _mm256_fmadd_ps(L::load8(r1 + j), xv, c1);
      c2 = _mm256_fmadd_ps(L::load8(r2 + j), xv, c2);
      c3 = _mm256_fmadd_ps(L::load8(r3 + j), xv, c3);
    }
    float d0 = hsum(c0), d1 = hsum(c1), d2 = hsum(c2), d3 = hsum(c3);
    for (; j < cols; ++j) {
      d0 = std::fma(L::at(r0 + j), x[j], d0);
      d1 = std::fma(L::at(r1 + j), x[j], d1);
      d2 = std::fma(L::at(r2 + j), x[j], d2);
      d3 = std::fma(L::at(r3 + j), x[j], d3);
    }
    finish(i, d0);
    finish(i + 1, d1);
    finish(i + 2, d2);
    finish(i + 3, d3);
  }
  for (; i < rows; ++i) {
    const typename L::E* r = a + i * lda;
    __m256 c = _mm256_setzero_ps();
    int64_t j = 0;
    for (; j + 8 <= cols; j += 8) c = _mm256_fmadd_ps(L::load8(r + j), _mm256_loadu_ps(x + j), c);
    float d = hsum(c);
    for (; j < cols; ++j) d = std::fma(L::at(r + j), x[j], d);
    finish(i, d);
  }
}

}  // namespace

bool refrt_sgemv_available() {
  static const bool on = isa_allows(IsaLevel::kAvx2);
  return on;
}

void refrt_sgemv(bool trans, int64_t rows, int64_t cols, float alpha, const float* a, int64_t lda, const float* x,
                 float beta, float* y) {
  backend_probe::hit(Backend::kRefrtGemv);
  if (trans)
    rows_axpy<Float32A>(rows, cols, alpha, a, lda, x, beta, y);
  else
    rows_dot<Float32A>(rows, cols, alpha, a, lda, x, beta, y);
}

bool refrt_half_gemv_available(DType a_type) {
  if (!refrt_sgemv_available()) return false;
  return a_type == DType::kBFloat16 ||
         (a_type == DType::kFloat16 && std::string_view(half_conversion_path()) == "f16c");
}

void refrt_half_gemv(DType a_type, bool trans, int64_t rows, int64_t cols, float alpha, const uint16_t* a, int64_t lda,
                     const float* x, float beta, float* y) {
  backend_probe::hit(Backend::kRefrtHalfGemv);
  const bool bf16 = a_type == DType::kBFloat16;
  if (trans)
    bf16 ? rows_axpy<BFloat16A>(rows, cols, alpha, a, lda, x, beta, y)
         : rows_axpy<Float16A>(rows, cols, alpha, a, lda, x, beta, y);
  else
    bf16 ? rows_dot<BFloat16A>(rows, cols, alpha, a, lda, x, beta, y)
         : rows_dot<Float16A>(rows, cols, alpha, a, lda, x, beta, y);
}

}  // namespace parity::refrt
