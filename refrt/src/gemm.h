// Internal: row-major GEMM on OpenBLAS's cblas, shared by MatMul, Gemm and Conv.
// C = alpha * op(A) op(B) + beta * C with op = transpose when asked; leading dims in elements.
#pragma once
#include <cblas.h>

#include <climits>
#include <type_traits>

#include "kernel.h"

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

}  // namespace parity::refrt
