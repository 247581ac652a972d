// CompositeImplicitAutograd ATen ops that torch.export keeps in a (non-strict, training-IR) program:
// torch would decompose them into core ATen, a saved .pt2 still holds them. Each is written out here with
// the same formula torch's composite uses, so results match eager bit for bit where the ops allow.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <utility>

#include "../src/translate.h"

namespace parity::exporter {
namespace {

constexpr int64_t kEnd = std::numeric_limits<int64_t>::max();

std::string i64s(TranslateContext& ctx, std::vector<int64_t> v) { return ctx.graph.constant_i64(v); }

// x[..., start:end, ...] along one axis.
std::string slice_axis(TranslateContext& ctx, const std::string& x, int64_t axis, int64_t start, int64_t end) {
  return ctx.emit1("Slice", {x, i64s(ctx, {start}), i64s(ctx, {end}), i64s(ctx, {axis})});
}

// The metadata of the i-th tensor of a Tensor[] argument.
const pt2::TensorMeta& list_meta(TranslateContext& ctx, const std::string& arg, size_t i) {
  return ctx.fx_graph.meta(ctx.required(arg).tensor_names().at(i), ctx.node.name);
}

// reshape_as(self, other): self with other's shape.
void reshape_as(TranslateContext& ctx) {
  ctx.emit("Reshape", {ctx.tensor("self"), shape_of(ctx, ctx.tensor("other"))}, {ctx.output()});
}

// meshgrid(tensors, indexing="ij"): output i is input i (0-d or 1-d) laid along axis i and expanded to the
// grid [n0, n1, ...]; "xy" swaps the first two axes of the grid (and so where inputs 0 and 1 lie).
void meshgrid(TranslateContext& ctx) {
  const auto values = ctx.tensors("tensors");
  const size_t n = values.size();
  const bool xy = ctx.string_arg("indexing", "ij") == "xy" && n >= 2;
  auto axis_of = [&](size_t i) { return xy && i < 2 ? 1 - i : i; };
  std::vector<std::string> flat(n), sizes(n);
  for (size_t i = 0; i < n; ++i) {
    flat[i] = ctx.emit1("Reshape", {values[i], i64s(ctx, {-1})});
    sizes[axis_of(i)] = shape_of(ctx, flat[i]);
  }
  auto* grid = ctx.emit("Concat", sizes, {ctx.temp("grid_shape")});
  set_attr(grid, "axis", int64_t{0});
  for (size_t i = 0; i < n; ++i) {
    std::vector<int64_t> lay(n, 1);
    lay[axis_of(i)] = -1;
    ctx.emit("Expand", {ctx.emit1("Reshape", {flat[i], i64s(ctx, lay)}), grid->output(0)}, {ctx.output(i)});
  }
}

// nonzero_numpy(self) / where(condition): one 1-D index tensor per dim of the input (NonZero's rows).
void nonzero_rows(TranslateContext& ctx, const std::string& arg) {
  if (ctx.rank(arg) == 0) ctx.fail("nonzero of a 0-d tensor as a tuple is not supported");
  const std::string nz = ctx.emit1("NonZero", {ctx.tensor(arg)});
  for (size_t i = 0; i < ctx.output_count(); ++i) {
    auto* g = ctx.emit("Gather", {nz, ctx.graph.constant_i64({static_cast<int64_t>(i)}, true)}, {ctx.output(i)});
    set_attr(g, "axis", int64_t{0});
  }
}
void nonzero_numpy(TranslateContext& ctx) { nonzero_rows(ctx, "self"); }
void where_condition(TranslateContext& ctx) { nonzero_rows(ctx, "condition"); }

// diff(self, n=1, dim=-1, prepend?, append?): x[1:] - x[:-1] along dim, n times, after concatenating
// prepend and append; booleans differ by xor, as torch's composite does.
void diff(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const int64_t rank = ctx.rank("self");
  const int64_t dim = ctx.normalized_dim(ctx.int_arg("dim", -1), rank);
  std::vector<std::string> parts;
  if (ctx.has("prepend")) parts.push_back(ctx.value("prepend", t));
  parts.push_back(ctx.value("self", t));
  if (ctx.has("append")) parts.push_back(ctx.value("append", t));
  std::string x = parts[0];
  if (parts.size() > 1) {
    auto* cat = ctx.emit("Concat", parts, {ctx.temp("extended")});
    set_attr(cat, "axis", dim);
    x = cat->output(0);
  }
  const int64_t times = ctx.int_arg("n", 1);
  if (times < 0) ctx.fail("diff with n < 0");
  for (int64_t k = 0; k < times; ++k)
    x = ctx.emit1(t == DType::kBool ? "Xor" : "Sub",
                  {slice_axis(ctx, x, dim, 1, kEnd), slice_axis(ctx, x, dim, 0, -1)});
  ctx.alias_output(0, x);
}

// broadcast_tensors(tensors): every input expanded to their common shape (Expand broadcasts both ways, so
// expanding a chain of empty-cost bool tensors yields that shape, symbolic dims included).
void broadcast_tensors(TranslateContext& ctx) {
  const auto values = ctx.tensors("tensors");
  std::string acc = ctx.emit1("Shape", {values[0]});
  for (size_t i = 1; i < values.size(); ++i) {
    const std::string probe = ctx.emit1("Expand", {ctx.constant(0, DType::kBool), acc});
    acc = ctx.emit1("Shape", {ctx.emit1("Expand", {probe, shape_of(ctx, values[i])})});
  }
  for (size_t i = 0; i < values.size(); ++i) ctx.emit("Expand", {values[i], acc}, {ctx.output(i)});
}

// outer(self, vec2) / ger: self[:, None] * vec2, with torch's type promotion.
void outer(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  ctx.emit("Mul", {ctx.emit1("Unsqueeze", {ctx.value("self", t), i64s(ctx, {1})}), ctx.value("vec2", t)},
           {ctx.output()});
}

// square(self): self * self (booleans count as int64, as torch promotes them).
void square(TranslateContext& ctx) {
  const std::string x = ctx.value("self", ctx.output_meta().dtype);
  ctx.emit("Mul", {x, x}, {ctx.output()});
}

void flip_axis(TranslateContext& ctx, int64_t axis) {
  if (ctx.rank("self") <= axis)
    ctx.fail("flip over dim " + std::to_string(axis) + " of a tensor of rank " + std::to_string(ctx.rank("self")));
  ctx.emit("Slice",
           {ctx.tensor("self"), i64s(ctx, {-1}), i64s(ctx, {std::numeric_limits<int64_t>::min()}), i64s(ctx, {axis}),
            i64s(ctx, {-1})},
           {ctx.output()});
}
void fliplr(TranslateContext& ctx) { flip_axis(ctx, 1); }
void flipud(TranslateContext& ctx) { flip_axis(ctx, 0); }

// hstack / vstack / dstack / column_stack: each input padded to a minimum rank (the way torch's
// atleast_Nd pads it), then one Concat.
enum class Stack { kH, kV, kD, kColumn };
std::string padded_rank(TranslateContext& ctx, const std::string& v, int64_t rank, Stack how) {
  const auto reshape = [&](std::vector<int64_t> s) { return ctx.emit1("Reshape", {v, i64s(ctx, s)}); };
  switch (how) {
    case Stack::kH:
      return rank == 0 ? reshape({1}) : v;
    case Stack::kV:
      return rank == 0 ? reshape({1, 1}) : rank == 1 ? reshape({1, -1}) : v;
    case Stack::kColumn:
      return rank <= 1 ? reshape({-1, 1}) : v;
    case Stack::kD:
      if (rank == 0) return reshape({1, 1, 1});
      if (rank == 1) return reshape({1, -1, 1});
      return rank == 2 ? ctx.emit1("Unsqueeze", {v, i64s(ctx, {2})}) : v;
  }
  return v;
}
void stack_family(TranslateContext& ctx, Stack how) {
  const DType t = ctx.output_meta().dtype;
  const auto values = ctx.tensors("tensors");
  std::vector<std::string> parts;
  int64_t first_rank = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    const auto& meta = list_meta(ctx, "tensors", i);
    const int64_t rank = static_cast<int64_t>(meta.sizes.size());
    if (i == 0) first_rank = rank;
    parts.push_back(padded_rank(ctx, ctx.cast_if_needed(values[i], meta.dtype, t), rank, how));
  }
  const int64_t axis = how == Stack::kV        ? 0
                       : how == Stack::kD      ? 2
                       : how == Stack::kColumn ? 1
                       : first_rank <= 1       ? 0
                                               : 1;
  set_attr(ctx.emit("Concat", parts, {ctx.output()}), "axis", axis);
}
void hstack(TranslateContext& ctx) { stack_family(ctx, Stack::kH); }
void vstack(TranslateContext& ctx) { stack_family(ctx, Stack::kV); }
void dstack(TranslateContext& ctx) { stack_family(ctx, Stack::kD); }
void column_stack(TranslateContext& ctx) { stack_family(ctx, Stack::kColumn); }

// float_power(self, exponent): both in float64, then Pow (torch computes it in double).
void float_power(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  ctx.emit("Pow", {ctx.value("self", t), ctx.value("exponent", t)}, {ctx.output()});
}

// take_along_dim(self, indices, dim?): gather along dim after broadcasting the other dims of self and
// indices (same rank, as torch requires); no dim = along the flattened tensor.
void take_along_dim(TranslateContext& ctx) {
  std::string self = ctx.tensor("self"), idx = ctx.value("indices", DType::kInt64);
  if (!ctx.has("dim")) {
    auto* g = ctx.emit("GatherElements",
                       {ctx.emit1("Reshape", {self, i64s(ctx, {-1})}), ctx.emit1("Reshape", {idx, i64s(ctx, {-1})})},
                       {ctx.output()});
    set_attr(g, "axis", int64_t{0});
    return;
  }
  const int64_t rank = ctx.rank("self");
  if (ctx.rank("indices") != rank) ctx.fail("take_along_dim needs self and indices of the same rank");
  const int64_t dim = ctx.normalized_dim(ctx.int_arg("dim", 0), rank);
  // Each side's shape with `dim` taken from itself and the other dims broadcast (Max of sizes: 1 or equal).
  auto broadcast_except_dim = [&](const std::string& v, const std::string& other) {
    const std::string ones_at_dim =
        ctx.emit1("ScatterElements", {shape_of(ctx, other), i64s(ctx, {dim}), i64s(ctx, {1})});
    return ctx.emit1("Expand", {v, ctx.emit1("Max", {shape_of(ctx, v), ones_at_dim})});
  };
  const std::string s = broadcast_except_dim(self, idx), i = broadcast_except_dim(idx, self);
  // Negative indices count from the end, as in torch's gather.
  auto* g = ctx.emit("GatherElements", {s, i}, {ctx.output()});
  set_attr(g, "axis", dim);
}

// movedim(self, source, destination) / moveaxis: the static permutation torch's composite builds.
void movedim(TranslateContext& ctx) {
  const int64_t rank = ctx.rank("self");
  auto dims = [&](const char* name) {  // movedim.int passes one int, movedim.intlist a list
    const pt2::Argument* a = ctx.arg(name);
    return a && a->is(pt2::ArgKind::as_int) ? std::vector<int64_t>{a->as_int()} : ctx.ints_arg(name);
  };
  const std::vector<int64_t> src = dims("source"), dst = dims("destination");
  if (src.size() != dst.size()) ctx.fail("movedim: source and destination differ in length");
  std::vector<int64_t> perm(static_cast<size_t>(rank), -1);
  std::vector<bool> used(static_cast<size_t>(rank), false);
  for (size_t i = 0; i < src.size(); ++i) {
    const int64_t s = ctx.normalized_dim(src[i], rank), d = ctx.normalized_dim(dst[i], rank);
    perm[static_cast<size_t>(d)] = s;
    used[static_cast<size_t>(s)] = true;
  }
  int64_t next = 0;
  for (auto& p : perm) {
    if (p >= 0) continue;
    while (used[static_cast<size_t>(next)]) ++next;
    p = next++;
  }
  set_attr(ctx.emit("Transpose", {ctx.tensor("self")}, {ctx.output()}), "perm", perm);
}

// swapaxes(self, axis0, axis1).
void swapaxes(TranslateContext& ctx) {
  const int64_t rank = ctx.rank("self");
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d) perm.push_back(d);
  std::swap(perm[static_cast<size_t>(ctx.normalized_dim(ctx.int_arg("axis0", 0), rank))],
            perm[static_cast<size_t>(ctx.normalized_dim(ctx.int_arg("axis1", 0), rank))]);
  set_attr(ctx.emit("Transpose", {ctx.tensor("self")}, {ctx.output()}), "perm", perm);
}

