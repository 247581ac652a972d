// Shape and data-movement ATen ops -> ONNX (torch_lib registry coverage): atleast_*, *_as, narrow,
// tile, tril/triu, pixel (un)shuffle, im2col, unfold, repeat_interleave of counts.
#include "../src/translate.h"

namespace parity::exporter {
namespace {

// atleast_Nd: 0-d -> [1]*N; 1-d [n] -> [1, n] (2-d) or [1, n, 1] (3-d); 2-d [m, n] -> [m, n, 1] (3-d).
std::string at_least(TranslateContext& ctx, const std::string& x, int64_t rank, int64_t n) {
  std::vector<int64_t> axes;
  if (rank == 0)
    for (int64_t i = 0; i < n; ++i) axes.push_back(i);
  else if (rank == 1 && n == 2)
    axes = {0};
  else if (rank == 1 && n == 3)
    axes = {0, 2};
  else if (rank == 2 && n == 3)
    axes = {2};
  if (axes.empty()) return x;
  return ctx.emit1("Unsqueeze", {x, ctx.graph.constant_i64(axes)});
}
template <int N>
void atleast(TranslateContext& ctx) {
  ctx.alias_output(0, at_least(ctx, ctx.tensor("self"), ctx.rank("self"), N));
}
template <int N>
void atleast_sequence(TranslateContext& ctx) {
  const auto values = ctx.tensors("tensors");
  const auto names = ctx.required("tensors").tensor_names();
  for (size_t i = 0; i < values.size(); ++i) {
    const auto rank = static_cast<int64_t>(ctx.fx_graph.meta(names[i], ctx.node.name).sizes.size());
    ctx.alias_output(i, at_least(ctx, values[i], rank, N));
  }
}

void expand_as(TranslateContext& ctx) {
  ctx.emit("Expand", {ctx.tensor("self"), shape_of(ctx, ctx.tensor("other"))}, {ctx.output()});
}
void view_as(TranslateContext& ctx) {
  ctx.emit("Reshape", {ctx.tensor("self"), shape_of(ctx, ctx.tensor("other"))}, {ctx.output()});
}

// narrow(self, dim, start, length): a Slice; a negative start counts from the end of the dim.
void narrow(TranslateContext& ctx) {
  const int64_t dim = ctx.normalized_dim(ctx.int_arg("dim", 0), ctx.rank("self"));
  const std::string x = ctx.tensor("self");
  const pt2::Argument& s = ctx.required("start");
  std::string start = s.is_tensor() ? ctx.value(s, DType::kInt64) : ctx.int_value("start");
  start = ctx.emit1("Reshape", {start, ctx.graph.constant_i64({1})});
  const std::string zero = ctx.graph.constant_i64({0});
  const std::string size = ctx.emit1("Gather", {shape_of(ctx, x), ctx.graph.constant_i64({dim})});
  start = ctx.emit1("Where", {ctx.emit1("Less", {start, zero}), ctx.emit1("Add", {start, size}), start});
  const std::string end = ctx.emit1("Add", {start, unsqueeze0(ctx, ctx.int_value("length"))});
  ctx.emit("Slice", {x, start, end, ctx.graph.constant_i64({dim})}, {ctx.output()});
}

// tile(self, dims): dims shorter than the rank are padded with leading 1s; a longer list gives self
// leading 1-dims first (Tile wants one repeat per dim).
void tile(TranslateContext& ctx) {
  const int64_t rank = ctx.rank("self");
  const pt2::Argument& d = ctx.required("dims");
  const int64_t n = static_cast<int64_t>(d.list_length());
  std::string x = ctx.tensor("self");
  std::string reps = ctx.int_list_value("dims");
  if (n < rank)
    reps =
        concat(ctx, {ctx.graph.constant_i64(std::vector<int64_t>(static_cast<size_t>(rank - n), 1)), reps}, 0, "shape");
  if (n > rank) {
    std::vector<int64_t> axes;
    for (int64_t i = 0; i < n - rank; ++i) axes.push_back(i);
    x = ctx.emit1("Unsqueeze", {x, ctx.graph.constant_i64(axes)});
  }
  ctx.emit("Tile", {x, reps}, {ctx.output()});
}

void trilu(TranslateContext& ctx, bool upper) {
  const std::string k = ctx.has("diagonal") ? ctx.int_value("diagonal") : ctx.graph.constant_i64({0}, true);
  set_attr(ctx.emit("Trilu", {ctx.tensor("self"), k}, {ctx.output()}), "upper", int64_t{upper ? 1 : 0});
}
void tril(TranslateContext& ctx) { trilu(ctx, false); }
void triu(TranslateContext& ctx) { trilu(ctx, true); }

// pixel_shuffle(self, r): [..., C r^2, H, W] -> [..., C, H r, W r] (channel-major sub-pixel order);
// pixel_unshuffle its inverse. Leading dims pass through; shapes are computed, so every dim may be dynamic.
void pixel_shuffle_impl(TranslateContext& ctx, bool shuffle) {
  const int64_t rank = ctx.rank("self");
  if (rank < 3) ctx.fail("pixel (un)shuffle needs at least 3 dims");
  const int64_t r = ctx.int_arg(shuffle ? "upscale_factor" : "downscale_factor", 1);
  const std::string x = ctx.tensor("self");
  const std::string shape = shape_of(ctx, x);
  const std::string lead = slice_shape(ctx, shape, 0, rank - 3);
  const std::string c = slice_shape(ctx, shape, rank - 3, rank - 2), h = slice_shape(ctx, shape, rank - 2, rank - 1),
                    w = slice_shape(ctx, shape, rank - 1, rank);
  const std::string rr = ctx.graph.constant_i64({r}), r2 = ctx.graph.constant_i64({r * r});
  std::string split, merged;
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < rank - 3; ++i) perm.push_back(i);
  const int64_t L = rank - 3;
  if (shuffle) {
    const std::string c_out = ctx.emit1("Div", {c, r2});
    split = concat(ctx, {lead, c_out, rr, rr, h, w}, 0, "shape");  // [C', r, r, H, W] -> [C', H, r, W, r]
    for (int64_t p : {0, 3, 1, 4, 2}) perm.push_back(L + p);
    merged = concat(ctx, {lead, c_out, ctx.emit1("Mul", {h, rr}), ctx.emit1("Mul", {w, rr})}, 0, "shape");
  } else {
    const std::string ho = ctx.emit1("Div", {h, rr}), wo = ctx.emit1("Div", {w, rr});
    split = concat(ctx, {lead, c, ho, rr, wo, rr}, 0, "shape");  // [C, H', r, W', r] -> [C, r, r, H', W']
    for (int64_t p : {0, 2, 4, 1, 3}) perm.push_back(L + p);
    merged = concat(ctx, {lead, ctx.emit1("Mul", {c, r2}), ho, wo}, 0, "shape");
  }
  auto* tn = ctx.emit("Transpose", {ctx.emit1("Reshape", {x, split})}, {ctx.temp("transposed")});
  set_attr(tn, "perm", perm);
  ctx.emit("Reshape", {tn->output(0), merged}, {ctx.output()});
}
void pixel_shuffle(TranslateContext& ctx) { pixel_shuffle_impl(ctx, true); }
void pixel_unshuffle(TranslateContext& ctx) { pixel_shuffle_impl(ctx, false); }

// im2col(self, kernel_size, dilation, padding, stride): [N, C, H, W] -> [N, C kh kw, L]. One strided Slice of
// the padded input per kernel offset, stacked after C so that rows are ordered (c, i, j) as torch's.
void im2col(TranslateContext& ctx) {
  const auto& meta = ctx.input_meta("self");
  const int64_t rank = static_cast<int64_t>(meta.sizes.size());
  if (rank != 3 && rank != 4) ctx.fail("im2col needs a 3-d or 4-d input");
  const auto k = ctx.ints_arg("kernel_size"), d = ctx.ints_arg("dilation"), p = ctx.ints_arg("padding"),
             st = ctx.ints_arg("stride");
  int64_t out[2];
  for (int i = 0; i < 2; ++i) {
    const auto& dim = meta.sizes[static_cast<size_t>(rank - 2 + i)];
    if (!dim.value) ctx.fail("im2col over a symbolic spatial dim is not supported");
    out[i] = (*dim.value + 2 * p[i] - d[i] * (k[i] - 1) - 1) / st[i] + 1;
  }
  std::string x = ctx.tensor("self");
  if (rank == 3) x = ctx.emit1("Unsqueeze", {x, ctx.graph.constant_i64({0})});
  if (p[0] || p[1]) x = ctx.emit1("Pad", {x, ctx.graph.constant_i64({0, 0, p[0], p[1], 0, 0, p[0], p[1]})});
  std::vector<std::string> patches;
  const std::string axes = ctx.graph.constant_i64({2, 3}), steps = ctx.graph.constant_i64({st[0], st[1]});
  for (int64_t i = 0; i < k[0]; ++i)
    for (int64_t j = 0; j < k[1]; ++j) {
      const int64_t h0 = i * d[0], w0 = j * d[1];
      const std::string sl =
          ctx.emit1("Slice", {x, ctx.graph.constant_i64({h0, w0}),
                              ctx.graph.constant_i64({h0 + (out[0] - 1) * st[0] + 1, w0 + (out[1] - 1) * st[1] + 1}),
                              axes, steps});
      patches.push_back(ctx.emit1("Unsqueeze", {sl, ctx.graph.constant_i64({2})}));
    }
  auto* cat = ctx.emit("Concat", patches, {ctx.temp("patches")});
  set_attr(cat, "axis", int64_t{2});
  const std::string n = slice_shape(ctx, shape_of(ctx, x), 0, 1);
  const std::string shape = concat(ctx, {n, ctx.graph.constant_i64({-1, out[0] * out[1]})}, 0, "shape");
  const std::string r = ctx.emit1("Reshape", {cat->output(0), shape});
  if (rank == 3)
    ctx.emit("Squeeze", {r, ctx.graph.constant_i64({0})}, {ctx.output()});
  else
    ctx.emit("Identity", {r}, {ctx.output()});
}

// The [n, size] indices w * step + e of the n = (length - size) / step + 1 windows along a symbolic dim
// (torch.export has already checked length >= size).
std::string symbolic_window_indices(TranslateContext& ctx, const std::string& x, int64_t dim, int64_t size,
                                    int64_t step) {
  const std::string length = element(ctx, shape_of(ctx, x), dim);
  const std::string step_c = ctx.graph.constant_i64({step}, true);
  const std::string n =
      ctx.emit1("Add",
                {ctx.emit1("Div", {ctx.emit1("Sub", {length, ctx.graph.constant_i64({size}, true)}), step_c}),
                 ctx.graph.constant_i64({1}, true)},
                "windows");
  const std::string zero = ctx.graph.constant_i64({0}, true), one = ctx.graph.constant_i64({1}, true);
  const std::string starts = ctx.emit1("Mul", {ctx.emit1("Range", {zero, n, one}), step_c});
  const std::string offsets = ctx.graph.constant_i64([&] {
    std::vector<int64_t> v;
    for (int64_t e = 0; e < size; ++e) v.push_back(e);
    return v;
  }());
  return ctx.emit1("Add", {ctx.emit1("Unsqueeze", {starts, ctx.graph.constant_i64({1})}), offsets}, "windows");
}

// unfold(self, dimension, size, step): windows along `dimension` become a dim of their own and the window
// contents the last dim. A Gather of the [n, size] window indices, then the size axis moved last.
void unfold(TranslateContext& ctx) {
  const auto& meta = ctx.input_meta("self");
  const int64_t rank = static_cast<int64_t>(meta.sizes.size());
  const std::string x = ctx.tensor("self");
  const int64_t size = ctx.int_arg("size", 1), step = ctx.int_arg("step", 1);
  if (rank == 0) {  // a 0-d tensor unfolds into [1] (size is 0 or 1)
    ctx.emit("Reshape", {x, ctx.graph.constant_i64({size})}, {ctx.output()});
    return;
  }
  const int64_t dim = ctx.normalized_dim(ctx.int_arg("dimension", 0), rank);
  const auto& len = meta.sizes[static_cast<size_t>(dim)];
  std::string name;
  if (len.value) {
    const int64_t n = (*len.value - size) / step + 1;
    Tensor idx(DType::kInt64, {n, size});
    for (int64_t w = 0; w < n; ++w)
      for (int64_t e = 0; e < size; ++e) idx.data<int64_t>()[w * size + e] = w * step + e;
    name = ctx.graph.unique_name(ctx.node.name + "_windows");
    ctx.graph.add_initializer(name, idx);
  } else {
    name = symbolic_window_indices(ctx, x, dim, size, step);
  }
  auto* g = ctx.emit("Gather", {x, name}, {ctx.temp("gathered")});
  set_attr(g, "axis", dim);
  std::vector<int64_t> perm;
  for (int64_t i = 0; i <= rank; ++i)
    if (i != dim + 1) perm.push_back(i);
  perm.push_back(dim + 1);
  set_attr(ctx.emit("Transpose", {g->output(0)}, {ctx.output()}), "perm", perm);
}

// repeat_interleave(repeats): index j repeated repeats[j] times. Output position p holds the number of
// cumulative counts <= p, i.e. how many whole groups lie before it.
void repeat_interleave_counts(TranslateContext& ctx) {
  const std::string reps = ctx.value("repeats", DType::kInt64);
  auto* cs = ctx.emit("CumSum", {reps, ctx.graph.constant_i64({0}, true)}, {ctx.temp("ends")});
  const std::string ends = cs->output(0);
  const std::string total = ctx.has("output_size") ? ctx.int_value("output_size") : [&] {
    const std::string t = ctx.temp("total");
    emit_reduce(ctx, "ReduceSum", reps, {}, false, t);
    return t;
  }();
  const std::string pos =
      ctx.emit1("Range", {ctx.graph.constant_i64({0}, true), total, ctx.graph.constant_i64({1}, true)});
  const std::string le = ctx.emit1("LessOrEqual", {ctx.emit1("Unsqueeze", {ends, ctx.graph.constant_i64({0})}),
                                                   ctx.emit1("Unsqueeze", {pos, ctx.graph.constant_i64({1})})});
  const std::string counts = ctx.temp("groups_before");
  emit_reduce(ctx, "ReduceSum", ctx.cast_if_needed(le, DType::kBool, DType::kInt64), {1}, false, counts);
  ctx.alias_output(0, ctx.cast_if_needed(counts, DType::kInt64, ctx.output_meta().dtype));
}

// new_empty_strided: uninitialised memory in torch; zeros of the size here (strides do not exist in ONNX).
void new_empty_strided(TranslateContext& ctx) {
  ctx.emit("Expand", {ctx.constant(0, ctx.output_meta().dtype), ctx.int_list_value("size")}, {ctx.output()});
}

}  // namespace

