// Internal: the one row-major GEMM wrapper of refrt, used by MatMul, Gemm, Conv, ConvTranspose, Attention
// and the recurrent ops for products whose B is not a packed constant (matmul_dnnl.h has those).
// C = alpha * op(A) op(B) + beta * C with op = transpose when asked; leading dims in elements.
//
// float32 runs on oneDNN's sgemm, which picks its kernels from the CPU's feature bits; OpenBLAS picks
// from the CPU's model number and falls back to SSE3 kernels on a CPU newer than its table (Debian's
// 0.3.21 on an Emerald Rapids Xeon: 3-4x slower). OpenBLAS keeps float64, float32 below refrt's AVX2
// level (PARITY_REFRT_ISA=scalar), float32 on AVX2-only CPUs where its core has AVX2 kernels (measured
// faster there: dnnl_common.h, float_gemm_prefers_onednn) and PARITY_REFRT_SGEMM_DNNL=0. One-row and tiny
// products run on refrt's own GEMV (gemv.cc).
#pragma once
#include <algorithm>
#include <atomic>
#include <climits>
#include <string_view>
#include <type_traits>
#include <vector>

#include "backend_probe.h"
#include "kernel.h"
#include "thread_pool.h"

namespace parity::refrt {

// gemm.cc: the float32 product on oneDNN (one thread: the caller's; refrt's pool splits the work).
bool sgemm_on_onednn();
void onednn_sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                  const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
// gemm.cc: the BLAS calls (row-major cblas), each counted by backend_probe.
void openblas_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                   const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
void openblas_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
                   const double* b, int64_t ldb, double beta, double* c, int64_t ldc);
void openblas_gemv(bool trans, int64_t rows, int64_t cols, float alpha, const float* a, int64_t lda, const float* x,
                   int64_t incx, float beta, float* y, int64_t incy);
void openblas_gemv(bool trans, int64_t rows, int64_t cols, double alpha, const double* a, int64_t lda, const double* x,
                   int64_t incx, double beta, double* y, int64_t incy);
// gemv.cc: the float32 GEMV of decode steps (AVX2 + FMA; memory-bound, so no library's kernels needed):
// y = alpha * op(A) x + beta * y with A [rows, cols] (leading dim lda), x and y contiguous.
bool refrt_sgemv_available();
void refrt_sgemv(bool trans, int64_t rows, int64_t cols, float alpha, const float* a, int64_t lda, const float* x,
                 float beta, float* y);
// The same on a float16 / bfloat16 A (uint16 bit patterns), widened in registers: the float32 path's sums in its
// order, so the result equals refrt_sgemv on A widened first, without the widened copy (a half KV cache read by a
// decode step's attention). Available at refrt's AVX2 level (float16 also needs F16C).
bool refrt_half_gemv_available(DType a_type);
void refrt_half_gemv(DType a_type, bool trans, int64_t rows, int64_t cols, float alpha, const uint16_t* a, int64_t lda,
                     const float* x, float beta, float* y);

// The profile's name of a set of backends that ran a node's products, joined by " + " in a fixed order:
// "onednn sgemm (avx512_core_amx)", "openblas dgemm (core Haswell)", "refrt gemv (avx2) + onednn sgemm (avx2)".
// An empty set (nothing ran) is the empty name (the profile then says "refrt").
std::string_view backend_label(BackendSet set);
// io.impl = backend_label(set), for a kernel whose products were all in `set`.
inline void note_backends(const KernelIO& io, BackendSet set) { io.impl = backend_label(set); }

// cblas takes int sizes: larger matrices are refused rather than silently truncated.
inline void check_blas_dims(const NodeDef& node, int64_t m, int64_t n, int64_t k, int64_t lda = 0, int64_t ldb = 0,
                            int64_t ldc = 0) {
  if (std::max({m, n, k, lda, ldb, ldc}) > INT_MAX)
    node.fail("matrix dimensions " + std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n) +
                  " exceed the BLAS int range",
              ErrorKind::kUnsupported);
}

// Returns the backend that ran the product.
template <typename T>
Backend gemv(bool trans, int64_t rows, int64_t cols, T alpha, const T* a, int64_t lda, const T* x, int64_t incx, T beta,
             T* y, int64_t incy) {
  if constexpr (std::is_same_v<T, float>) {
    if (incx == 1 && incy == 1 && refrt_sgemv_available()) {
      refrt_sgemv(trans, rows, cols, alpha, a, lda, x, beta, y);
      return Backend::kRefrtGemv;
    }
  }
  openblas_gemv(trans, rows, cols, alpha, a, lda, x, incx, beta, y, incy);
  return std::is_same_v<T, float> ? Backend::kOpenblasSgemv : Backend::kOpenblasDgemv;
}

// float32 products this small take longer to hand to a library than to compute (oneDNN's sgemm: 2-6 us per
// call on the zoo block's 5x2x32 attention heads): they run as refrt GEMVs, one per row of C (or one for a
// single column).
inline constexpr int64_t kSmallGemm = int64_t{1} << 15;  // multiply-adds