void ravel(TranslateContext& ctx) { ctx.emit("Reshape", {ctx.tensor("self"), i64s(ctx, {-1})}, {ctx.output()}); }

// argwhere(self): [nonzeros, rank], NonZero transposed.
void argwhere(TranslateContext& ctx) {
  set_attr(ctx.emit("Transpose", {ctx.emit1("NonZero", {ctx.tensor("self")})}, {ctx.output()}), "perm",
           std::vector<int64_t>{1, 0});
}

// rrelu(self, lower, upper, training=False): outside training, a leaky relu of slope (lower + upper) / 2.
void rrelu(TranslateContext& ctx) {
  if (ctx.bool_arg("training", false)) ctx.fail("rrelu with training=True samples random slopes: not supported");
  const double slope = (ctx.float_arg("lower", 1.0 / 8) + ctx.float_arg("upper", 1.0 / 3)) / 2;
  const DType t = ctx.output_meta().dtype;
  const std::string x = ctx.tensor("self");
  const std::string neg = ctx.emit1("Less", {x, ctx.constant(0, t)});
  ctx.emit("Where", {neg, ctx.emit1("Mul", {x, ctx.constant(slope, t)}), x}, {ctx.output()});
}

// Casts to the output dtype: _cast_Float(self, non_blocking), to.other(self, other, ...).
void cast_to_output(TranslateContext& ctx) { ctx.alias_output(0, ctx.value("self", ctx.output_meta().dtype)); }

