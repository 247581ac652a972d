// Shape and data-movement ATen ops -> ONNX.
#include <limits>

#include "../src/translate.h"
#include "int_lists.h"

namespace parity::exporter {
namespace {

int64_t rank_of(TranslateContext& ctx, const std::string& arg) { return ctx.rank(arg); }
int64_t normalized_dim(TranslateContext& ctx, int64_t dim, int64_t rank) { return ctx.normalized_dim(dim, rank); }
constexpr int64_t kToEnd = std::numeric_limits<int64_t>::max();

void cat(TranslateContext& ctx) {
  const DType out = ctx.output_meta().dtype;
  std::vector<std::string> inputs;
  const auto names = ctx.required("tensors").tensor_names();
  const auto values = ctx.tensors("tensors");
  for (size_t i = 0; i < values.size(); ++i) {
    const auto& meta = ctx.fx_graph.meta(names[i], ctx.node.name);
    // torch.cat skips legacy empty 1-D tensors; ONNX Concat would reject their rank.
    if (meta.sizes.size() == 1 && meta.sizes[0].value == 0 && ctx.output_meta().sizes.size() != 1) continue;
    inputs.push_back(ctx.cast_if_needed(values[i], meta.dtype, out));
  }
  const int64_t rank = static_cast<int64_t>(ctx.output_meta().sizes.size());
  set_attr(ctx.emit("Concat", inputs, {ctx.output()}), "axis", normalized_dim(ctx, ctx.int_arg("dim", 0), rank));
}

// slice(self, dim, start, end, step): ONNX Slice clamps like Python, INT64_MAX means "to the end".
void slice(TranslateContext& ctx) {
  const int64_t dim = normalized_dim(ctx, ctx.int_arg("dim", 0), rank_of(ctx, "self"));
  const pt2::Argument* start = ctx.arg("start");
  const pt2::Argument* end = ctx.arg("end");
  auto bound = [&](const pt2::Argument* a, const std::string& name, int64_t fallback) {
    if (!a || a->is_none()) return ctx.graph.constant_i64({fallback});
    if (a->is(pt2::ArgKind::as_int)) return ctx.graph.constant_i64({a->as_int()});
    const std::string scalar = ctx.int_value(name);
    return ctx.emit1("Unsqueeze", {scalar, ctx.graph.constant_i64({0})}, name);
  };
  const std::string starts = bound(start, "start", 0);
  const std::string ends = bound(end, "end", std::numeric_limits<int64_t>::max());
  ctx.emit("Slice",
           {ctx.tensor("self"), starts, ends, ctx.graph.constant_i64({dim}),
            ctx.graph.constant_i64({ctx.int_arg("step", 1)})},
           {ctx.output()});
}

void view(TranslateContext& ctx) {
  if (ctx.node.target.find("unflatten") != std::string::npos) {
    // unflatten(self, dim, sizes): shape = self.shape[:dim] ++ sizes ++ self.shape[dim+1:]. Reshape's 0
    // copies the dim at the same index, which is wrong after `dim`, so the dims come from Shape slices.
    const int64_t rank = rank_of(ctx, "self");
    const int64_t dim = normalized_dim(ctx, ctx.int_arg("dim", 0), rank);
    const std::string shape = ctx.emit1("Shape", {ctx.tensor("self")});
    auto shape_slice = [&](int64_t from, int64_t to) {
      return ctx.emit1("Slice", {shape, ctx.graph.constant_i64({from}), ctx.graph.constant_i64({to})});
    };
    const std::string target = ctx.temp("shape");
    set_attr(
        ctx.emit("Concat", {shape_slice(0, dim), ctx.int_list_value("sizes"), shape_slice(dim + 1, rank)}, {target}),
        "axis", int64_t{0});
    ctx.emit("Reshape", {ctx.tensor("self"), target}, {ctx.output()});
    return;
  }
  ctx.emit("Reshape", {ctx.tensor("self"), ctx.int_list_value(ctx.arg("size") ? "size" : "shape")}, {ctx.output()});
}

void permute(TranslateContext& ctx) {
  const int64_t rank = rank_of(ctx, "self");
  std::vector<int64_t> perm = ctx.ints_arg("dims");
  for (auto& d : perm) d = normalized_dim(ctx, d, rank);
  set_attr(ctx.emit("Transpose", {ctx.tensor("self")}, {ctx.output()}), "perm", perm);
}

// numpy_T: every dim reversed; mT / mH (real tensors): the last two dims swapped.
void reverse_dims(TranslateContext& ctx) {
  const int64_t rank = rank_of(ctx, "self");
  std::vector<int64_t> perm;
  for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  set_attr(ctx.emit("Transpose", {ctx.tensor("self")}, {ctx.output()}), "perm", perm);
}

void matrix_transpose(TranslateContext& ctx) {
  const int64_t rank = rank_of(ctx, "self");
  if (rank < 2) ctx.fail("needs a tensor of rank >= 2, got rank " + std::to_string(rank));
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < rank; ++i) perm.push_back(i);
  std::swap(perm[rank - 1], perm[rank - 2]);
  set_attr(ctx.emit("Transpose", {ctx.tensor("self")}, {ctx.output()}), "perm", perm);
}

void transpose(TranslateContext& ctx) {
  const int64_t rank = rank_of(ctx, "self");
  std::vector<int64_t> perm(static_cast<size_t>(rank));
  for (int64_t i = 0; i < rank; ++i) perm[static_cast<size_t>(i)] = i;
  if (rank > 0) {
    const int64_t a = normalized_dim(ctx, ctx.int_arg("dim0", 0), rank);
    const int64_t b = normalized_dim(ctx, ctx.int_arg("dim1", 0), rank);
    std::swap(perm[static_cast<size_t>(a)], perm[static_cast<size_t>(b)]);
  }
  set_attr(ctx.emit("Transpose", {ctx.tensor("self")}, {ctx.output()}), "perm", perm);
}

void unsqueeze(TranslateContext& ctx) {
  const int64_t dim = normalized_dim(ctx, ctx.int_arg("dim", 0), rank_of(ctx, "self") + 1);
  ctx.emit("Unsqueeze", {ctx.tensor("self"), ctx.graph.constant_i64({dim})}, {ctx.output()});
}

// torch squeezes only dims of size 1; the output meta tells the resulting shape, so reshape to it.
void squeeze(TranslateContext& ctx) {
  const auto& in = ctx.input_meta("self");
  const auto& out = ctx.output_meta();
  if (in.sizes.size() == out.sizes.size()) {
    ctx.alias_output(0, ctx.tensor("self"));
    return;
  }
  std::vector<int64_t> axes;
  const pt2::Argument* dim_arg = ctx.arg("dim");
  std::vector<int64_t> dims = dim_arg && dim_arg->is(pt2::ArgKind::as_int) ? std::vector<int64_t>{dim_arg->as_int()}
                                                                           : ctx.ints_arg(dim_arg ? "dim" : "dims");
  for (auto d : dims) {
    d = normalized_dim(ctx, d, static_cast<int64_t>(in.sizes.size()));
    if (in.sizes[static_cast<size_t>(d)].value == 1) axes.push_back(d);
  }
  ctx.emit("Squeeze", {ctx.tensor("self"), ctx.graph.constant_i64(axes)}, {ctx.output()});
}

void squeeze_all(TranslateContext& ctx) {
  std::vector<int64_t> axes;
  const auto& in = ctx.input_meta("self");
  for (size_t i = 0; i < in.sizes.size(); ++i)
    if (in.sizes[i].value == 1) axes.push_back(static_cast<int64_t>(i));
  if (axes.empty()) return ctx.alias_output(0, ctx.tensor("self"));
  ctx.emit("Squeeze", {ctx.tensor("self"), ctx.graph.constant_i64(axes)}, {ctx.output()});
}

// expand(self, size): torch's -1 keeps a dim; ONNX Expand broadcasts both ways, so -1 -> 1 does the same.
// Only a literal -1 means "keep": tracing took each symbolic entry as a size (guarded, or assumed, not -1).
void expand(TranslateContext& ctx) {
  ctx.emit("Expand", {ctx.tensor("self"), ctx.int_list_value("size", 1)}, {ctx.output()});
}

// repeat(self, repeats): Tile, after adding the leading axes torch adds when repeats is longer.
void repeat(TranslateContext& ctx) {
  std::string x = ctx.tensor("self");
  const int64_t rank = rank_of(ctx, "self");
  const pt2::Argument& reps = ctx.required("repeats");
  const int64_t n = static_cast<int64_t>(reps.list_length());
  if (n > rank) {
    std::vector<int64_t> axes;
    for (int64_t i = 0; i < n - rank; ++i) axes.push_back(i);
    x = ctx.emit1("Unsqueeze", {x, ctx.graph.constant_i64(axes)});
  }
  ctx.emit("Tile", {x, ctx.int_list_value("repeats")}, {ctx.output()});
}

// repeat_interleave(self, repeats: int, dim, output_size): each element repeated along dim. Unsqueeze
// after dim, Expand the new axis to `repeats`, merge it into dim. No dim: the flattened input.
void repeat_interleave(TranslateContext& ctx) {
  std::string x = ctx.tensor("self");
  int64_t rank = rank_of(ctx, "self");
  const auto dim_arg = ctx.optional_int("dim");
  if (!dim_arg) {
    x = ctx.emit1("Reshape", {x, ctx.graph.constant_i64({-1})}, "flat");
    rank = 1;
  }
  const int64_t dim = dim_arg ? normalized_dim(ctx, *dim_arg, rank) : 0;
  const std::string repeats = ctx.emit1("Reshape", {ctx.int_value("repeats"), ctx.graph.constant_i64({1})}, "repeats");
  const std::string shape = ctx.emit1("Shape", {x});
  auto dims = [&](int64_t from, int64_t to) {
    return ctx.emit1("Slice", {shape, ctx.graph.constant_i64({from}), ctx.graph.constant_i64({to})});
  };
  const std::string before = dims(0, dim + 1), after = dims(dim + 1, rank);
  const std::string unsqueezed = ctx.emit1("Unsqueeze", {x, ctx.graph.constant_i64({dim + 1})});
  const std::string expanded_shape = ctx.temp("expanded_shape");
  set_attr(ctx.emit("Concat", {before, repeats, after}, {expanded_shape}), "axis", int64_t{0});
  const std::string expanded = ctx.emit1("Expand", {unsqueezed, expanded_shape});
  const std::string merged = ctx.emit1("Mul", {dims(dim, dim + 1), repeats});
  const std::string out_shape = ctx.temp("out_shape");
  set_attr(ctx.emit("Concat", {dims(0, dim), merged, after}, {out_shape}), "axis", int64_t{0});
  ctx.emit("Reshape", {expanded, out_shape}, {ctx.output()});
}

// split_with_sizes(self, split_sizes, dim) (split.Tensor, chunk & co. are in split_pieces.cc)
void split_with_sizes(TranslateContext& ctx) {
  const int64_t dim = normalized_dim(ctx, ctx.int_arg("dim", 0), rank_of(ctx, "self"));
  std::vector<std::string> outs;
  for (size_t i = 0; i < ctx.output_count(); ++i) outs.push_back(ctx.output(i));
  auto* n = ctx.emit("Split", {ctx.tensor("self"), ctx.int_list_value("split_sizes")}, outs);
  set_attr(n, "axis", dim);
}

// unbind(self, dim): Split into ones, then squeeze each piece.
void unbind(TranslateContext& ctx) {
  const int64_t dim = normalized_dim(ctx, ctx.int_arg("dim", 0), rank_of(ctx, "self"));
  const size_t n = ctx.output_count();
  std::vector<std::string> parts;
  for (size_t i = 0; i < n; ++i) parts.push_back(ctx.temp("part"));
  set_attr(ctx.emit("Split", {ctx.tensor("self"), ctx.graph.constant_i64(std::vector<int64_t>(n, 1))}, parts), "axis",
           dim);
  for (size_t i = 0; i < n; ++i) ctx.emit("Squeeze", {parts[i], ctx.graph.constant_i64({dim})}, {ctx.output(i)});
}

// stack(tensors, dim): unsqueeze each, concat.
void stack(TranslateContext& ctx) {
  const DType out = ctx.output_meta().dtype;
  const int64_t rank = static_cast<int64_t>(ctx.output_meta().sizes.size());
  const int64_t dim = normalized_dim(ctx, ctx.int_arg("dim", 0), rank);
  const auto names = ctx.required("tensors").tensor_names();
  const auto values = ctx.tensors("tensors");
  std::vector<std::string> parts;
  for (size_t i = 0; i < values.size(); ++i) {
    const auto& meta = ctx.fx_graph.meta(names[i], ctx.node.name);
    parts.push_back(
        ctx.emit1("Unsqueeze", {ctx.cast_if_needed(values[i], meta.dtype, out), ctx.graph.constant_i64({dim})}));
  }
  set_attr(ctx.emit("Concat", parts, {ctx.output()}), "axis", dim);
}

// flip(self, dims): a reversed Slice per axis.
void flip(TranslateContext& ctx) {
  const int64_t rank = rank_of(ctx, "self");
  std::vector<int64_t> axes = ctx.ints_arg("dims");
  if (axes.empty()) return ctx.alias_output(0, ctx.tensor("self"));
  for (auto& d : axes) d = normalized_dim(ctx, d, rank);
  const size_t n = axes.size();
  ctx.emit("Slice",
           {ctx.tensor("self"), ctx.graph.constant_i64(std::vector<int64_t>(n, -1)),
            ctx.graph.constant_i64(std::vector<int64_t>(n, std::numeric_limits<int64_t>::min())),
            ctx.graph.constant_i64(axes), ctx.graph.constant_i64(std::vector<int64_t>(n, -1))},
           {ctx.output()});
}

// roll(self, shifts, dims): per axis, concat(last s, first n-s). No dims = roll the flattened tensor.
void roll(TranslateContext& ctx) {
  std::string x = ctx.tensor("self");
  // Shifts read from the data (`.item()`) are SymInts: taken from a run-time list, always through the modulo.
  const bool symbolic_shifts = !list_symbols(ctx.required("shifts")).empty();
  const std::string shift_list = symbolic_shifts ? ctx.int_list_value("shifts") : "";
  const auto shifts =
      symbolic_shifts ? std::vector<int64_t>(ctx.required("shifts").list_length(), 0) : ctx.ints_arg("shifts");
  auto dims = ctx.ints_arg("dims");
  const auto& meta = ctx.input_meta("self");
  const bool flat = dims.empty();
  if (flat) {
    x = ctx.emit1("Reshape", {x, ctx.graph.constant_i64({-1})}, "flat");
    dims = {0};
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t axis = flat ? 0 : normalized_dim(ctx, dims[i], rank_of(ctx, "self"));
    const std::string a = ctx.graph.constant_i64({axis});
    // Slice clamps, so shifts beyond the size need a modulo first; static sizes make it a constant.
    std::string start;
    if (!symbolic_shifts && !flat && meta.sizes[static_cast<size_t>(axis)].value) {
      const int64_t size = *meta.sizes[static_cast<size_t>(axis)].value;
      const int64_t k = size == 0 ? 0 : ((shifts[i] % size) + size) % size;
      start = ctx.graph.constant_i64({size - k});
    } else {
      const std::string size = ctx.emit1(
          "Slice",
          {shape_of(ctx, x), a, ctx.emit1("Add", {a, ctx.graph.constant_i64({1})}), ctx.graph.constant_i64({0})});
      const int64_t at = static_cast<int64_t>(i);
      const std::string shift =
          symbolic_shifts ? slice_shape(ctx, shift_list, at, at + 1) : ctx.graph.constant_i64({shifts[i]});
      const std::string k = ctx.emit1("Mod", {ctx.emit1("Add", {ctx.emit1("Mod", {shift, size}), size}), size});
      start = ctx.emit1("Sub", {size, k});
    }
    const std::string tail = ctx.emit1("Slice", {x, start, ctx.graph.constant_i64({kToEnd}), a}, "tail");
    const std::string head = ctx.emit1("Slice", {x, ctx.graph.constant_i64({0}), start, a}, "head");
    auto* rolled = ctx.emit("Concat", {tail, head}, {ctx.temp("rolled")});
    set_attr(rolled, "axis", axis);
    x = rolled->output(0);
  }
  if (flat) x = ctx.emit1("Reshape", {x, shape_of(ctx, ctx.tensor("self"))});
  ctx.alias_output(0, x);
}

// select.int(self, dim, index): Gather with a scalar index drops the axis, as torch does.
void select(TranslateContext& ctx) {
  const int64_t dim = normalized_dim(ctx, ctx.int_arg("dim", 0), rank_of(ctx, "self"));
  set_attr(ctx.emit("Gather", {ctx.tensor("self"), ctx.int_value("index")}, {ctx.output()}), "axis", dim);
}

// diagonal(self, offset, dim1, dim2): move dim1, dim2 last, flatten them, gather the diagonal (static sizes).
void diagonal(TranslateContext& ctx) {
  const auto& meta = ctx.input_meta("self");
  const int64_t rank = rank_of(ctx, "self");
  const int64_t d1 = normalized_dim(ctx, ctx.int_arg("dim1", 0), rank),
                d2 = normalized_dim(ctx, ctx.int_arg("dim2", 1), rank);
  const int64_t offset = ctx.int_arg("offset", 0);
  const auto& s1 = meta.sizes[static_cast<size_t>(d1)];
  const auto& s2 = meta.sizes[static_cast<size_t>(d2)];
  if (!s1.value || !s2.value) ctx.fail("diagonal over symbolic dims is not supported yet");
  const int64_t n = *s1.value, m = *s2.value;
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < rank; ++i)
    if (i != d1 && i != d2) perm.push_back(i);
  perm.push_back(d1);
  perm.push_back(d2);
  auto* transposed = ctx.emit("Transpose", {ctx.tensor("self")}, {ctx.temp("diagonal_last")});
  set_attr(transposed, "perm", perm);
  const std::string t = transposed->output(0);
  std::vector<int64_t> flat_shape(static_cast<size_t>(rank - 2), 0);
  flat_shape.push_back(n * m);
  std::vector<int64_t> indices;
  for (int64_t i = 0; i < n; ++i)
    if (i + offset >= 0 && i + offset < m) indices.push_back(i * m + i + offset);
  const std::string flat = ctx.emit1("Reshape", {t, ctx.graph.constant_i64(flat_shape)}, "flat");
  set_attr(ctx.emit("Gather", {flat, ctx.graph.constant_i64(indices)}, {ctx.output()}), "axis", rank - 2);
}

