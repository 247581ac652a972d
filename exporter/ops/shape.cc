// Shape and data-movement ATen ops -> ONNX.
#include <limits>

#include "../src/translate.h"

namespace parity::exporter {
namespace {

int64_t rank_of(TranslateContext& ctx, const std::string& arg) {
  return static_cast<int64_t>(ctx.input_meta(arg).sizes.size());
}

int64_t normalized_dim(TranslateContext& ctx, int64_t dim, int64_t rank) {
  const int64_t r = rank == 0 ? 1 : rank;
  if (dim < -r || dim >= r) ctx.fail("dim " + std::to_string(dim) + " out of range for rank " + std::to_string(rank));
  return dim < 0 ? dim + r : dim;
}

void cat(TranslateContext& ctx) {
  const DType out = ctx.output_meta().dtype;
  std::vector<std::string> inputs;
  const auto names = ctx.required("tensors").tensor_names();
  const auto values = ctx.tensors("tensors");
  for (size_t i = 0; i < values.size(); ++i) {
    const auto& meta = ctx.program.graph.meta(names[i], ctx.node.name);
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
    if (a->kind == "as_int") return ctx.graph.constant_i64({a->as_int()});
    const std::string scalar = ctx.int_value(name);
    return ctx.emit1("Unsqueeze", {scalar, ctx.graph.constant_i64({0})}, name);
  };
  const std::string starts = bound(start, "start", 0);
  const std::string ends = bound(end, "end", std::numeric_limits<int64_t>::max());
  ctx.emit("Slice", {ctx.tensor("self"), starts, ends, ctx.graph.constant_i64({dim}),
                     ctx.graph.constant_i64({ctx.int_arg("step", 1)})},
           {ctx.output()});
}

void view(TranslateContext& ctx) {
  ctx.emit("Reshape", {ctx.tensor("self"), ctx.int_list_value(ctx.arg("size") ? "size" : "shape")}, {ctx.output()});
}

void permute(TranslateContext& ctx) {
  const int64_t rank = rank_of(ctx, "self");
  std::vector<int64_t> perm = ctx.ints_arg("dims");
  for (auto& d : perm) d = normalized_dim(ctx, d, rank);
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
  std::vector<int64_t> dims = ctx.arg("dim") ? std::vector<int64_t>{ctx.int_arg("dim", 0)} : ctx.ints_arg("dims");
  for (auto d : dims) {
    d = normalized_dim(ctx, d, static_cast<int64_t>(in.sizes.size()));
    if (in.sizes[static_cast<size_t>(d)].value == 1) axes.push_back(d);
  }
  ctx.emit("Squeeze", {ctx.tensor("self"), ctx.graph.constant_i64(axes)}, {ctx.output()});
}

void identity(TranslateContext& ctx) { ctx.alias_output(0, ctx.tensor("self")); }

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
PARITY_TRANSLATION("aten::clone.default", identity, 18);
PARITY_TRANSLATION("aten::contiguous.default", identity, 18);
PARITY_TRANSLATION("aten::alias.default", identity, 18);
PARITY_TRANSLATION("aten::detach.default", identity, 18);
PARITY_TRANSLATION("aten::sym_size.int", sym_size, 18);

}  // namespace parity::exporter