void shape_as_tensor(TranslateContext& ctx) { ctx.emit("Shape", {ctx.tensor("self")}, {ctx.output()}); }

// frobenius_norm(self, dim, keepdim).
void frobenius_norm(TranslateContext& ctx) {
  const int64_t rank = ctx.rank("self");
  std::vector<int64_t> axes = ctx.ints_arg("dim");
  for (auto& a : axes) a = ctx.normalized_dim(a, rank);
  emit_reduce(ctx, "ReduceL2", ctx.value("self", ctx.output_meta().dtype), axes, ctx.bool_arg("keepdim", false),
              ctx.output());
}

// narrow.Tensor(self, dim, start: 0-d tensor, length): Slice from start (negative counts from the end).
void narrow_tensor(TranslateContext& ctx) {
  const int64_t dim = ctx.normalized_dim(ctx.int_arg("dim", 0), ctx.rank("self"));
  const std::string x = ctx.tensor("self");
  std::string start = ctx.emit1("Reshape", {ctx.value("start", DType::kInt64), i64s(ctx, {1})});
  const std::string size = ctx.emit1("Slice", {shape_of(ctx, x), i64s(ctx, {dim}), i64s(ctx, {dim + 1})});
  start = ctx.emit1("Where", {ctx.emit1("Less", {start, i64s(ctx, {0})}), ctx.emit1("Add", {start, size}), start});
  const std::string end = ctx.emit1("Add", {start, unsqueeze0(ctx, ctx.int_value("length"))});
  ctx.emit("Slice", {x, start, end, i64s(ctx, {dim})}, {ctx.output()});
}