// The flat indices of as_strided with symbolic sizes or strides, as a tensor of shape `size`: offset +
// sum over d of Range(size[d]) * stride[d], each term shaped [1, .., size[d], .., 1] and broadcast.
std::string strided_indices(TranslateContext& ctx, int64_t rank) {
  const std::string size = ctx.int_list_value("size"), stride = ctx.int_list_value("stride");
  const auto* offset_arg = ctx.arg("storage_offset");
  std::string indices =
      offset_arg && !offset_arg->is_none() ? ctx.int_value("storage_offset") : ctx.graph.constant_i64({0}, true);
  const std::string zero = ctx.graph.constant_i64({0}, true), one = ctx.graph.constant_i64({1}, true);
  for (int64_t d = 0; d < rank; ++d) {
    const std::string steps = ctx.emit1("Range", {zero, element(ctx, size, d), one}, "steps");
    const std::string scaled = ctx.emit1("Mul", {steps, element(ctx, stride, d)}, "scaled");
    std::vector<int64_t> shape(static_cast<size_t>(rank), 1);
    shape[static_cast<size_t>(d)] = -1;
    const std::string placed = ctx.emit1("Reshape", {scaled, ctx.graph.constant_i64(shape)}, "placed");
    indices = ctx.emit1("Add", {indices, placed}, "indices");
  }
  return indices;
}

