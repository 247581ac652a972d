// CompositeImplicitAutograd linear-algebra ops that torch.export keeps in a (non-strict) program, written
// with the formulas of torch's composites: kron, tensordot, chained matmuls, integer matrix powers,
// slogdet (through Det), matrix norms and condition numbers, Vandermonde matrices, cartesian
// products and combinations.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "composite_linalg.h"

namespace parity::exporter {
namespace {

std::string i64s(TranslateContext& ctx, std::vector<int64_t> v) { return ctx.graph.constant_i64(v); }

// kron(self, other): both padded to the same rank, interleaved as [a0, b0, a1, b1, ...] by Unsqueeze,
// multiplied, then each (a_i, b_i) pair merged into one dim of size a_i * b_i.
void kron(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const int64_t ra = ctx.rank("self"), rb = ctx.rank("other"), n = std::max(ra, rb);
  auto padded = [&](const std::string& arg, int64_t r) {
    std::string v = ctx.value(arg, t);
    if (r == n) return v;
    std::vector<int64_t> lead;
    for (int64_t i = 0; i < n - r; ++i) lead.push_back(i);
    return ctx.emit1("Unsqueeze", {v, i64s(ctx, lead)});
  };
  const std::string a = padded("self", ra), b = padded("other", rb);
  std::vector<int64_t> odd, even;
  for (int64_t i = 0; i < n; ++i) {
    odd.push_back(2 * i + 1);
    even.push_back(2 * i);
  }
  const std::string prod =
      ctx.emit1("Mul", {ctx.emit1("Unsqueeze", {a, i64s(ctx, odd)}), ctx.emit1("Unsqueeze", {b, i64s(ctx, even)})});
  ctx.emit("Reshape", {prod, ctx.emit1("Mul", {shape_of(ctx, a), shape_of(ctx, b)})}, {ctx.output()});
}

// tensordot(self, other, dims_self, dims_other): one Einsum that contracts the paired dims.
void tensordot(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const int64_t ra = ctx.rank("self"), rb = ctx.rank("other");
  if (ra + rb > 52) ctx.fail("tensordot of tensors with too many dims");
  const auto ds = ctx.ints_arg("dims_self"), dother = ctx.ints_arg("dims_other");
  if (ds.size() != dother.size()) ctx.fail("tensordot: dims_self and dims_other differ in length");
  auto letter = [](int64_t i) { return static_cast<char>(i < 26 ? 'a' + i : 'A' + (i - 26)); };
  std::string la(static_cast<size_t>(ra), ' '), lb(static_cast<size_t>(rb), ' ');
  for (int64_t i = 0; i < ra; ++i) la[static_cast<size_t>(i)] = letter(i);
  for (int64_t i = 0; i < rb; ++i) lb[static_cast<size_t>(i)] = letter(ra + i);
  std::vector<bool> contracted_a(static_cast<size_t>(ra)), contracted_b(static_cast<size_t>(rb));
  for (size_t k = 0; k < ds.size(); ++k) {
    const auto i = static_cast<size_t>(ctx.normalized_dim(ds[k], ra));
    const auto j = static_cast<size_t>(ctx.normalized_dim(dother[k], rb));
    lb[j] = la[i];
    contracted_a[i] = contracted_b[j] = true;
  }
  std::string out;
  for (size_t i = 0; i < la.size(); ++i)
    if (!contracted_a[i]) out += la[i];
  for (size_t j = 0; j < lb.size(); ++j)
    if (!contracted_b[j]) out += lb[j];
  auto* e = ctx.emit("Einsum", {ctx.value("self", t), ctx.value("other", t)}, {ctx.output()});
  set_attr(e, "equation", la + "," + lb + "->" + out);
}

// chain_matmul(matrices) / linalg_multi_dot(tensors): left to right MatMuls (a 1-D first / last operand is
// a row / column vector, as MatMul treats it; torch picks another association order, which changes only
// the rounding).
void matmul_chain(TranslateContext& ctx, const std::string& arg) {
  const DType t = ctx.output_meta().dtype;
  const auto values = ctx.tensors(arg);
  if (values.empty()) ctx.fail("a matmul chain of no tensors");
  std::string acc =
      ctx.cast_if_needed(values[0], ctx.fx_graph.meta(ctx.required(arg).tensor_names()[0], ctx.node.name).dtype, t);
  for (size_t i = 1; i < values.size(); ++i) acc = ctx.emit1("MatMul", {acc, values[i]});
  ctx.alias_output(0, values.size() == 1 ? ctx.emit1("Identity", {acc}) : acc);
}
void chain_matmul(TranslateContext& ctx) { matmul_chain(ctx, "matrices"); }
void linalg_multi_dot(TranslateContext& ctx) { matmul_chain(ctx, "tensors"); }

// An identity matrix shaped like x ([..., n, n]) in dtype t.
std::string identity_like(TranslateContext& ctx, const std::string& x, DType t) {
  const std::string n =
      ctx.emit1("Slice", {shape_of(ctx, x), i64s(ctx, {-1}), i64s(ctx, {std::numeric_limits<int64_t>::max()})});
  const std::string range =
      ctx.emit1("Range", {ctx.graph.constant_i64({0}, true), ctx.emit1("Squeeze", {n, i64s(ctx, {0})}),
                          ctx.graph.constant_i64({1}, true)});
  const std::string eq = ctx.emit1("Equal", {ctx.emit1("Unsqueeze", {range, i64s(ctx, {1})}), range});
  return ctx.emit1("Expand", {ctx.cast_if_needed(eq, DType::kBool, t), shape_of(ctx, x)});
}

// matrix_power(self, n) / linalg_matrix_power(self, n): binary exponentiation with MatMul, as torch does;
// n = 0 is the identity; a negative n raises the inverse (Gauss-Jordan, as linalg_inv) to -n.
void matrix_power(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const int64_t n = ctx.int_arg("n", 1);
  std::string x = ctx.value("self", t);
  if (n < 0) x = gauss_jordan_inverse(ctx, x, static_size(ctx, "self", -1), t);
  if (n == 0) return ctx.alias_output(0, identity_like(ctx, x, t));
  std::string result, base = x;
  for (int64_t k = std::abs(n);; k >>= 1) {
    if (k & 1) result = result.empty() ? base : ctx.emit1("MatMul", {result, base});
    if (k <= 1) break;
    base = ctx.emit1("MatMul", {base, base});
  }
  ctx.alias_output(0, result == ctx.tensor("self") ? ctx.emit1("Identity", {result}) : result);
}

// slogdet(self) / linalg_slogdet(A) -> (sign, log|det|) from ONNX Det (torch goes through an LU
// factorisation: the values agree to rounding; a singular matrix gives sign 0 and -inf in both).
void slogdet(TranslateContext& ctx) {
  const std::string det = ctx.emit1("Det", {ctx.tensor(ctx.arg("A") ? "A" : "self")});
  ctx.emit("Sign", {det}, {ctx.output(0)});
  ctx.emit("Log", {ctx.emit1("Abs", {det})}, {ctx.output(1)});
}

// A matrix norm's order: fro, nuc, or a number (+-1, +-2, +-inf).
struct MatrixOrd {
  bool fro = false, nuc = false;
  double p = 0;
};
MatrixOrd matrix_ord(TranslateContext& ctx, const pt2::Argument& ord) {
  MatrixOrd o;
  if (!ord.is(pt2::ArgKind::as_string)) {
    o.p = ord.as_float();
    if (std::abs(o.p) != 1 && std::abs(o.p) != 2 && !std::isinf(o.p))
      ctx.fail("matrix norm of order " + std::to_string(o.p) + ": torch accepts 1, -1, 2, -2, inf, -inf, fro, nuc");
  } else if (ord.as_string() == "fro") {
    o.fro = true;
  } else if (ord.as_string() == "nuc") {
    o.nuc = true;
  } else {
    ctx.fail("matrix norm '" + ord.as_string() + "': torch accepts fro and nuc");
  }
  return o;
}

// The sum / max / min of the singular values of x over dims (d0, d1) (moved last; static sizes from `arg`).
void singular_value_norm(TranslateContext& ctx, const std::string& x, const std::string& arg, const MatrixOrd& o,
                         int64_t d0, int64_t d1, bool keep, const std::string& out) {
  const int64_t rank = ctx.rank(arg);
  const std::string moved = move_dims_last(ctx, x, rank, d0, d1);
  const std::string sv =
      singular_values(ctx, moved, static_size(ctx, arg, d0), static_size(ctx, arg, d1), rank, ctx.output_meta().dtype);
  const char* reduce = o.nuc ? "ReduceSum" : o.p > 0 ? "ReduceMax" : "ReduceMin";
  const std::string r = keep ? ctx.temp("norm") : out;
  emit_reduce(ctx, reduce, sv, {-1}, false, r);
  if (keep) ctx.emit("Unsqueeze", {r, i64s(ctx, {std::min(d0, d1), std::max(d0, d1)})}, {out});
}

// The matrix norm `o` of x (the value of tensor argument `arg`, or of a matrix of its shape) over dims
// (d0, d1): fro = sqrt(sum x^2), +-1 = max / min over d1 of the column sums of |x| over d0, +-inf the same
// with the dims swapped, +-2 and nuc from the singular values.
void matrix_norm_of(TranslateContext& ctx, const std::string& x, const std::string& arg, const MatrixOrd& o, int64_t d0,
                    int64_t d1, bool keep, const std::string& out) {
  if (o.fro) return (void)emit_reduce(ctx, "ReduceL2", x, {d0, d1}, keep, out);
  if (o.nuc || std::abs(o.p) == 2) return singular_value_norm(ctx, x, arg, o, d0, d1, keep, out);
  if (std::isinf(o.p)) std::swap(d0, d1);
  const std::string sums = ctx.temp("abs_sums");
  emit_reduce(ctx, "ReduceSum", ctx.emit1("Abs", {x}), {d0}, true, sums);
  const std::string m = keep ? out : ctx.temp("norm_kept");
  emit_reduce(ctx, o.p > 0 ? "ReduceMax" : "ReduceMin", sums, {d1}, true, m);
  if (!keep) ctx.emit("Squeeze", {m, i64s(ctx, {std::min(d0, d1), std::max(d0, d1)})}, {out});
}

// The input cast to the output dtype (`dtype` argument or the input's own).
std::string norm_input(TranslateContext& ctx, const char* arg) { return ctx.value(arg, ctx.output_meta().dtype); }

void linalg_matrix_norm(TranslateContext& ctx) {
  const int64_t rank = ctx.rank("self");
  const auto dims = ctx.ints_arg("dim", {-2, -1});
  if (dims.size() != 2) ctx.fail("linalg_matrix_norm needs two dims");
  const int64_t d0 = ctx.normalized_dim(dims[0], rank), d1 = ctx.normalized_dim(dims[1], rank);
  MatrixOrd o;
  o.fro = !ctx.has("ord");  // str_ord's default "fro" may be left out of the node
  if (ctx.has("ord")) o = matrix_ord(ctx, ctx.required("ord"));
  matrix_norm_of(ctx, norm_input(ctx, "self"), "self", o, d0, d1, ctx.bool_arg("keepdim", false), ctx.output());
}

// linalg_norm(self, ord?, dim?, keepdim, dtype?): a matrix norm when two dims are named (or ord is given
// for a 2-D input without dims), else the vector norm of `ord` (default 2) over dim, or over every
// element when dim is absent.
void linalg_norm(TranslateContext& ctx) {
  const int64_t rank = ctx.rank("self");
  const bool keep = ctx.bool_arg("keepdim", false);
  const std::string x = norm_input(ctx, "self");
  std::vector<int64_t> dims = ctx.has("dim") ? ctx.ints_arg("dim") : std::vector<int64_t>{};
  const pt2::Argument* ord = ctx.arg("ord");
  const bool has_ord = ord && !ord->is_none();
  const bool str = has_ord && ord->is(pt2::ArgKind::as_string);
  if (dims.empty() && has_ord) {
    if (rank != 1 && rank != 2) ctx.fail("linalg_norm with ord and no dim needs a 1-D or 2-D input");
    for (int64_t d = 0; d < rank; ++d) dims.push_back(d);
  }
  if (dims.size() == 2) {
    const int64_t d0 = ctx.normalized_dim(dims[0], rank), d1 = ctx.normalized_dim(dims[1], rank);
    MatrixOrd o;
    o.fro = !has_ord;
    if (has_ord) o = matrix_ord(ctx, *ord);
    return matrix_norm_of(ctx, x, "self", o, d0, d1, keep, ctx.output());
  }
  if (str) ctx.fail("linalg_norm: a string ord needs two dims");
  const double p = has_ord ? ord->as_float() : 2.0;
  std::vector<int64_t> axes;
  for (int64_t d : dims) axes.push_back(ctx.normalized_dim(d, rank));
  const std::string out = ctx.output();
  const std::string ax = ctx.emit1("Abs", {x});
  const DType t = ctx.output_meta().dtype;
  if (p == 2.0) return (void)emit_reduce(ctx, "ReduceL2", x, axes, keep, out);
  if (p == 1.0) return (void)emit_reduce(ctx, "ReduceL1", x, axes, keep, out);
  if (std::isinf(p)) return (void)emit_reduce(ctx, p > 0 ? "ReduceMax" : "ReduceMin", ax, axes, keep, out);
  if (p == 0.0) {
    const std::string nz =
        ctx.cast_if_needed(ctx.emit1("Not", {ctx.emit1("Equal", {x, ctx.constant(0, t)})}), DType::kBool, t);
    return (void)emit_reduce(ctx, "ReduceSum", nz, axes, keep, out);
  }
  const std::string s = ctx.temp("sum_pow");
  emit_reduce(ctx, "ReduceSum", ctx.emit1("Pow", {ax, ctx.constant(p, t)}), axes, keep, s);
  ctx.emit("Pow", {s, ctx.constant(1.0 / p, t)}, {out});
}

// linalg_cond(self, p?) / .p_str: s_max / s_min for p absent or 2 (s_min / s_max for -2), else
// norm(A, p) * norm(A^-1, p) (fro, nuc, +-1, +-inf; the inverse by Gauss-Jordan elimination).
void linalg_cond(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const pt2::Argument* p = ctx.arg("p");
  const std::string a = ctx.value("self", t);
  const int64_t rank = ctx.rank("self");
  MatrixOrd o;
  o.p = 2;
  if (p && !p->is_none()) o = matrix_ord(ctx, *p);
  if (!o.fro && !o.nuc && std::abs(o.p) == 2) {
    const std::string sv = singular_values(ctx, a, static_size(ctx, "self", -2), static_size(ctx, "self", -1), rank, t);
    const std::string hi = ctx.temp("largest"), lo = ctx.temp("smallest");
    emit_reduce(ctx, "ReduceMax", sv, {-1}, false, hi);
    emit_reduce(ctx, "ReduceMin", sv, {-1}, false, lo);
    return (void)ctx.emit("Div", o.p > 0 ? std::vector<std::string>{hi, lo} : std::vector<std::string>{lo, hi},
                          {ctx.output()});
  }
  const std::string inv = gauss_jordan_inverse(ctx, a, static_size(ctx, "self", -1), t);
  const std::string na = ctx.temp("norm"), ni = ctx.temp("inverse_norm");
  matrix_norm_of(ctx, a, "self", o, rank - 2, rank - 1, false, na);
  matrix_norm_of(ctx, inv, "self", o, rank - 2, rank - 1, false, ni);
  ctx.emit("Mul", {na, ni}, {ctx.output()});
}

// matrix_exp(self): Higham's scaling and squaring with the [13/13] Pade approximant: A / 2^s with
// s = max(0, ceil(log2(|A|_1 / 5.37))) per matrix (computed at run time), R = (V - U)^-1 (V + U), then R
// squared s times (up to 30: a norm beyond 5.37 * 2^30 overflows float anyway). torch selects a Taylor
// degree instead; both are accurate to rounding.
void matrix_exp(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const int64_t n = static_size(ctx, "self", -1);
  std::string a = ctx.value("self", t);
  const std::string col_sums = ctx.temp("column_sums"), norm = ctx.temp("norm1");
  emit_reduce(ctx, "ReduceSum", ctx.emit1("Abs", {a}), {-2}, true, col_sums);
  emit_reduce(ctx, "ReduceMax", col_sums, {-1}, true, norm);  // [..., 1, 1]
  const std::string s = ctx.emit1(
      "Max",
      {ctx.emit1("Ceil",
                 {ctx.emit1("Div", {ctx.emit1("Log", {ctx.emit1("Div", {norm, ctx.constant(5.371920351148152, t)})}),
                                    ctx.constant(std::log(2.0), t)})}),
       ctx.constant(0, t)});
  a = ctx.emit1("Div", {a, ctx.emit1("Pow", {ctx.constant(2, t), s})});
  const double b[14] = {64764752532480000.,
                        32382376266240000.,
                        7771770303897600.,
                        1187353796428800.,
                        129060195264000.,
                        10559470521600.,
                        670442572800.,
                        33522128640.,
                        1323241920.,
                        40840800.,
                        960960.,
                        16380.,
                        182.,
                        1.};
  const std::string eye = identity_like(ctx, a, t);
  const std::string a2 = ctx.emit1("MatMul", {a, a}), a4 = ctx.emit1("MatMul", {a2, a2}),
                    a6 = ctx.emit1("MatMul", {a4, a2});
  auto combo = [&](double c6, double c4, double c2, double c0) {
    std::string v =
        ctx.emit1("Add", {ctx.emit1("Mul", {a6, ctx.constant(c6, t)}), ctx.emit1("Mul", {a4, ctx.constant(c4, t)})});
    v = ctx.emit1("Add", {v, ctx.emit1("Mul", {a2, ctx.constant(c2, t)})});
    return c0 == 0 ? v : ctx.emit1("Add", {v, ctx.emit1("Mul", {eye, ctx.constant(c0, t)})});
  };
  const std::string u = ctx.emit1(
      "MatMul",
      {a, ctx.emit1("Add", {ctx.emit1("MatMul", {a6, combo(b[13], b[11], b[9], 0)}), combo(b[7], b[5], b[3], b[1])})});
  const std::string v =
      ctx.emit1("Add", {ctx.emit1("MatMul", {a6, combo(b[12], b[10], b[8], 0)}), combo(b[6], b[4], b[2], b[0])});
  std::string r =
      ctx.emit1("MatMul", {gauss_jordan_inverse(ctx, ctx.emit1("Sub", {v, u}), n, t), ctx.emit1("Add", {v, u})});
  for (int k = 0; k < 30; ++k)
    r = ctx.emit1("Where", {ctx.emit1("Less", {ctx.constant(k, t), s}), ctx.emit1("MatMul", {r, r}), r});
  ctx.alias_output(0, r);
}

// Columns 1, x, x*x, ... (N of them, each the previous times x: torch's cumprod), along a new last dim.
std::vector<std::string> power_columns(TranslateContext& ctx, const std::string& x, int64_t n, DType t) {
  std::vector<std::string> cols;
  const std::string xc = ctx.emit1("Unsqueeze", {x, i64s(ctx, {-1})});
  for (int64_t k = 0; k < n; ++k)
    cols.push_back(k == 0   ? ctx.emit1("Expand", {ctx.constant(1, t), shape_of(ctx, xc)})
                   : k == 1 ? xc
                            : ctx.emit1("Mul", {cols.back(), xc}));
  return cols;
}

// vander(x, N?, increasing=False) / linalg_vander(x, N?) (always increasing): N static, taken from the output.
void vander_of(TranslateContext& ctx, const char* arg, bool increasing) {
  const DType t = ctx.output_meta().dtype;
  const auto& sizes = ctx.output_meta().sizes;
  if (sizes.empty() || !sizes.back().value) ctx.fail("vander with a symbolic number of columns");
  const int64_t n = *sizes.back().value;
  if (n == 0) ctx.fail("vander with N = 0");
  auto cols = power_columns(ctx, ctx.value(arg, t), n, t);
  if (!increasing) std::reverse(cols.begin(), cols.end());
  if (cols.size() == 1) return ctx.alias_output(0, ctx.emit1("Identity", {cols[0]}));
  set_attr(ctx.emit("Concat", cols, {ctx.output()}), "axis", int64_t{-1});
}
void vander(TranslateContext& ctx) { vander_of(ctx, "x", ctx.bool_arg("increasing", false)); }
void linalg_vander(TranslateContext& ctx) { vander_of(ctx, "x", true); }

// cartesian_prod(tensors): the meshgrid ("ij") of 1-D inputs, each flattened into one column.
void cartesian_prod(TranslateContext& ctx) {
  const auto values = ctx.tensors("tensors");
  const size_t n = values.size();
  if (n == 1) return ctx.alias_output(0, ctx.emit1("Identity", {values[0]}));
  std::vector<std::string> sizes;
  for (const auto& v : values) sizes.push_back(shape_of(ctx, v));
  const std::string grid = concat(ctx, sizes, 0, "grid_shape");
  std::vector<std::string> cols;
  for (size_t i = 0; i < n; ++i) {
    std::vector<int64_t> lay(n, 1);
    lay[i] = -1;
    const std::string g = ctx.emit1("Expand", {ctx.emit1("Reshape", {values[i], i64s(ctx, lay)}), grid});
    cols.push_back(ctx.emit1("Reshape", {g, i64s(ctx, {-1, 1})}));
  }
  set_attr(ctx.emit("Concat", cols, {ctx.output()}), "axis", int64_t{1});
}

// combinations(self, r=2, with_replacement=False): the index tuples are enumerated at export time in
// torch's (lexicographic) order from the static length, then one Gather; no tuple gives [0, r].
void combinations(TranslateContext& ctx) {
  const int64_t n = static_size(ctx, "self", 0), r = ctx.int_arg("r", 2);
  const bool repl = ctx.bool_arg("with_replacement", false);
  if (r <= 0) ctx.fail("combinations with r <= 0");
  std::vector<int64_t> flat, cur;
  std::function<void(int64_t)> walk = [&](int64_t from) {
    if (static_cast<int64_t>(cur.size()) == r) return (void)flat.insert(flat.end(), cur.begin(), cur.end());
    for (int64_t i = from; i < n; ++i) {
      cur.push_back(i);
      walk(repl ? i : i + 1);
      cur.pop_back();
    }
  };
  walk(0);
  const int64_t rows = static_cast<int64_t>(flat.size()) / r;
  Tensor idx(DType::kInt64, {rows, r});
  std::copy(flat.begin(), flat.end(), idx.data<int64_t>());
  const std::string name = ctx.graph.unique_name(ctx.node.name + "_tuples");
  ctx.graph.add_initializer(name, idx);
  ctx.emit("Gather", {ctx.tensor("self"), name}, {ctx.output()});
}

}  // namespace

PARITY_TRANSLATION("aten::kron.default", kron, 18);
PARITY_TRANSLATION("aten::tensordot.default", tensordot, 18);
PARITY_TRANSLATION("aten::chain_matmul.default", chain_matmul, 18);
PARITY_TRANSLATION("aten::linalg_multi_dot.default", linalg_multi_dot, 18);
PARITY_TRANSLATION("aten::matrix_power.default", matrix_power, 18);
PARITY_TRANSLATION("aten::linalg_matrix_power.default", matrix_power, 18);
PARITY_TRANSLATION("aten::slogdet.default", slogdet, 18);
PARITY_TRANSLATION("aten::linalg_slogdet.default", slogdet, 18);
PARITY_TRANSLATION("aten::linalg_matrix_norm.default", linalg_matrix_norm, 18);
PARITY_TRANSLATION("aten::linalg_matrix_norm.str_ord", linalg_matrix_norm, 18);
PARITY_TRANSLATION("aten::linalg_norm.default", linalg_norm, 18);
PARITY_TRANSLATION("aten::linalg_norm.ord_str", linalg_norm, 18);
PARITY_TRANSLATION("aten::linalg_cond.default", linalg_cond, 18);
PARITY_TRANSLATION("aten::linalg_cond.p_str", linalg_cond, 18);
PARITY_TRANSLATION("aten::matrix_exp.default", matrix_exp, 18);
PARITY_TRANSLATION("aten::vander.default", vander, 18);
PARITY_TRANSLATION("aten::linalg_vander.default", linalg_vander, 18);
PARITY_TRANSLATION("aten::cartesian_prod.default", cartesian_prod, 18);
PARITY_TRANSLATION("aten::combinations.default", combinations, 18);

}  // namespace parity::exporter