// linalg_vecdot(x, y, dim=-1) = sum(x * y, dim) (real tensors: conj is the identity).
void linalg_vecdot(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const int64_t rank = std::max(ctx.rank("x"), ctx.rank("y"));
  emit_reduce(ctx, "ReduceSum", ctx.emit1("Mul", {ctx.value("x", t), ctx.value("y", t)}),
              {ctx.normalized_dim(ctx.int_arg("dim", -1), rank) - rank}, false, ctx.output());
}

// inner(self, other): sums self's and other's last dims against each other; out = self.shape[:-1] + other.shape[:-1].
void inner(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const int64_t ra = ctx.rank("self"), rb = ctx.rank("other");
  const std::string a = ctx.value("self", t), b = ctx.value("other", t);
  if (ra == 0 || rb == 0) return (void)ctx.emit("Mul", {a, b}, {ctx.output()});
  if (ra + rb - 1 > 25) ctx.fail("inner of tensors with too many dims");
  std::string la, lb, lo;
  for (int64_t i = 0; i < ra - 1; ++i) la += static_cast<char>('a' + i);
  for (int64_t i = 0; i < rb - 1; ++i) lb += static_cast<char>('a' + ra - 1 + i);
  auto* e = ctx.emit("Einsum", {a, b}, {ctx.output()});
  set_attr(e, "equation", la + "z," + lb + "z->" + la + lb);
}

// isreal(self): every element of a real tensor is real.
void isreal(TranslateContext& ctx) {
  ctx.emit("Expand", {ctx.constant(1, DType::kBool), shape_of(ctx, ctx.tensor("self"))}, {ctx.output()});
}

// msort(self): sort along dim 0 (values only), TopK smallest-first.
void msort(TranslateContext& ctx) {
  const std::string x = ctx.tensor("self");
  auto* k = ctx.emit("TopK", {x, ctx.emit1("Slice", {shape_of(ctx, x), i64s(ctx, {0}), i64s(ctx, {1})})},
                     {ctx.output(), ctx.temp("order")});
  set_attr(k, "axis", int64_t{0});
  set_attr(k, "largest", int64_t{0});
}

// A static size of every dim of a tensor argument.
std::vector<int64_t> static_sizes(TranslateContext& ctx, const std::string& arg) {
  std::vector<int64_t> out;
  for (const auto& d : ctx.input_meta(arg).sizes) {
    if (!d.value) ctx.fail("'" + arg + "' needs a static shape");
    out.push_back(*d.value);
  }
  return out;
}

// The diagonal `offset` of the (static) dims d1, d2 of x, appended as the last dim (torch's
// diagonal/linalg_diagonal): both dims moved last, merged, and one Gather of the diagonal's flat positions.
std::string diagonal_of(TranslateContext& ctx, const std::string& x, std::vector<int64_t> sizes, int64_t offset,
                        int64_t d1, int64_t d2) {
  const int64_t rank = static_cast<int64_t>(sizes.size());
  std::vector<int64_t> perm, shape;
  for (int64_t d = 0; d < rank; ++d)
    if (d != d1 && d != d2) {
      perm.push_back(d);
      shape.push_back(sizes[static_cast<size_t>(d)]);
    }
  perm.push_back(d1);
  perm.push_back(d2);
  const int64_t rows = sizes[static_cast<size_t>(d1)], cols = sizes[static_cast<size_t>(d2)];
  std::vector<int64_t> idx;
  for (int64_t i = std::max<int64_t>(0, -offset); i < rows && i + offset < cols; ++i)
    idx.push_back(i * cols + i + offset);
  const std::string moved = ctx.temp("moved");
  set_attr(ctx.emit("Transpose", {x}, {moved}), "perm", perm);
  shape.push_back(rows * cols);
  const std::string flat = ctx.emit1("Reshape", {moved, i64s(ctx, shape)});
  if (idx.empty()) return slice_axis(ctx, flat, -1, 0, 0);
  auto* g = ctx.emit("Gather", {flat, i64s(ctx, idx)}, {ctx.temp("diagonal")});
  set_attr(g, "axis", int64_t{-1});
  return g->output(0);
}