// as_strided(self, size, stride, storage_offset): a Gather of flat indices into the contiguous flattened
// input (exported programs apply it to contiguous tensors). Static sizes: the indices are a constant;
// symbolic ones (a batch dim): computed in the graph.
void as_strided(TranslateContext& ctx) {
  const std::string flat = ctx.emit1("Reshape", {ctx.tensor("self"), ctx.graph.constant_i64({-1})}, "flat");
  const pt2::Argument &size_arg = ctx.required("size"), &stride_arg = ctx.required("stride");
  const auto* offset_arg = ctx.arg("storage_offset");
  const bool symbolic = size_arg.is(pt2::ArgKind::as_sym_ints) || stride_arg.is(pt2::ArgKind::as_sym_ints) ||
                        (offset_arg && offset_arg->is(pt2::ArgKind::as_sym_int));
  if (symbolic) {
    const int64_t rank = static_cast<int64_t>(ctx.output_meta().sizes.size());
    ctx.emit("Gather", {flat, strided_indices(ctx, rank)}, {ctx.output()});
    return;
  }
  const auto size = ctx.ints_arg("size");
  const auto stride = ctx.ints_arg("stride");
  const int64_t offset = ctx.int_arg("storage_offset", 0);
  if (size.size() != stride.size()) ctx.fail("size and stride differ in length");
  std::vector<int64_t> indices = {offset};
  for (size_t d = 0; d < size.size(); ++d) {
    std::vector<int64_t> next;
    for (int64_t base : indices)
      for (int64_t i = 0; i < size[d]; ++i) next.push_back(base + i * stride[d]);
    indices = std::move(next);
  }
  const std::string g = ctx.emit1("Gather", {flat, ctx.graph.constant_i64(indices)});
  ctx.emit("Reshape", {g, ctx.graph.constant_i64(size)}, {ctx.output()});
}

