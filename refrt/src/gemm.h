// Internal: row-major GEMM on OpenBLAS's cblas, shared by MatMul, Gemm and Conv.
// C = alpha * op(A) op(B) + beta * C with op = transpose when asked; leading dims in elements.
#pragma once
#include <cblas.h>

#include <algorithm>
#include <climits>
#include <type_traits>

#include "kernel.h"
#include "thread_pool.h"

namespace parity::refrt {

// cblas takes int sizes: larger matrices are refused rather than silently truncated.
inline void check_blas_dims(const NodeDef& node, int64_t m, int64_t n, int64_t k) {
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX)
    node.fail("matrix dimensions " + std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n) +
                  " exceed the BLAS int range",
              ErrorKind::kUnsupported);
}

template <typename T>
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b,
          int64_t ldb, T beta, T* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (m == 1 && !ta) {  // one row (decode, batch 1): y = op(B)^T a as a GEMV, which streams B once
    const auto trans = tb ? CblasNoTrans : CblasTrans;
    const int rows = static_cast<int>(tb ? n : k), cols = static_cast<int>(tb ? k : n);
    if constexpr (std::is_same_v<T, float>)
      cblas_sgemv(CblasRowMajor, trans, rows, cols, alpha, b, static_cast<int>(ldb), a, 1, beta, c, 1);
    else
      cblas_dgemv(CblasRowMajor, trans, rows, cols, alpha, b, static_cast<int>(ldb), a, 1, beta, c, 1);
    return;
  }
  const auto transa = ta ? CblasTrans : CblasNoTrans, transb = tb ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, transa, transb, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a,
                static_cast<int>(lda), b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
  else
    cblas_dgemm(CblasRowMajor, transa, transb, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a,
                static_cast<int>(lda), b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}

// The same GEMM split into column blocks over io's pool, one BLAS thread each (the session runs
// BLAS single-threaded when it has a pool: one set of threads for every kernel). Small products
// and runs without a pool make one call.
template <typename T>
void pool_gemm(const KernelIO& io, bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
               const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  const int64_t threads = io.pool ? io.pool->size() : 1;
  if (threads <= 1 || m * n * k < (int64_t{1} << 16) || n < 32)
    return gemm<T>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  const int64_t block = ((n + threads - 1) / threads + 15) / 16 * 16;
  parallel_for(io, (n + block - 1) / block, 1, [&](int64_t j0, int64_t j1) {
    for (int64_t j = j0; j < j1; ++j) {
      const int64_t c0 = j * block, nc = std::min(n, c0 + block) - c0;
      gemm<T>(ta, tb, m, nc, k, alpha, a, lda, tb ? b + c0 * ldb : b + c0, ldb, beta, c + c0, ldc);
    }
  });
}

}  // namespace parity::refrt