// A 1-D v laid on diagonal `offset` of a square matrix of side n + |offset|, zeros elsewhere.
std::string diag_matrix(TranslateContext& ctx, const std::string& v, int64_t offset, DType t) {
  const int64_t k = std::abs(offset);
  const std::string n = ctx.emit1("Add", {shape_of(ctx, v), i64s(ctx, {k})});
  const std::string side = ctx.emit1("Squeeze", {n, i64s(ctx, {0})});
  const std::string range =
      ctx.emit1("Range", {ctx.graph.constant_i64({0}, true), side, ctx.graph.constant_i64({1}, true)});
  // on[i, j]: j - i == offset.
  const std::string on = ctx.emit1("Equal", {ctx.emit1("Sub", {ctx.emit1("Unsqueeze", {range, i64s(ctx, {0})}),
                                                               ctx.emit1("Unsqueeze", {range, i64s(ctx, {1})})}),
                                             ctx.graph.constant_i64({offset}, true)});
  auto* pad = ctx.emit("Pad", {v, i64s(ctx, {0, k})}, {ctx.temp("padded")});
  set_attr(pad, "mode", std::string("constant"));
  // Row i holds v[i] (offset >= 0); column j holds v[j] (offset < 0).
  const std::string laid = ctx.emit1("Unsqueeze", {pad->output(0), i64s(ctx, {offset >= 0 ? 1 : 0})});
  return ctx.emit1("Where", {on, laid, ctx.constant(0, t)});
}

// diag(self, diagonal): a 1-D input becomes a diagonal matrix, a 2-D one gives its diagonal.
void diag(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const int64_t offset = ctx.int_arg("diagonal", 0);
  if (ctx.rank("self") == 1) return ctx.alias_output(0, diag_matrix(ctx, ctx.tensor("self"), offset, t));
  if (ctx.rank("self") != 2) ctx.fail("diag needs a 1-D or 2-D input");
  ctx.alias_output(0, diagonal_of(ctx, ctx.tensor("self"), static_sizes(ctx, "self"), offset, 0, 1));
}

// diagflat(self, offset): the flattened input laid on a diagonal.
void diagflat(TranslateContext& ctx) {
  const std::string flat = ctx.emit1("Reshape", {ctx.tensor("self"), i64s(ctx, {-1})});
  ctx.alias_output(0, diag_matrix(ctx, flat, ctx.int_arg("offset", 0), ctx.output_meta().dtype));
}

// linalg_diagonal(A, offset, dim1=-2, dim2=-1).
void linalg_diagonal(TranslateContext& ctx) {
  const int64_t rank = ctx.rank("A");
  const int64_t d1 = ctx.normalized_dim(ctx.int_arg("dim1", -2), rank),
                d2 = ctx.normalized_dim(ctx.int_arg("dim2", -1), rank);
  if (d1 == d2) ctx.fail("linalg_diagonal: dim1 and dim2 are the same");
  ctx.alias_output(0, diagonal_of(ctx, ctx.tensor("A"), static_sizes(ctx, "A"), ctx.int_arg("offset", 0), d1, d2));
}

// sum_to_size(self, size): sums the leading dims self has beyond `size` and the dims `size` has as 1.
void sum_to_size(TranslateContext& ctx) {
  const auto& in = ctx.input_meta("self").sizes;
  const int64_t rank = static_cast<int64_t>(in.size());
  const auto size = ctx.ints_arg("size");
  const int64_t lead = rank - static_cast<int64_t>(size.size());
  if (lead < 0) ctx.fail("sum_to_size: size has more dims than self");
  std::string x = ctx.tensor("self");
  std::vector<int64_t> axes;
  for (int64_t d = lead; d < rank; ++d) {
    const auto& dim = in[static_cast<size_t>(d)];
    if (size[static_cast<size_t>(d - lead)] == 1 && !(dim.value && *dim.value == 1)) axes.push_back(d);
  }
  if (!axes.empty()) {
    const std::string kept = ctx.temp("kept");
    emit_reduce(ctx, "ReduceSum", x, axes, true, kept);
    x = kept;
  }
  if (lead > 0) {
    std::vector<int64_t> leading;
    for (int64_t d = 0; d < lead; ++d) leading.push_back(d);
    const std::string out = ctx.temp("summed");
    emit_reduce(ctx, "ReduceSum", x, leading, false, out);
    x = out;
  }
  ctx.alias_output(0, x == ctx.tensor("self") ? ctx.emit1("Identity", {x}) : x);
}

// _dim_arange(like, dim) = arange(like.size(dim)) (int64).
void dim_arange(TranslateContext& ctx) {
  const int64_t dim = ctx.normalized_dim(ctx.int_arg("dim", 0), ctx.rank("like"));
  const std::string n = element(ctx, shape_of(ctx, ctx.tensor("like")), dim);
  ctx.emit("Range", {ctx.graph.constant_i64({0}, true), n, ctx.graph.constant_i64({1}, true)}, {ctx.output()});
}

// _reshape_from_tensor(self, shape): the shape comes as a 1-D tensor.
void reshape_from_tensor(TranslateContext& ctx) {
  ctx.emit("Reshape", {ctx.tensor("self"), ctx.value("shape", DType::kInt64)}, {ctx.output()});
}