// as_strided_scatter(self, src, size, stride, storage_offset) (aten, and prims' with `input`): self with
// the elements that as_strided(size, stride, storage_offset) would view replaced by src's, a ScatterND into
// the contiguous flattened self (as as_strided reads it) at the same flat indices: a constant for static
// sizes and strides, computed in the graph for symbolic ones.
void as_strided_scatter(TranslateContext& ctx) {
  const std::string name = ctx.arg("input") ? "input" : "self";
  const DType t = ctx.output_meta().dtype;
  const std::string x = ctx.value(name, t);
  const std::string flat = ctx.emit1("Reshape", {x, ctx.graph.constant_i64({-1})}, "flat");
  const pt2::Argument &size_arg = ctx.required("size"), &stride_arg = ctx.required("stride");
  const auto* offset_arg = ctx.arg("storage_offset");
  std::string indices;
  if (size_arg.is(pt2::ArgKind::as_sym_ints) || stride_arg.is(pt2::ArgKind::as_sym_ints) ||
      (offset_arg && offset_arg->is(pt2::ArgKind::as_sym_int))) {
    indices = strided_indices(ctx, static_cast<int64_t>(size_arg.list_length()));
  } else {
    const auto size = ctx.ints_arg("size"), stride = ctx.ints_arg("stride");
    if (size.size() != stride.size()) ctx.fail("size and stride differ in length");
    std::vector<int64_t> flat_indices = {ctx.int_arg("storage_offset", 0)};
    for (size_t d = 0; d < size.size(); ++d) {
      std::vector<int64_t> next;
      for (int64_t base : flat_indices)
        for (int64_t i = 0; i < size[d]; ++i) next.push_back(base + i * stride[d]);
      flat_indices = std::move(next);
    }
    indices = ctx.graph.constant_i64(flat_indices);
  }
  const std::string column = ctx.emit1("Reshape", {indices, ctx.graph.constant_i64({-1, 1})}, "indices");
  const std::string updates = ctx.emit1("Reshape", {ctx.value("src", t), ctx.graph.constant_i64({-1})}, "updates");
  const std::string scattered = ctx.emit1("ScatterND", {flat, column, updates}, "scattered");
  ctx.emit("Reshape", {scattered, shape_of(ctx, x)}, {ctx.output()});
}

