// Internal: the matrix inverse the composite linear-algebra translations share (composite_linalg_solve.cc).
#pragma once
#include <string>

#include "../src/translate.h"

namespace parity::exporter {

// The inverse of the [..., n, n] matrices `a` (dtype t, static n) by Gauss-Jordan elimination with partial
// pivoting: n steps of a row swap, a pivot-row scaling and one elimination. A singular matrix gives
// inf / NaN entries where torch raises.
std::string gauss_jordan_inverse(TranslateContext& ctx, const std::string& a, int64_t n, DType t);

// The singular values of the [..., m, n] matrices `a` (static m, n; rank = a's rank), descending
// ([..., min(m, n)]), by a one-sided Jacobi SVD (composite_linalg_svd.cc).
std::string singular_values(TranslateContext& ctx, const std::string& a, int64_t m, int64_t n, int64_t rank, DType t);

}  // namespace parity::exporter