// repeat_interleave.self_Tensor(self, repeats, dim?, output_size?): each slice along dim repeated
// repeats[i] times (one count broadcasts); no dim = over the flattened tensor. Output position p takes
// the slice whose cumulative count first exceeds p.
void repeat_interleave_tensor(TranslateContext& ctx) {
  std::string x = ctx.tensor("self");
  int64_t dim = 0;
  if (ctx.has("dim"))
    dim = ctx.normalized_dim(ctx.int_arg("dim", 0), std::max<int64_t>(ctx.rank("self"), 1));
  else
    x = ctx.emit1("Reshape", {x, i64s(ctx, {-1})});
  const std::string n = ctx.emit1("Slice", {shape_of(ctx, x), i64s(ctx, {dim}), i64s(ctx, {dim + 1})});
  const std::string reps =
      ctx.emit1("Expand", {ctx.emit1("Reshape", {ctx.value("repeats", DType::kInt64), i64s(ctx, {-1})}), n});
  auto* cs = ctx.emit("CumSum", {reps, ctx.graph.constant_i64({0}, true)}, {ctx.temp("ends")});
  const std::string total = ctx.temp("total");
  emit_reduce(ctx, "ReduceSum", reps, {}, false, total);
  const std::string pos =
      ctx.emit1("Range", {ctx.graph.constant_i64({0}, true), total, ctx.graph.constant_i64({1}, true)});
  const std::string le = ctx.emit1("LessOrEqual", {ctx.emit1("Unsqueeze", {cs->output(0), i64s(ctx, {0})}),
                                                   ctx.emit1("Unsqueeze", {pos, i64s(ctx, {1})})});
  const std::string idx = ctx.temp("source");
  emit_reduce(ctx, "ReduceSum", ctx.cast_if_needed(le, DType::kBool, DType::kInt64), {1}, false, idx);
  set_attr(ctx.emit("Gather", {x, idx}, {ctx.output()}), "axis", dim);
}

// tensor_split.tensor_indices_or_sections(self, tensor, dim): a 1-D tensor of split indices, or a 0-d
// section count (the first size % n pieces one longer); the piece count is the node's output count.
void tensor_split_tensor(TranslateContext& ctx) {
  const int64_t dim = ctx.normalized_dim(ctx.int_arg("dim", 0), ctx.rank("self"));
  const std::string x = ctx.tensor("self"), axis = i64s(ctx, {dim});
  const std::string arg = ctx.value("tensor_indices_or_sections", DType::kInt64);
  const std::string len = ctx.emit1("Slice", {shape_of(ctx, x), axis, i64s(ctx, {dim + 1})});
  const size_t pieces = ctx.output_count();
  std::vector<std::string> bounds = {i64s(ctx, {0})};
  if (ctx.rank("tensor_indices_or_sections") == 1) {
    for (size_t i = 0; i + 1 < pieces; ++i) {
      const std::string at = ctx.emit1("Gather", {arg, i64s(ctx, {static_cast<int64_t>(i)})});
      // Negative indices count from the end, indices past the end clamp (Slice does both).
      bounds.push_back(ctx.emit1("Where", {ctx.emit1("Less", {at, i64s(ctx, {0})}), ctx.emit1("Add", {at, len}), at}));
    }
  } else {
    const std::string n = ctx.emit1("Reshape", {arg, i64s(ctx, {1})});
    const std::string base = ctx.emit1("Div", {len, n}), extra = ctx.emit1("Mod", {len, n});
    for (size_t i = 1; i < pieces; ++i) {
      const std::string k = i64s(ctx, {static_cast<int64_t>(i)});
      bounds.push_back(ctx.emit1("Add", {ctx.emit1("Mul", {base, k}), ctx.emit1("Min", {k, extra})}));
    }
  }
  bounds.push_back(i64s(ctx, {kEnd}));
  for (size_t i = 0; i < pieces; ++i) {
    ctx.emit("Slice", {x, bounds[i], bounds[i + 1], axis}, {ctx.output(i)});
  }
}

// flatten_dense_tensors(tensors): every tensor flattened, concatenated.
void flatten_dense_tensors(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const auto values = ctx.tensors("tensors");
  std::vector<std::string> flat;
  for (size_t i = 0; i < values.size(); ++i)
    flat.push_back(
        ctx.emit1("Reshape", {ctx.cast_if_needed(values[i], list_meta(ctx, "tensors", i).dtype, t), i64s(ctx, {-1})}));
  set_attr(ctx.emit("Concat", flat, {ctx.output()}), "axis", int64_t{0});
}

// unflatten_dense_tensors(flat, tensors): flat cut into pieces of each tensor's (static) size and shape.
void unflatten_dense_tensors(TranslateContext& ctx) {
  const std::string flat = ctx.tensor("flat");
  int64_t offset = 0;
  for (size_t i = 0; i < ctx.required("tensors").list_length(); ++i) {
    std::vector<int64_t> shape;
    int64_t numel = 1;
    for (const auto& d : list_meta(ctx, "tensors", i).sizes) {
      if (!d.value) ctx.fail("unflatten_dense_tensors needs tensors of static shapes");
      shape.push_back(*d.value);
      numel *= *d.value;
    }
    ctx.emit("Reshape", {slice_axis(ctx, flat, 0, offset, offset + numel), i64s(ctx, shape)}, {ctx.output(i)});
    offset += numel;
  }
}