PARITY_TRANSLATION("aten::atleast_1d.default", atleast<1>, 18);
PARITY_TRANSLATION("aten::atleast_2d.default", atleast<2>, 18);
PARITY_TRANSLATION("aten::atleast_3d.default", atleast<3>, 18);
PARITY_TRANSLATION("aten::atleast_1d.Sequence", atleast_sequence<1>, 18);
PARITY_TRANSLATION("aten::atleast_2d.Sequence", atleast_sequence<2>, 18);
PARITY_TRANSLATION("aten::atleast_3d.Sequence", atleast_sequence<3>, 18);
PARITY_TRANSLATION("aten::expand_as.default", expand_as, 18);
PARITY_TRANSLATION("aten::view_as.default", view_as, 18);
PARITY_TRANSLATION("aten::narrow.default", narrow, 18);
PARITY_TRANSLATION("aten::tile.default", tile, 18);
PARITY_TRANSLATION("aten::tril.default", tril, 18);
PARITY_TRANSLATION("aten::triu.default", triu, 18);
PARITY_TRANSLATION("aten::pixel_shuffle.default", pixel_shuffle, 18);
PARITY_TRANSLATION("aten::pixel_unshuffle.default", pixel_unshuffle, 18);
PARITY_TRANSLATION("aten::im2col.default", im2col, 18);
PARITY_TRANSLATION("aten::unfold.default", unfold, 18);
PARITY_TRANSLATION("aten::repeat_interleave.Tensor", repeat_interleave_counts, 18);
PARITY_TRANSLATION("aten::new_empty_strided.default", new_empty_strided, 18);

}  // namespace parity::exporter
