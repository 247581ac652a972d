// CompositeImplicitAutograd linear solves kept in a (non-strict) program: inverse / linalg_inv,
// linalg_solve(_ex), linalg_tensorinv, linalg_tensorsolve. ONNX has no inverse or LU operator, so the
// inverse is a Gauss-Jordan elimination with partial pivoting unrolled over the (static) matrix size;
// torch factorises with LAPACK's LU: the values agree to rounding for non-singular matrices.
#include <limits>

#include "composite_linalg.h"

namespace parity::exporter {

namespace {

std::string i64s(TranslateContext& ctx, std::vector<int64_t> v) { return ctx.graph.constant_i64(v); }

// One elimination step on the augmented [..., n, 2n] matrix m: the row of largest |m[i, k]| (i >= k)
// swapped into row k, row k divided by its pivot, column k cleared from every other row.
std::string eliminate(TranslateContext& ctx, const std::string& m, int64_t k, const std::string& rows, DType t) {
  const std::string kk = ctx.graph.constant_i64({k}, true);
  auto* col = ctx.emit("Gather", {m, kk}, {ctx.temp("column")});
  set_attr(col, "axis", int64_t{-1});
  const std::string candidates = ctx.emit1(
      "Where", {ctx.emit1("GreaterOrEqual", {rows, kk}), ctx.emit1("Abs", {col->output(0)}), ctx.constant(-1, t)});
  auto* am = ctx.emit("ArgMax", {candidates}, {ctx.temp("pivot_row")});
  set_attr(am, "axis", int64_t{-1});
  set_attr(am, "keepdims", int64_t{1});
  const std::string p = am->output(0);  // [..., 1]
  const std::string perm = ctx.emit1(
      "Where", {ctx.emit1("Equal", {rows, kk}), p, ctx.emit1("Where", {ctx.emit1("Equal", {rows, p}), kk, rows})});
  auto* swapped = ctx.emit(
      "GatherElements", {m, ctx.emit1("Expand", {ctx.emit1("Unsqueeze", {perm, i64s(ctx, {-1})}), shape_of(ctx, m)})},
      {ctx.temp("swapped")});
  set_attr(swapped, "axis", int64_t{-2});
  const std::string s = swapped->output(0);
  const std::string axis_rows = i64s(ctx, {-2}), axis_cols = i64s(ctx, {-1});
  const std::string pivot_row = ctx.emit1("Slice", {s, i64s(ctx, {k}), i64s(ctx, {k + 1}), axis_rows});
  const std::string pivot = ctx.emit1("Slice", {pivot_row, i64s(ctx, {k}), i64s(ctx, {k + 1}), axis_cols});
  const std::string unit = ctx.emit1("Div", {pivot_row, pivot});
  const std::string factors = ctx.emit1("Slice", {s, i64s(ctx, {k}), i64s(ctx, {k + 1}), axis_cols});
  const std::string cleared = ctx.emit1("Sub", {s, ctx.emit1("Mul", {factors, unit})});
  const std::string is_k = ctx.emit1("Unsqueeze", {ctx.emit1("Equal", {rows, kk}), i64s(ctx, {-1})});
  return ctx.emit1("Where", {is_k, unit, cleared});
}

}  // namespace

std::string gauss_jordan_inverse(TranslateContext& ctx, const std::string& a, int64_t n, DType t) {
  if (n <= 0 || n > 64) ctx.fail("a matrix inverse of size " + std::to_string(n) + " (1 to 64 supported)");
  const std::string rows = ctx.emit1("Range", {ctx.graph.constant_i64({0}, true), ctx.graph.constant_i64({n}, true),
                                               ctx.graph.constant_i64({1}, true)});
  const std::string eye = ctx.emit1("Equal", {ctx.emit1("Unsqueeze", {rows, i64s(ctx, {1})}), rows});
  const std::string identity = ctx.emit1("Expand", {ctx.cast_if_needed(eye, DType::kBool, t), shape_of(ctx, a)});
  std::string m = concat(ctx, {a, identity}, -1, "augmented");
  for (int64_t k = 0; k < n; ++k) m = eliminate(ctx, m, k, rows, t);
  return ctx.emit1("Slice", {m, i64s(ctx, {n}), i64s(ctx, {2 * n}), i64s(ctx, {-1})}, "inverse");
}

namespace {

// inverse(self) / linalg_inv(A).
void inverse(TranslateContext& ctx) {
  const char* arg = ctx.arg("A") ? "A" : "self";
  const DType t = ctx.output_meta().dtype;
  ctx.alias_output(0, gauss_jordan_inverse(ctx, ctx.value(arg, t), static_size(ctx, arg, -1), t));
}

// linalg_solve(A, B, left) / linalg_solve_ex (+ info = 0): X = A^-1 B (left) or B A^-1. B is a batch of
// vectors when it is 1-D or has A's shape without the last dim (torch's rule).
void linalg_solve(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const std::string inv = gauss_jordan_inverse(ctx, ctx.value("A", t), static_size(ctx, "A", -1), t);
  const std::string b = ctx.value("B", t);
  const bool left = ctx.bool_arg("left", true);
  const int64_t ra = ctx.rank("A"), rb = ctx.rank("B");
  bool vector = rb == 1;
  if (rb == ra - 1) {
    const auto& sa = ctx.input_meta("A").sizes;
    const auto& sb = ctx.input_meta("B").sizes;
    vector = true;
    for (int64_t d = 0; d < rb; ++d) {
      const auto &da = sa[static_cast<size_t>(d)], &db = sb[static_cast<size_t>(d)];
      if (da.value != db.value || (!da.value && da.expr != db.expr)) vector = false;
    }
  }
  std::string x;
  if (vector) {
    const std::string col = ctx.emit1("Unsqueeze", {b, i64s(ctx, {left ? -1 : -2})});
    x = ctx.emit1("Squeeze",
                  {ctx.emit1("MatMul", left ? std::vector<std::string>{inv, col} : std::vector<std::string>{col, inv}),
                   i64s(ctx, {left ? -1 : -2})});
  } else {
    x = ctx.emit1("MatMul", left ? std::vector<std::string>{inv, b} : std::vector<std::string>{b, inv});
  }
  ctx.alias_output(0, x);
  if (ctx.output_count() > 1) {
    const std::string batch = ctx.emit1("Slice", {shape_of(ctx, ctx.tensor("A")), i64s(ctx, {0}), i64s(ctx, {-2})});
    ctx.emit("Expand", {ctx.constant(0, DType::kInt32), batch}, {ctx.output(1)});
  }
}

// The product of static sizes [begin, end) of a tensor argument.
int64_t numel_of(TranslateContext& ctx, const std::string& arg, int64_t begin, int64_t end) {
  int64_t p = 1;
  for (int64_t d = begin; d < end; ++d) p *= static_size(ctx, arg, d);
  return p;
}

// linalg_tensorinv(self, ind): self seen as a [prod(shape[:ind]), prod(shape[ind:])] matrix, inverted,
// shaped shape[ind:] + shape[:ind].
void linalg_tensorinv(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const int64_t rank = ctx.rank("self"), ind = ctx.int_arg("ind", 2);
  if (ind <= 0 || ind > rank) ctx.fail("linalg_tensorinv: ind out of range");
  const int64_t rows = numel_of(ctx, "self", 0, ind), cols = numel_of(ctx, "self", ind, rank);
  if (rows != cols) ctx.fail("linalg_tensorinv: the tensor is not square as a matrix");
  const std::string m = ctx.emit1("Reshape", {ctx.value("self", t), i64s(ctx, {rows, cols})});
  std::vector<int64_t> shape;
  for (int64_t d = ind; d < rank; ++d) shape.push_back(static_size(ctx, "self", d));
  for (int64_t d = 0; d < ind; ++d) shape.push_back(static_size(ctx, "self", d));
  ctx.emit("Reshape", {gauss_jordan_inverse(ctx, m, rows, t), i64s(ctx, shape)}, {ctx.output()});
}

// linalg_tensorsolve(self, other, dims?): the dims listed in `dims` moved last, self seen as a
// [numel(other), rest] matrix, X = A^-1 vec(other) shaped as self's trailing dims.
void linalg_tensorsolve(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const int64_t rank = ctx.rank("self"), rb = ctx.rank("other");
  std::string a = ctx.value("self", t);
  std::vector<int64_t> order;
  if (ctx.has("dims")) {
    std::vector<bool> moved(static_cast<size_t>(rank));
    std::vector<int64_t> tail;
    for (int64_t d : ctx.ints_arg("dims")) {
      tail.push_back(ctx.normalized_dim(d, rank));
      moved[static_cast<size_t>(tail.back())] = true;
    }
    for (int64_t d = 0; d < rank; ++d)
      if (!moved[static_cast<size_t>(d)]) order.push_back(d);
    order.insert(order.end(), tail.begin(), tail.end());
    const std::string moved_a = ctx.temp("moved");
    set_attr(ctx.emit("Transpose", {a}, {moved_a}), "perm", order);
    a = moved_a;
  } else {
    for (int64_t d = 0; d < rank; ++d) order.push_back(d);
  }
  std::vector<int64_t> sizes;
  for (int64_t d : order) sizes.push_back(static_size(ctx, "self", d));
  const int64_t n = numel_of(ctx, "other", 0, rb);
  std::vector<int64_t> rest(sizes.begin() + rb, sizes.end());
  const std::string m = ctx.emit1("Reshape", {a, i64s(ctx, {n, -1})});
  const std::string b = ctx.emit1("Reshape", {ctx.value("other", t), i64s(ctx, {n, 1})});
  const std::string x = ctx.emit1("MatMul", {gauss_jordan_inverse(ctx, m, n, t), b});
  ctx.emit("Reshape", {x, i64s(ctx, rest)}, {ctx.output()});
}

}  // namespace

PARITY_TRANSLATION("aten::inverse.default", inverse, 18);
PARITY_TRANSLATION("aten::linalg_inv.default", inverse, 18);
PARITY_TRANSLATION("aten::linalg_solve.default", linalg_solve, 18);
PARITY_TRANSLATION("aten::linalg_solve_ex.default", linalg_solve, 18);
PARITY_TRANSLATION("aten::linalg_tensorinv.default", linalg_tensorinv, 18);
PARITY_TRANSLATION("aten::linalg_tensorsolve.default", linalg_tensorsolve, 18);

}  // namespace parity::exporter