// resize(self, size) (resize_ by the in-place rule): the first prod(size) elements of the contiguous self,
// shaped `size`, as torch's resize_ views its storage when it does not grow. Growing leaves the new
// elements uninitialised in torch: no value to export, refused (statically known sizes) or, when sizes
// are symbolic, refused by the Reshape at run time.
void resize(TranslateContext& ctx) {
  const std::string x = ctx.tensor("self");
  const std::string flat = ctx.emit1("Reshape", {x, ctx.graph.constant_i64({-1})}, "flat");
  const auto& in = ctx.input_meta("self");
  const pt2::Argument& size_arg = ctx.required("size");
  std::string count;
  if (size_arg.is(pt2::ArgKind::as_sym_ints) && !list_symbols(size_arg).empty()) {
    count = ctx.temp("count");
    emit_reduce(ctx, "ReduceProd", ctx.int_list_value("size"), {0}, true, count);
  } else {
    int64_t n = 1;
    for (int64_t d : ctx.ints_arg("size")) n *= d;
    int64_t old = 1;
    bool known = true;
    for (const auto& d : in.sizes) {
      known = known && d.value.has_value();
      old *= d.value.value_or(1);
    }
    if (known && n > old)
      ctx.fail("resize_ to " + std::to_string(n) + " elements from " + std::to_string(old) +
               ": torch leaves the new elements uninitialised, there is no value to export");
    count = ctx.graph.constant_i64({n});
  }
  const std::string kept = ctx.emit1("Slice", {flat, ctx.graph.constant_i64({0}), count}, "kept");
  ctx.emit("Reshape", {kept, ctx.int_list_value("size")}, {ctx.output()});
}