// pad_sequence(sequences, batch_first, padding_value, padding_side): each sequence padded to the longest
// (static lengths) on its right or left, stacked on dim 0 (batch_first) or 1.
void pad_sequence(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const auto values = ctx.tensors("sequences");
  std::vector<int64_t> lens;
  for (size_t i = 0; i < values.size(); ++i) {
    const auto& sizes = list_meta(ctx, "sequences", i).sizes;
    if (sizes.empty() || !sizes[0].value) ctx.fail("pad_sequence needs sequences of static length");
    lens.push_back(*sizes[0].value);
  }
  const int64_t longest = *std::max_element(lens.begin(), lens.end());
  const bool left = ctx.string_arg("padding_side", "right") == "left";
  const std::string value = ctx.constant(ctx.float_arg("padding_value", 0), t);
  std::vector<std::string> padded;
  for (size_t i = 0; i < values.size(); ++i) {
    const int64_t rank = static_cast<int64_t>(list_meta(ctx, "sequences", i).sizes.size());
    std::vector<int64_t> pads(static_cast<size_t>(2 * rank), 0);
    pads[left ? 0 : static_cast<size_t>(rank)] = longest - lens[i];
    auto* pad = ctx.emit(
        "Pad", {ctx.cast_if_needed(values[i], list_meta(ctx, "sequences", i).dtype, t), i64s(ctx, pads), value},
        {ctx.temp("padded")});
    set_attr(pad, "mode", std::string("constant"));
    padded.push_back(ctx.emit1("Unsqueeze", {pad->output(0), i64s(ctx, {ctx.bool_arg("batch_first", false) ? 0 : 1})}));
  }
  set_attr(ctx.emit("Concat", padded, {ctx.output()}), "axis", int64_t{ctx.bool_arg("batch_first", false) ? 0 : 1});
}
// _rowwise_prune(weight, mask, compressed_indices_dtype) -> (the rows of weight where mask holds, for each
// row its index among the kept ones or -1).
void rowwise_prune(TranslateContext& ctx) {
  const std::string mask = ctx.value("mask", DType::kBool);
  set_attr(ctx.emit("Compress", {ctx.tensor("weight"), mask}, {ctx.output(0)}), "axis", int64_t{0});
  auto* kept =
      ctx.emit("CumSum", {ctx.cast_if_needed(mask, DType::kBool, DType::kInt64), ctx.graph.constant_i64({0}, true)},
               {ctx.temp("kept_before")});
  const std::string idx =
      ctx.emit1("Where", {mask, ctx.emit1("Sub", {kept->output(0), ctx.graph.constant_i64({1}, true)}),
                          ctx.graph.constant_i64({-1}, true)});
  const DType t = ctx.dtype_arg("compressed_indices_dtype").value_or(DType::kInt64);
  ctx.alias_output(1, ctx.cast_if_needed(idx, DType::kInt64, t));
}

// _unpack_dual(dual, level) -> (primal, tangent): outside forward-mode AD a tensor is its own primal and
// has no tangent (None, never read).
void unpack_dual(TranslateContext& ctx) { ctx.alias_output(0, ctx.emit1("Identity", {ctx.tensor("dual")})); }

}  // namespace

