// The CompositeImplicitAutograd ops that need singular values only (which, unlike the singular vectors,
// are unique): linalg_svdvals, nuclear_norm, linalg_matrix_rank, linalg_pinv / pinverse (V S^-1 U^T does
// not depend on the vectors' signs), and the 2 / -2 / nuc matrix norms and condition numbers. ONNX has no
// SVD: a one-sided (Hestenes) Jacobi SVD is unrolled over the static number of columns, a fixed number of
// sweeps (quadratic convergence: float32 precision in well under that many). torch calls LAPACK's gesdd;
// the singular values agree to rounding.
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "composite_linalg.h"

namespace parity::exporter {
namespace {

constexpr int kSweeps = 8;

std::string i64s(TranslateContext& ctx, std::vector<int64_t> v) { return ctx.graph.constant_i64(v); }

// The dot product of two [..., m] columns, kept as [..., 1].
std::string dot(TranslateContext& ctx, const std::string& a, const std::string& b) {
  const std::string out = ctx.temp("dot");
  emit_reduce(ctx, "ReduceSum", ctx.emit1("Mul", {a, b}), {-1}, true, out);
  return out;
}

// One Jacobi rotation making columns p and q of `cols` orthogonal (and the same rotation on `vs`).
void rotate(TranslateContext& ctx, std::vector<std::string>& cols, std::vector<std::string>& vs, size_t p, size_t q,
            DType t) {
  const std::string alpha = dot(ctx, cols[p], cols[p]), beta = dot(ctx, cols[q], cols[q]);
  const std::string gamma = dot(ctx, cols[p], cols[q]);
  const std::string zeta =
      ctx.emit1("Div", {ctx.emit1("Sub", {beta, alpha}), ctx.emit1("Mul", {gamma, ctx.constant(2, t)})});
  const std::string sign = ctx.emit1(
      "Where", {ctx.emit1("GreaterOrEqual", {zeta, ctx.constant(0, t)}), ctx.constant(1, t), ctx.constant(-1, t)});
  const std::string root = ctx.emit1("Sqrt", {ctx.emit1("Add", {ctx.constant(1, t), ctx.emit1("Mul", {zeta, zeta})})});
  std::string tan = ctx.emit1("Div", {sign, ctx.emit1("Add", {ctx.emit1("Abs", {zeta}), root})});
  tan = ctx.emit1("Where", {ctx.emit1("Equal", {gamma, ctx.constant(0, t)}), ctx.constant(0, t), tan});
  const std::string cos = ctx.emit1(
      "Reciprocal", {ctx.emit1("Sqrt", {ctx.emit1("Add", {ctx.constant(1, t), ctx.emit1("Mul", {tan, tan})})})});
  const std::string sin = ctx.emit1("Mul", {cos, tan});
  auto turn = [&](std::vector<std::string>& v) {
    const std::string a = v[p], b = v[q];
    v[p] = ctx.emit1("Sub", {ctx.emit1("Mul", {cos, a}), ctx.emit1("Mul", {sin, b})});
    v[q] = ctx.emit1("Add", {ctx.emit1("Mul", {sin, a}), ctx.emit1("Mul", {cos, b})});
  };
  turn(cols);
  if (!vs.empty()) turn(vs);
}

struct Jacobi {
  std::vector<std::string> cols;  // A V: orthogonal columns [..., m], norms = singular values
  std::vector<std::string> vs;    // columns of V [..., n] (when asked)
  bool transposed = false;        // A had fewer rows than columns: the SVD of A^T was taken
};

// One-sided Jacobi on the [..., m, n] value `a` (static m, n): the columns are rotated pairwise until
// mutually orthogonal. A wide matrix is transposed first (same singular values).
Jacobi jacobi(TranslateContext& ctx, std::string a, int64_t m, int64_t n, int64_t rank, DType t, bool with_v) {
  Jacobi j;
  if (m < n) {
    a = transpose_last_two(ctx, a, rank, "a_t");
    std::swap(m, n);
    j.transposed = true;
  }
  if (n > 16) ctx.fail("singular values of matrices with more than 16 columns and rows are not supported");
  for (int64_t c = 0; c < n; ++c) {
    auto* g = ctx.emit("Gather", {a, ctx.graph.constant_i64({c}, true)}, {ctx.temp("column")});
    set_attr(g, "axis", int64_t{-1});
    j.cols.push_back(g->output(0));
    if (with_v) {
      std::vector<int64_t> unit(static_cast<size_t>(n), 0);
      unit[static_cast<size_t>(c)] = 1;
      j.vs.push_back(ctx.cast_if_needed(i64s(ctx, unit), DType::kInt64, t));
    }
  }
  for (int sweep = 0; sweep < kSweeps; ++sweep)
    for (size_t p = 0; p + 1 < j.cols.size(); ++p)
      for (size_t q = p + 1; q < j.cols.size(); ++q) rotate(ctx, j.cols, j.vs, p, q, t);
  return j;
}

// The static (m, n) of the last two dims of a tensor argument.
std::pair<int64_t, int64_t> matrix_dims(TranslateContext& ctx, const std::string& arg) {
  const auto& s = ctx.input_meta(arg).sizes;
  if (s.size() < 2 || !s[s.size() - 2].value || !s.back().value) ctx.fail("'" + arg + "' needs static matrix dims");
  return {*s[s.size() - 2].value, *s.back().value};
}

}  // namespace

std::string singular_values(TranslateContext& ctx, const std::string& a, int64_t m, int64_t n, int64_t rank, DType t) {
  const Jacobi j = jacobi(ctx, a, m, n, rank, t, false);
  std::vector<std::string> norms;
  for (const auto& c : j.cols) norms.push_back(ctx.emit1("Sqrt", {dot(ctx, c, c)}));
  const std::string s = norms.size() == 1 ? norms[0] : concat(ctx, norms, -1, "singular_values");
  auto* k = ctx.emit("TopK", {s, ctx.graph.constant_i64({static_cast<int64_t>(norms.size())})},
                     {ctx.temp("sorted_singular_values"), ctx.temp("order")});
  set_attr(k, "axis", int64_t{-1});
  return k->output(0);
}

namespace {

// The input of an op on `arg` in the output dtype, with its matrix dims (hermitian: the symmetric matrix
// its lower triangle defines, which is all torch reads).
std::string matrix_input(TranslateContext& ctx, const std::string& arg, DType t) {
  std::string a = ctx.value(arg, t);
  if (!ctx.bool_arg("hermitian", false)) return a;
  auto* low = ctx.emit("Trilu", {a}, {ctx.temp("lower")});
  set_attr(low, "upper", int64_t{0});
  auto* strict = ctx.emit("Trilu", {a, ctx.graph.constant_i64({-1}, true)}, {ctx.temp("strict_lower")});
  set_attr(strict, "upper", int64_t{0});
  return ctx.emit1("Add", {low->output(0), transpose_last_two(ctx, strict->output(0), ctx.rank(arg), "upper")});
}

void linalg_svdvals(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const auto [m, n] = matrix_dims(ctx, "A");
  ctx.alias_output(0, singular_values(ctx, ctx.value("A", t), m, n, ctx.rank("A"), t));
}

// nuclear_norm(self, keepdim) / nuclear_norm.dim(self, dim, keepdim): the sum of the singular values over
// two dims (moved last).
void nuclear_norm(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const int64_t rank = ctx.rank("self");
  const auto dims = ctx.has("dim") ? ctx.ints_arg("dim") : std::vector<int64_t>{-2, -1};
  if (dims.size() != 2) ctx.fail("nuclear_norm needs two dims");
  const int64_t d0 = ctx.normalized_dim(dims[0], rank), d1 = ctx.normalized_dim(dims[1], rank);
  const std::string moved = move_dims_last(ctx, ctx.value("self", t), rank, d0, d1);
  const auto& s = ctx.input_meta("self").sizes;
  if (!s[static_cast<size_t>(d0)].value || !s[static_cast<size_t>(d1)].value)
    ctx.fail("nuclear_norm needs static dims");
  const std::string sv =
      singular_values(ctx, moved, *s[static_cast<size_t>(d0)].value, *s[static_cast<size_t>(d1)].value, rank, t);
  const std::string sum = ctx.temp("nuclear");
  emit_reduce(ctx, "ReduceSum", sv, {-1}, false, sum);
  if (!ctx.bool_arg("keepdim", false)) return ctx.alias_output(0, sum);
  ctx.emit("Unsqueeze", {sum, i64s(ctx, {std::min(d0, d1), std::max(d0, d1)})}, {ctx.output()});
}

// A tolerance argument: a float, or a tensor of the batch shape (unsqueezed to broadcast against [..., 1]).
std::string tolerance(TranslateContext& ctx, const char* name, DType t) {
  const pt2::Argument& a = ctx.required(name);
  if (!a.is_tensor()) return ctx.constant(a.as_float(), t);
  return ctx.emit1("Unsqueeze", {ctx.value(name, t), i64s(ctx, {-1})});
}

// The cutoff max(atol, rtol * s_max) ([..., 1]) of linalg_matrix_rank / linalg_pinv: rtol defaults to
// eps * max(m, n), or to 0 where atol > 0; the older overloads pass `tol` (absolute) or `rcond` (relative).
std::string cutoff(TranslateContext& ctx, const std::string& smax, int64_t m, int64_t n, DType t) {
  std::string atol, rtol;
  if (ctx.has("tol")) {
    atol = tolerance(ctx, "tol", t);
    rtol = ctx.constant(0, t);
  } else if (ctx.has("rcond")) {
    rtol = tolerance(ctx, "rcond", t);
    atol = ctx.constant(0, t);
  } else {
    if (ctx.has("atol")) atol = tolerance(ctx, "atol", t);
    if (ctx.has("rtol")) rtol = tolerance(ctx, "rtol", t);
  }
  if (rtol.empty()) {
    const double eps =
        t == DType::kFloat64 ? std::numeric_limits<double>::epsilon() : std::numeric_limits<float>::epsilon();
    const std::string dflt = ctx.constant(eps * static_cast<double>(std::max(m, n)), t);
    rtol = atol.empty()
               ? dflt
               : ctx.emit1("Where", {ctx.emit1("Greater", {atol, ctx.constant(0, t)}), ctx.constant(0, t), dflt});
  }
  if (atol.empty()) atol = ctx.constant(0, t);
  return ctx.emit1("Max", {atol, ctx.emit1("Mul", {rtol, smax})});
}

// linalg_matrix_rank (every overload): the count of singular values above the cutoff (int64).
void linalg_matrix_rank(TranslateContext& ctx) {
  const char* arg = ctx.arg("input") ? "input" : "self";
  const DType t = ctx.input_meta(arg).dtype;
  const auto [m, n] = matrix_dims(ctx, arg);
  const std::string sv = singular_values(ctx, matrix_input(ctx, arg, t), m, n, ctx.rank(arg), t);
  const std::string smax = ctx.emit1("Slice", {sv, i64s(ctx, {0}), i64s(ctx, {1}), i64s(ctx, {-1})});
  const std::string above = ctx.emit1("Greater", {sv, cutoff(ctx, smax, m, n, t)});
  emit_reduce(ctx, "ReduceSum", ctx.cast_if_needed(above, DType::kBool, DType::kInt64), {-1}, false, ctx.output());
}

// Columns [..., r] stacked as the columns of a [..., r, k] matrix.
std::string stack_columns(TranslateContext& ctx, const std::vector<std::string>& cols) {
  std::vector<std::string> parts;
  for (const auto& c : cols) parts.push_back(ctx.emit1("Unsqueeze", {c, i64s(ctx, {-1})}));
  return parts.size() == 1 ? parts[0] : concat(ctx, parts, -1, "stacked");
}

// linalg_pinv (every overload) / pinverse: with A V = W (orthogonal columns of norms s),
// pinv(A) = V diag(1 / s^2 where s > cutoff, else 0) W^T; a wide A goes through its transpose.
void linalg_pinv(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const auto [m, n] = matrix_dims(ctx, "self");
  const Jacobi j = jacobi(ctx, matrix_input(ctx, "self", t), m, n, ctx.rank("self"), t, true);
  std::vector<std::string> sq;
  for (const auto& c : j.cols) sq.push_back(dot(ctx, c, c));
  const std::string s2 = sq.size() == 1 ? sq[0] : concat(ctx, sq, -1, "squares");
  const std::string s = ctx.emit1("Sqrt", {s2}), smax = ctx.temp("largest");
  emit_reduce(ctx, "ReduceMax", s, {-1}, true, smax);
  const std::string keep = ctx.emit1("Greater", {s, cutoff(ctx, smax, m, n, t)});
  const std::string d = ctx.emit1("Where", {keep, ctx.emit1("Reciprocal", {s2}), ctx.constant(0, t)});
  const std::string v = stack_columns(ctx, j.vs), w = stack_columns(ctx, j.cols);
  const std::string vd = ctx.emit1("Mul", {v, ctx.emit1("Unsqueeze", {d, i64s(ctx, {-2})})});
  const int64_t rank = ctx.rank("self");
  const std::string p = ctx.emit1("MatMul", {vd, transpose_last_two(ctx, w, rank, "w_t")});
  ctx.alias_output(0, j.transposed ? transpose_last_two(ctx, p, rank, "pinv") : p);
}

// linalg_eigvalsh(self, UPLO): the symmetric matrix of self's lower (or upper) triangle, shifted by
// c = its largest absolute row sum (Gershgorin: A + cI is positive semi-definite, so its eigenvalues are
// its singular values), eigenvalues = singular values - c, ascending.
void linalg_eigvalsh(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const auto [m, n] = matrix_dims(ctx, "self");
  if (m != n) ctx.fail("linalg_eigvalsh needs square matrices");
  const int64_t rank = ctx.rank("self");
  const bool upper = ctx.string_arg("UPLO", "L") == "U";
  const std::string a = ctx.value("self", t);
  auto* tri = ctx.emit("Trilu", {a}, {ctx.temp("triangle")});
  set_attr(tri, "upper", int64_t{upper ? 1 : 0});
  auto* strict = ctx.emit("Trilu", {a, ctx.graph.constant_i64({upper ? 1 : -1}, true)}, {ctx.temp("strict")});
  set_attr(strict, "upper", int64_t{upper ? 1 : 0});
  const std::string sym =
      ctx.emit1("Add", {tri->output(0), transpose_last_two(ctx, strict->output(0), rank, "mirror")});
  const std::string rows = ctx.temp("row_sums"), shift = ctx.temp("shift");
  emit_reduce(ctx, "ReduceSum", ctx.emit1("Abs", {sym}), {-1}, false, rows);
  emit_reduce(ctx, "ReduceMax", rows, {-1}, true, shift);  // [..., 1]
  const std::string eye = ctx.emit1(
      "Equal",
      {ctx.emit1("Unsqueeze", {ctx.emit1("Range", {ctx.graph.constant_i64({0}, true), ctx.graph.constant_i64({n}, true),
                                                   ctx.graph.constant_i64({1}, true)}),
                               i64s(ctx, {1})}),
       ctx.emit1("Range", {ctx.graph.constant_i64({0}, true), ctx.graph.constant_i64({n}, true),
                           ctx.graph.constant_i64({1}, true)})});
  const std::string shifted =
      ctx.emit1("Add", {sym, ctx.emit1("Mul", {ctx.cast_if_needed(eye, DType::kBool, t),
                                               ctx.emit1("Unsqueeze", {shift, i64s(ctx, {-1})})})});
  const std::string sv = singular_values(ctx, shifted, n, n, rank, t);  // descending
  auto* rev = ctx.emit("Slice",
                       {ctx.emit1("Sub", {sv, shift}), i64s(ctx, {-1}),
                        i64s(ctx, {std::numeric_limits<int64_t>::min()}), i64s(ctx, {-1}), i64s(ctx, {-1})},
                       {ctx.output()});
  (void)rev;
}

}  // namespace

PARITY_TRANSLATION("aten::linalg_svdvals.default", linalg_svdvals, 18);
PARITY_TRANSLATION("aten::nuclear_norm.default", nuclear_norm, 18);
PARITY_TRANSLATION("aten::nuclear_norm.dim", nuclear_norm, 18);
PARITY_TRANSLATION("aten::linalg_matrix_rank.default", linalg_matrix_rank, 18);
PARITY_TRANSLATION("aten::linalg_matrix_rank.atol_rtol_float", linalg_matrix_rank, 18);
PARITY_TRANSLATION("aten::linalg_matrix_rank.atol_rtol_tensor", linalg_matrix_rank, 18);
PARITY_TRANSLATION("aten::linalg_matrix_rank.tol_tensor", linalg_matrix_rank, 18);
PARITY_TRANSLATION("aten::linalg_pinv.default", linalg_pinv, 18);
PARITY_TRANSLATION("aten::linalg_pinv.atol_rtol_float", linalg_pinv, 18);
PARITY_TRANSLATION("aten::linalg_pinv.rcond_tensor", linalg_pinv, 18);
PARITY_TRANSLATION("aten::linalg_pinv.atol_rtol_tensor", linalg_pinv, 18);
PARITY_TRANSLATION("aten::pinverse.default", linalg_pinv, 18);
PARITY_TRANSLATION("aten::linalg_eigvalsh.default", linalg_eigvalsh, 18);

}  // namespace parity::exporter