// flatten.using_ints(self, start_dim, end_dim)
void flatten(TranslateContext& ctx) {
  const int64_t rank = rank_of(ctx, "self");
  if (rank == 0) {
    ctx.emit("Reshape", {ctx.tensor("self"), ctx.graph.constant_i64({1})}, {ctx.output()});
    return;
  }
  const int64_t s = normalized_dim(ctx, ctx.int_arg("start_dim", 0), rank),
                e = normalized_dim(ctx, ctx.int_arg("end_dim", -1), rank);
  // Leading dims keep their index, so Reshape's 0 copies them; a trailing dim moves to a lower index, so it
  // is its static size or, when symbolic, read from Shape.
  std::vector<int64_t> shape(static_cast<size_t>(s), 0);
  shape.push_back(-1);
  bool static_tail = true;
  for (int64_t i = e + 1; i < rank; ++i) {
    const auto& d = ctx.input_meta("self").sizes[static_cast<size_t>(i)];
    static_tail = static_tail && d.value.has_value();
    shape.push_back(d.value.value_or(0));
  }
  std::string target = ctx.graph.constant_i64(shape);
  if (!static_tail) {
    shape.resize(static_cast<size_t>(s) + 1);
    const std::string tail = ctx.emit1("Slice", {shape_of(ctx, ctx.tensor("self")), ctx.graph.constant_i64({e + 1}),
                                                 ctx.graph.constant_i64({kToEnd})});
    auto* concat = ctx.emit("Concat", {ctx.graph.constant_i64(shape), tail}, {ctx.temp("shape")});
    set_attr(concat, "axis", int64_t{0});
    target = concat->output(0);
  }
  ctx.emit("Reshape", {ctx.tensor("self"), target}, {ctx.output()});
}

