// CompositeImplicitAutograd matrix factorisations kept in a (non-strict) program: linalg_cholesky,
// linalg_lu_factor / _lu_with_info (LU with partial pivoting, LAPACK's packed layout and 1-based pivots)
// and lu_solve. ONNX has no factorisation operator: each is unrolled over the static matrix size, the
// same elimination LAPACK's unblocked getrf / potrf perform, so the values agree to rounding. torch raises
// on a singular or non positive-definite input; here such an input gives inf / NaN entries.
#include "../src/translate.h"

namespace parity::exporter {
namespace {

std::string i64s(TranslateContext& ctx, std::vector<int64_t> v) { return ctx.graph.constant_i64(v); }

int64_t square_size(TranslateContext& ctx, const std::string& arg) {
  const auto& sizes = ctx.input_meta(arg).sizes;
  if (sizes.size() < 2 || !sizes.back().value || !sizes[sizes.size() - 2].value ||
      *sizes.back().value != *sizes[sizes.size() - 2].value)
    ctx.fail("'" + arg + "' needs static square matrices");
  const int64_t n = *sizes.back().value;
  if (n < 1 || n > 64) ctx.fail("matrices of size " + std::to_string(n) + " (1 to 64 supported)");
  return n;
}

std::string range(TranslateContext& ctx, int64_t n) {
  return ctx.emit1("Range", {ctx.graph.constant_i64({0}, true), ctx.graph.constant_i64({n}, true),
                             ctx.graph.constant_i64({1}, true)});
}

// Column k of [..., n, m] as [..., n, 1] and row k as [..., 1, m].
std::string column(TranslateContext& ctx, const std::string& m, int64_t k) {
  return ctx.emit1("Slice", {m, i64s(ctx, {k}), i64s(ctx, {k + 1}), i64s(ctx, {-1})});
}
std::string row(TranslateContext& ctx, const std::string& m, int64_t k) {
  return ctx.emit1("Slice", {m, i64s(ctx, {k}), i64s(ctx, {k + 1}), i64s(ctx, {-2})});
}

// linalg_cholesky(self, upper): column j of L is (A[:, j] - sum_{k<j} L[:, k] L[j, k]) / sqrt(its j-th
// entry), zero above the diagonal; upper returns L^T.
void linalg_cholesky(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const int64_t n = square_size(ctx, "self");
  const std::string a = ctx.value("self", t);
  const std::string rows = ctx.emit1("Unsqueeze", {range(ctx, n), i64s(ctx, {-1})});  // [n, 1]
  std::vector<std::string> cols;
  for (int64_t j = 0; j < n; ++j) {
    std::string v = column(ctx, a, j);
    for (int64_t k = 0; k < j; ++k) v = ctx.emit1("Sub", {v, ctx.emit1("Mul", {cols[k], row(ctx, cols[k], j)})});
    const std::string d = ctx.emit1("Sqrt", {row(ctx, v, j)});
    cols.push_back(ctx.emit1("Where", {ctx.emit1("GreaterOrEqual", {rows, ctx.graph.constant_i64({j}, true)}),
                                       ctx.emit1("Div", {v, d}), ctx.constant(0, t)}));
  }
  const std::string l = concat(ctx, cols, -1, "cholesky");
  if (!ctx.bool_arg("upper", false)) return ctx.alias_output(0, l);
  ctx.alias_output(0, transpose_last_two(ctx, l, ctx.rank("self"), "cholesky_upper"));
}

// One step of LU with partial pivoting on m [..., n, n]: the row of largest |m[i, k]| (i >= k, first on
// ties) swapped into row k, the multipliers m[i, k] / m[k, k] stored below the pivot, the trailing block
// updated. Returns the pivot row index [..., 1].
std::string lu_step(TranslateContext& ctx, std::string& m, int64_t k, const std::string& rows, const std::string& cols,
                    DType t) {
  const std::string kk = ctx.graph.constant_i64({k}, true);
  const std::string col = ctx.emit1("Squeeze", {column(ctx, m, k), i64s(ctx, {-1})});
  const std::string candidates =
      ctx.emit1("Where", {ctx.emit1("GreaterOrEqual", {rows, kk}), ctx.emit1("Abs", {col}), ctx.constant(-1, t)});
  auto* am = ctx.emit("ArgMax", {candidates}, {ctx.temp("pivot_row")});
  set_attr(am, "axis", int64_t{-1});
  set_attr(am, "keepdims", int64_t{1});
  const std::string p = am->output(0);
  const std::string perm = ctx.emit1(
      "Where", {ctx.emit1("Equal", {rows, kk}), p, ctx.emit1("Where", {ctx.emit1("Equal", {rows, p}), kk, rows})});
  auto* swap = ctx.emit("GatherElements",
                        {m, ctx.emit1("Expand", {ctx.emit1("Unsqueeze", {perm, i64s(ctx, {-1})}), shape_of(ctx, m)})},
                        {ctx.temp("swapped")});
  set_attr(swap, "axis", int64_t{-2});
  const std::string s = swap->output(0);
  const std::string pivot_row = row(ctx, s, k);
  const std::string below = ctx.emit1("Unsqueeze", {ctx.emit1("Greater", {rows, kk}), i64s(ctx, {-1})});  // [n, 1]
  const std::string mult =
      ctx.emit1("Where", {below, ctx.emit1("Div", {column(ctx, s, k), column(ctx, pivot_row, k)}), column(ctx, s, k)});
  const std::string right = ctx.emit1("Greater", {cols, kk});  // [n]
  const std::string update =
      ctx.emit1("Where", {ctx.emit1("And", {below, right}), ctx.emit1("Mul", {mult, pivot_row}), ctx.constant(0, t)});
  const std::string with_mult = ctx.emit1("Where", {ctx.emit1("Equal", {cols, kk}), mult, s});
  m = ctx.emit1("Sub", {with_mult, update});
  return p;
}

// linalg_lu_factor(A, pivot) -> (LU, pivots); _lu_with_info(self, pivot, check_errors) -> (LU, pivots,
// info): pivots are int32 and 1-based, info 0.
void lu_factor(TranslateContext& ctx) {
  const char* arg = ctx.arg("A") ? "A" : "self";
  if (!ctx.bool_arg("pivot", true)) ctx.fail("LU without pivoting is not supported");
  const DType t = ctx.output_meta().dtype;
  const int64_t n = square_size(ctx, arg);
  std::string m = ctx.value(arg, t);
  const std::string idx = range(ctx, n);
  std::vector<std::string> pivots;
  for (int64_t k = 0; k < n; ++k) pivots.push_back(lu_step(ctx, m, k, idx, idx, t));
  ctx.alias_output(0, m);
  const std::string piv = n == 1 ? pivots[0] : concat(ctx, pivots, -1, "pivots");
  ctx.alias_output(
      1, ctx.cast_if_needed(ctx.emit1("Add", {piv, ctx.graph.constant_i64({1}, true)}), DType::kInt64, DType::kInt32));
  if (ctx.output_count() > 2) {
    const std::string batch = ctx.emit1("Slice", {shape_of(ctx, ctx.tensor(arg)), i64s(ctx, {0}), i64s(ctx, {-2})});
    ctx.emit("Expand", {ctx.constant(0, DType::kInt32), batch}, {ctx.output(2)});
  }
}

// lu_solve(self = B, LU_data, LU_pivots): B's rows permuted by the pivots (row k swapped with pivots[k] - 1, in
// order), then L y = P B (unit diagonal) forward and U x = y backward, one row of the solution per step.
void lu_solve(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const int64_t n = square_size(ctx, "LU_data");
  const std::string lu = ctx.value("LU_data", t);
  std::string b = ctx.value("self", t);
  const std::string idx = range(ctx, n);
  const std::string piv = ctx.emit1("Sub", {ctx.value("LU_pivots", DType::kInt64), ctx.graph.constant_i64({1}, true)});
  for (int64_t k = 0; k < n; ++k) {
    const std::string kk = ctx.graph.constant_i64({k}, true);
    auto* g = ctx.emit("Gather", {piv, kk}, {ctx.temp("pivot")});
    set_attr(g, "axis", int64_t{-1});
    const std::string p = ctx.emit1("Unsqueeze", {g->output(0), i64s(ctx, {-1})});
    const std::string perm = ctx.emit1(
        "Where", {ctx.emit1("Equal", {idx, kk}), p, ctx.emit1("Where", {ctx.emit1("Equal", {idx, p}), kk, idx})});
    auto* swap = ctx.emit("GatherElements",
                          {b, ctx.emit1("Expand", {ctx.emit1("Unsqueeze", {perm, i64s(ctx, {-1})}), shape_of(ctx, b)})},
                          {ctx.temp("permuted")});
    set_attr(swap, "axis", int64_t{-2});
    b = swap->output(0);
  }
  const std::string rows = ctx.emit1("Unsqueeze", {idx, i64s(ctx, {-1})});
  for (int64_t k = 0; k < n; ++k) {  // forward: rows below k lose L[i, k] y_k
    const std::string mask = ctx.emit1("Greater", {rows, ctx.graph.constant_i64({k}, true)});
    const std::string sub = ctx.emit1("Mul", {column(ctx, lu, k), row(ctx, b, k)});
    b = ctx.emit1("Sub", {b, ctx.emit1("Where", {mask, sub, ctx.constant(0, t)})});
  }
  for (int64_t k = n - 1; k >= 0; --k) {  // backward: x_k = y_k / U[k, k], rows above lose U[i, k] x_k
    const std::string kk = ctx.graph.constant_i64({k}, true);
    const std::string xk = ctx.emit1("Div", {row(ctx, b, k), row(ctx, column(ctx, lu, k), k)});
    const std::string above = ctx.emit1("Less", {rows, kk});
    const std::string sub = ctx.emit1("Mul", {column(ctx, lu, k), xk});
    b = ctx.emit1("Where", {ctx.emit1("Equal", {rows, kk}), xk,
                            ctx.emit1("Sub", {b, ctx.emit1("Where", {above, sub, ctx.constant(0, t)})})});
  }
  ctx.alias_output(0, b);
}

}  // namespace

PARITY_TRANSLATION("aten::linalg_cholesky.default", linalg_cholesky, 18);
PARITY_TRANSLATION("aten::linalg_lu_factor.default", lu_factor, 18);
PARITY_TRANSLATION("aten::_lu_with_info.default", lu_factor, 18);
PARITY_TRANSLATION("aten::lu_solve.default", lu_solve, 18);

}  // namespace parity::exporter