PARITY_TRANSLATION("aten::reshape_as.default", reshape_as, 18);
PARITY_TRANSLATION("aten::meshgrid.default", meshgrid, 18);
PARITY_TRANSLATION("aten::meshgrid.indexing", meshgrid, 18);
PARITY_TRANSLATION("aten::nonzero_numpy.default", nonzero_numpy, 18);
PARITY_TRANSLATION("aten::where.default", where_condition, 18);
PARITY_TRANSLATION("aten::diff.default", diff, 18);
PARITY_TRANSLATION("aten::broadcast_tensors.default", broadcast_tensors, 18);
PARITY_TRANSLATION("aten::outer.default", outer, 18);
PARITY_TRANSLATION("aten::square.default", square, 18);
PARITY_TRANSLATION("aten::fliplr.default", fliplr, 18);
PARITY_TRANSLATION("aten::flipud.default", flipud, 18);
PARITY_TRANSLATION("aten::hstack.default", hstack, 18);
PARITY_TRANSLATION("aten::vstack.default", vstack, 18);
PARITY_TRANSLATION("aten::dstack.default", dstack, 18);
PARITY_TRANSLATION("aten::column_stack.default", column_stack, 18);
PARITY_TRANSLATION("aten::float_power.Tensor_Tensor", float_power, 18);
PARITY_TRANSLATION("aten::float_power.Tensor_Scalar", float_power, 18);
PARITY_TRANSLATION("aten::float_power.Scalar", float_power, 18);
PARITY_TRANSLATION("aten::take_along_dim.default", take_along_dim, 18);
PARITY_TRANSLATION("aten::movedim.intlist", movedim, 18);
PARITY_TRANSLATION("aten::movedim.int", movedim, 18);
PARITY_TRANSLATION("aten::moveaxis.intlist", movedim, 18);
PARITY_TRANSLATION("aten::moveaxis.int", movedim, 18);
PARITY_TRANSLATION("aten::swapaxes.default", swapaxes, 18);
PARITY_TRANSLATION("aten::ravel.default", ravel, 18);
PARITY_TRANSLATION("aten::argwhere.default", argwhere, 18);
PARITY_TRANSLATION("aten::rrelu.default", rrelu, 18);
PARITY_TRANSLATION("aten::to.other", cast_to_output, 18);
PARITY_TRANSLATION("aten::_cast_Byte.default", cast_to_output, 18);
PARITY_TRANSLATION("aten::_cast_Char.default", cast_to_output, 18);
PARITY_TRANSLATION("aten::_cast_Double.default", cast_to_output, 18);
PARITY_TRANSLATION("aten::_cast_Float.default", cast_to_output, 18);
PARITY_TRANSLATION("aten::_cast_Half.default", cast_to_output, 18);
PARITY_TRANSLATION("aten::_cast_Int.default", cast_to_output, 18);
PARITY_TRANSLATION("aten::_cast_Long.default", cast_to_output, 18);
PARITY_TRANSLATION("aten::_cast_Short.default", cast_to_output, 18);
PARITY_TRANSLATION("aten::_shape_as_tensor.default", shape_as_tensor, 18);
PARITY_TRANSLATION("aten::frobenius_norm.dim", frobenius_norm, 18);
PARITY_TRANSLATION("aten::narrow.Tensor", narrow_tensor, 18);
PARITY_TRANSLATION("aten::linalg_vecdot.default", linalg_vecdot, 18);
PARITY_TRANSLATION("aten::inner.default", inner, 18);
PARITY_TRANSLATION("aten::isreal.default", isreal, 18);
PARITY_TRANSLATION("aten::_rowwise_prune.default", rowwise_prune, 18);
PARITY_TRANSLATION("aten::_unpack_dual.default", unpack_dual, 18);
PARITY_TRANSLATION("aten::msort.default", msort, 18);
PARITY_TRANSLATION("aten::diag.default", diag, 18);
PARITY_TRANSLATION("aten::diagflat.default", diagflat, 18);
PARITY_TRANSLATION("aten::linalg_diagonal.default", linalg_diagonal, 18);
PARITY_TRANSLATION("aten::sum_to_size.default", sum_to_size, 18);
PARITY_TRANSLATION("aten::_dim_arange.default", dim_arange, 18);
PARITY_TRANSLATION("aten::_reshape_from_tensor.default", reshape_from_tensor, 18);
PARITY_TRANSLATION("aten::repeat_interleave.self_Tensor", repeat_interleave_tensor, 18);
PARITY_TRANSLATION("aten::tensor_split.tensor_indices_or_sections", tensor_split_tensor, 18);
PARITY_TRANSLATION("aten::flatten_dense_tensors.default", flatten_dense_tensors, 18);
PARITY_TRANSLATION("aten::unflatten_dense_tensors.default", unflatten_dense_tensors, 18);
PARITY_TRANSLATION("aten::pad_sequence.default", pad_sequence, 18);
PARITY_TRANSLATION("aten::_autocast_to_full_precision.default", cast_to_output, 18);
PARITY_TRANSLATION("aten::_autocast_to_reduced_precision.default", cast_to_output, 18);
PARITY_ALIAS("aten::pin_memory.default", "aten::alias.default");
PARITY_ALIAS("aten::adjoint.default", "aten::mH.default");
PARITY_ALIAS("aten::matrix_H.default", "aten::mH.default");
PARITY_ALIAS("aten::cdist.default", "aten::_cdist_forward.default");
PARITY_ALIAS("aten::pdist.default", "aten::_pdist_forward.default");
PARITY_ALIAS("aten::adaptive_avg_pool3d.default", "aten::_adaptive_avg_pool3d.default");
PARITY_ALIAS("aten::divide.Scalar_mode", "aten::div.Scalar_mode");
PARITY_ALIAS("aten::linalg_matmul.default", "aten::matmul.default");
PARITY_ALIAS("aten::positive.default", "aten::alias.default");
PARITY_ALIAS("aten::data.default", "aten::alias.default");
PARITY_ALIAS("aten::ger.default", "aten::outer.default");
PARITY_ALIAS("aten::row_stack.default", "aten::vstack.default");
PARITY_ALIAS("aten::empty_permuted.default", "aten::empty.memory_format");
PARITY_ALIAS("aten::special_expit.default", "aten::sigmoid.default");
PARITY_ALIAS("aten::special_exp2.default", "aten::exp2.default");
PARITY_ALIAS("aten::special_log1p.default", "aten::log1p.default");
PARITY_ALIAS("aten::special_round.default", "aten::round.decimals");
PARITY_ALIAS("aten::special_logit.default", "aten::logit.default");
PARITY_ALIAS("aten::special_xlogy.default", "aten::xlogy.Tensor");
PARITY_ALIAS("aten::special_xlogy.other_scalar", "aten::xlogy.Scalar_Other");
PARITY_ALIAS("aten::special_xlogy.self_scalar", "aten::xlogy.Scalar_Self");
PARITY_ALIAS("aten::special_logsumexp.default", "aten::logsumexp.default");

}  // namespace parity::exporter