void identity(TranslateContext& ctx) { ctx.alias_output(0, ctx.tensor("self")); }

// sym_numel(self) -> Size
void sym_numel(TranslateContext& ctx) { ctx.emit("Size", {ctx.tensor("self")}, {ctx.output()}); }

// sym_stride.int(self, dim): the contiguous stride, the product of the later dims.
void sym_stride(TranslateContext& ctx) {
  const int64_t dim = normalized_dim(ctx, ctx.int_arg("dim", 0), rank_of(ctx, "self"));
  const std::string later = ctx.emit1("Slice", {shape_of(ctx, ctx.tensor("self")), ctx.graph.constant_i64({dim + 1}),
                                                ctx.graph.constant_i64({kToEnd})});
  emit_reduce(ctx, "ReduceProd", later, {}, false, ctx.output());
}

// Exported programs hold contiguous tensors: the storage offset is 0.
void sym_storage_offset(TranslateContext& ctx) {
  ctx.emit("Identity", {ctx.graph.constant_i64({0}, true)}, {ctx.output()});
}

// sym_size.int(self, dim) -> a scalar int64 value: Shape + Gather.
void sym_size(TranslateContext& ctx) {
  const int64_t dim = normalized_dim(ctx, ctx.int_arg("dim", 0), rank_of(ctx, "self"));
  const std::string shape = ctx.emit1("Shape", {ctx.tensor("self")});
  auto* gather = ctx.emit("Gather", {shape, ctx.graph.constant_i64({dim}, true)}, {ctx.output()});
  set_attr(gather, "axis", int64_t{0});
}

}  // namespace

