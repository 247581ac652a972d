// Internal: the matrix inverse the composite linear-algebra translations share (composite_linalg_solve.cc).
#pragma once
#include <string>
#include <vector>

#include "../src/translate.h"

namespace parity::exporter {

// The inverse of the [..., n, n] matrices `a` (dtype t, static n) by Gauss-Jordan elimination with partial
// pivoting: n steps of a row swap, a pivot-row scaling and one elimination. A singular matrix gives
// inf / NaN entries where torch raises.
std::string gauss_jordan_inverse(TranslateContext& ctx, const std::string& a, int64_t n, DType t);

// The singular values of the [..., m, n] matrices `a` (static m, n; rank = a's rank), descending
// ([..., min(m, n)]), by a one-sided Jacobi SVD (composite_linalg_svd.cc).
std::string singular_values(TranslateContext& ctx, const std::string& a, int64_t m, int64_t n, int64_t rank, DType t);

// The static size of `arg`'s dim `d` (negative counts from the end); fails naming the argument when the
// dim is symbolic.
inline int64_t static_size(TranslateContext& ctx, const std::string& arg, int64_t d) {
  const auto& sizes = ctx.input_meta(arg).sizes;
  const int64_t rank = static_cast<int64_t>(sizes.size());
  if (d < 0) d += rank;
  if (d < 0 || d >= rank || !sizes[static_cast<size_t>(d)].value)
    ctx.fail("'" + arg + "' needs a static size on dim " + std::to_string(d));
  return *sizes[static_cast<size_t>(d)].value;
}

// x (of rank `rank`) transposed so that dims d0, d1 (normalised) come last, in that order.
inline std::string move_dims_last(TranslateContext& ctx, const std::string& x, int64_t rank, int64_t d0, int64_t d1) {
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    if (d != d0 && d != d1) perm.push_back(d);
  perm.push_back(d0);
  perm.push_back(d1);
  const std::string moved = ctx.temp("moved");
  set_attr(ctx.emit("Transpose", {x}, {moved}), "perm", perm);
  return moved;
}

}  // namespace parity::exporter