// Sizes must fit in int (check_blas_dims, or the overload taking the node). Returns the backend that ran the
// product: the one record of this branch (labels are made from it).
template <typename T>
Backend gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b,
             int64_t ldb, T beta, T* c, int64_t ldc) {
  if (m == 0 || n == 0) return Backend::kNone;
  if (k == 0) {  // BLAS may leave C alone here; the product is empty: C = beta * C
    backend_probe::hit(Backend::kRefrtLoop);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == T(0) ? T(0) : beta * c[i * ldc + j];
    return Backend::kRefrtLoop;
  }
  if constexpr (std::is_same_v<T, float>) {
    if (m * n * k <= kSmallGemm && !ta && refrt_sgemv_available()) {
      if (n == 1 && (tb || ldb == 1) && ldc == 1) {  // one column: c = A b, a dot product per row of A
        refrt_sgemv(false, m, k, alpha, a, lda, b, beta, c);
        return Backend::kRefrtGemv;
      }
      for (int64_t i = 0; i < m; ++i)
        refrt_sgemv(!tb, tb ? n : k, tb ? k : n, alpha, b, ldb, a + i * lda, beta, c + i * ldc);
      return Backend::kRefrtGemv;
    }
    // A GEMV streams B once: refrt's own (gemv.cc) where it runs, not oneDNN's sgemm, which packs B first.
    const bool vector = (m == 1 && (ta ? lda : 1) == 1) || (n == 1 && (tb ? 1 : ldb) == 1 && ldc == 1);
    if (sgemm_on_onednn() && !(vector && refrt_sgemv_available())) {
      onednn_sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
      return Backend::kOnednnSgemm;
    }
  }
  if (m == 1)  // one row (decode, batch 1): c = op(B)^T a
    return gemv<T>(!tb, tb ? n : k, tb ? k : n, alpha, b, ldb, a, ta ? lda : 1, beta, c, 1);
  if (n == 1)  // one column (a 1x1 conv on a 1x1 plane, squeeze-excitation): c = op(A) b
    return gemv<T>(ta, ta ? k : m, ta ? m : k, alpha, a, lda, b, tb ? 1 : ldb, beta, c, ldc);
  openblas_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  return std::is_same_v<T, float> ? Backend::kOpenblasSgemm : Backend::kOpenblasDgemm;
}

// The same, checking the sizes against the BLAS int range first (fails naming the node).
template <typename T>
Backend gemm(const NodeDef& node, bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
             const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  check_blas_dims(node, m, n, k, lda, ldb, ldc);
  return gemm<T>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// The same GEMM split into column blocks over io's pool, one BLAS thread each (the session runs
// BLAS single-threaded when it has a pool: one set of threads for every kernel). Small products
// and runs without a pool make one call. Returns the backends its calls ran on (the caller's label:
// note_backends).
template <typename T>
BackendSet pool_gemm(const KernelIO& io, bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
                     int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  const int64_t threads = io.pool ? io.pool->size() : 1;
  std::atomic<BackendSet> ran{0};
  auto run = [&ran](Backend used) { ran.fetch_or(backend_bit(used), std::memory_order_relaxed); };
  if (threads > 1 && m == 1 && !tb && k >= 64 * threads && n * k >= (int64_t{1} << 16)) {
    // One row times a [k, n] matrix (decode): each thread streams a contiguous band of B's rows into
    // its own partial row, then the partial rows are added (column blocks would read every row of B
    // in pieces, which the prefetchers follow less well).
    std::vector<T> partial(static_cast<size_t>((threads - 1) * n));
    const int64_t inc = ta ? lda : 1;
    parallel_for(io, threads, 1, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t k0 = k * p / threads, k1 = k * (p + 1) / threads;
        run(gemv<T>(true, k1 - k0, n, alpha, b + k0 * ldb, ldb, a + k0 * inc, inc, p == 0 ? beta : T(0),
                    p == 0 ? c : partial.data() + (p - 1) * n, 1));
      }
    });
    for (int64_t p = 1; p < threads; ++p) {
      const T* part = partial.data() + (p - 1) * n;
      for (int64_t j = 0; j < n; ++j) c[j] += part[j];
    }
    return ran.load();
  }
  if (threads <= 1 || m * n * k < (int64_t{1} << 16) || n < 32)
    return backend_bit(gemm<T>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc));
  if (m >= 16 && m * n * k >= (int64_t{1} << 20) && blas_threads_enabled()) {
    // Opt-in (blas_threads_enabled): OpenBLAS's threads share each packed panel of B, where the
    // column blocks below repack all of A per thread (Zen 3, 2 threads, transformer linears alone:
    // 120-150 GFLOP/s against 65-135), but its spinning workers then slow the pool's next kernels.
    BlasThreads scope(static_cast<int>(threads));
    return backend_bit(gemm<T>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc));
  }
  const int64_t block = ((n + threads - 1) / threads + 15) / 16 * 16;
  parallel_for(io, (n + block - 1) / block, 1, [&](int64_t j0, int64_t j1) {
    for (int64_t j = j0; j < j1; ++j) {
      const int64_t c0 = j * block, nc = std::min(n, c0 + block) - c0;
      run(gemm<T>(ta, tb, m, nc, k, alpha, a, lda, tb ? b + c0 * ldb : b + c0, ldb, beta, c + c0, ldc));
    }
  });
  return ran.load();
}

}  // namespace parity::refrt