PARITY_TRANSLATION("aten::cat.default", cat, 18);
PARITY_TRANSLATION("aten::slice.Tensor", slice, 18);
PARITY_TRANSLATION("aten::view.default", view, 18);
PARITY_TRANSLATION("aten::reshape.default", view, 18);
PARITY_TRANSLATION("aten::_unsafe_view.default", view, 18);
PARITY_TRANSLATION("aten::permute.default", permute, 18);
PARITY_TRANSLATION("aten::transpose.int", transpose, 18);
PARITY_TRANSLATION("aten::unsqueeze.default", unsqueeze, 18);
PARITY_TRANSLATION("aten::squeeze.dim", squeeze, 18);
PARITY_TRANSLATION("aten::squeeze.dims", squeeze, 18);
PARITY_TRANSLATION("aten::squeeze.default", squeeze_all, 18);
PARITY_TRANSLATION("aten::expand.default", expand, 18);
PARITY_TRANSLATION("aten::numpy_T.default", reverse_dims, 18);
PARITY_TRANSLATION("aten::mT.default", matrix_transpose, 18);
PARITY_TRANSLATION("aten::mH.default", matrix_transpose, 18);
PARITY_TRANSLATION("aten::repeat.default", repeat, 18);
PARITY_TRANSLATION("aten::repeat_interleave.self_int", repeat_interleave, 18);
PARITY_TRANSLATION("aten::split_with_sizes.default", split_with_sizes, 18);
PARITY_TRANSLATION("aten::unflatten.int", view, 18);
PARITY_TRANSLATION("aten::unbind.int", unbind, 18);
PARITY_TRANSLATION("aten::stack.default", stack, 18);
PARITY_TRANSLATION("aten::flip.default", flip, 18);
PARITY_TRANSLATION("aten::roll.default", roll, 18);
PARITY_TRANSLATION("aten::select.int", select, 18);
PARITY_TRANSLATION("aten::diagonal.default", diagonal, 18);
PARITY_TRANSLATION("aten::as_strided.default", as_strided, 18);
PARITY_TRANSLATION("aten::resize.default", resize, 18);
PARITY_TRANSLATION("aten::as_strided_scatter.default", as_strided_scatter, 18);
PARITY_TRANSLATION("prims::as_strided_scatter.default", as_strided_scatter, 18);
PARITY_TRANSLATION("aten::flatten.using_ints", flatten, 18);
PARITY_TRANSLATION("aten::sym_numel.default", sym_numel, 18);
PARITY_TRANSLATION("aten::sym_stride.int", sym_stride, 18);
PARITY_TRANSLATION("aten::sym_storage_offset.default", sym_storage_offset, 18);
PARITY_TRANSLATION("aten::lift_fresh_copy.default", identity, 18);
PARITY_TRANSLATION("aten::clone.default", identity, 18);
PARITY_TRANSLATION("aten::contiguous.default", identity, 18);
PARITY_TRANSLATION("aten::alias.default", identity, 18);
PARITY_TRANSLATION("aten::detach.default", identity, 18);
PARITY_TRANSLATION("aten::detach_.default", identity, 18);  // torch.tensor(...) constants carry one
PARITY_TRANSLATION("aten::sym_size.int", sym_size, 18);

}  // namespace parity::exporter
