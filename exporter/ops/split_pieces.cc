// The ops that cut a tensor into a list of pieces along one axis: split.Tensor / unsafe_split, chunk /
// unsafe_chunk, split.sizes, tensor_split.sections / .indices, hsplit / vsplit / dsplit (.int and .array).
// The number of pieces is static in the program (one output per piece); their sizes need not be: a dim of
// dynamic length (Dim.AUTO, a batch) gives pieces of symbolic size. Static sizes make one ONNX Split;
// symbolic ones make a Slice per piece between bounds computed from the tensor's run-time Shape by the
// op's own rule (torch's: split.Tensor cuts every `split_size`, chunk every ceil(n / chunks), sections give
// the first n % k pieces one element more than n / k).
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "../src/translate.h"

namespace parity::exporter {
namespace {

constexpr int64_t kToEnd = std::numeric_limits<int64_t>::max();

// The pieces' sizes along `dim` when every output's is static.
std::optional<std::vector<int64_t>> static_piece_sizes(TranslateContext& ctx, int64_t dim) {
  std::vector<int64_t> sizes;
  for (size_t i = 0; i < ctx.output_count(); ++i) {
    const auto& meta = ctx.output_meta(i);
    if (static_cast<size_t>(dim) >= meta.sizes.size() || !meta.sizes[static_cast<size_t>(dim)].value)
      return std::nullopt;
    sizes.push_back(*meta.sizes[static_cast<size_t>(dim)].value);
  }
  return sizes;
}

std::vector<std::string> outputs(TranslateContext& ctx) {
  std::vector<std::string> outs;
  for (size_t i = 0; i < ctx.output_count(); ++i) outs.push_back(ctx.output(i));
  return outs;
}

// One Split of static sizes.
void static_split(TranslateContext& ctx, int64_t dim, const std::vector<int64_t>& sizes) {
  set_attr(ctx.emit("Split", {ctx.tensor("self"), ctx.graph.constant_i64(sizes)}, outputs(ctx)), "axis", dim);
}

// Piece i is x[bound(i) : bound(i + 1)] along dim (bound 0 is 0, the last piece runs to the end; Slice
// clamps, as torch's pieces end at the dim's length). `bound(i)` gives a [1] int64 value for 0 < i < count.
template <typename Bound>
void slice_pieces(TranslateContext& ctx, int64_t dim, Bound bound) {
  const std::string x = ctx.tensor("self"), axis = ctx.graph.constant_i64({dim});
  const size_t n = ctx.output_count();
  std::string start = ctx.graph.constant_i64({0});
  for (size_t i = 0; i < n; ++i) {
    const std::string end = i + 1 < n ? bound(static_cast<int64_t>(i + 1)) : ctx.graph.constant_i64({kToEnd});
    ctx.emit("Slice", {x, start, end, axis}, {ctx.output(i)});
    start = end;
  }
}

// The run-time length of x along dim, as a [1] int64 value.
std::string length_of(TranslateContext& ctx, int64_t dim) {
  return ctx.emit1(
      "Slice", {shape_of(ctx, ctx.tensor("self")), ctx.graph.constant_i64({dim}), ctx.graph.constant_i64({dim + 1})},
      "length");
}

// Cuts every `step` ([1] int64): bound(i) = i * step.
void cut_every(TranslateContext& ctx, int64_t dim, const std::string& step) {
  slice_pieces(ctx, dim, [&](int64_t i) { return ctx.emit1("Mul", {step, ctx.graph.constant_i64({i})}, "bound"); });
}

// k sections ([1] int64) of a dim of length n: the first n % k pieces have n / k + 1 elements, the rest n / k
// (torch.tensor_split; hsplit & co. require k to divide n, where this is n / k each).
void sections(TranslateContext& ctx, int64_t dim, const std::string& k) {
  const std::string len = length_of(ctx, dim);
  const std::string base = ctx.emit1("Div", {len, k}, "base"), extra = ctx.emit1("Mod", {len, k}, "extra");
  slice_pieces(ctx, dim, [&](int64_t i) {
    const std::string at = ctx.graph.constant_i64({i});
    return ctx.emit1("Add", {ctx.emit1("Mul", {base, at}), ctx.emit1("Min", {at, extra})}, "bound");
  });
}

// Cuts at the indices of int-list argument `name` (static or symbolic): piece i is x[idx[i-1] : idx[i]];
// a negative index counts from the end and one past the end clamps, in Python's slicing and in ONNX Slice.
void cut_at(TranslateContext& ctx, int64_t dim, const std::string& name) {
  const std::string indices = ctx.int_list_value(name);
  slice_pieces(ctx, dim, [&](int64_t i) {
    return ctx.emit1("Slice", {indices, ctx.graph.constant_i64({i - 1}), ctx.graph.constant_i64({i})}, "bound");
  });
}

int64_t dim_arg(TranslateContext& ctx) { return ctx.normalized_dim(ctx.int_arg("dim", 0), ctx.rank("self")); }

// split.Tensor(self, split_size, dim) / unsafe_split.
void split_tensor(TranslateContext& ctx) {
  const int64_t dim = dim_arg(ctx);
  if (const auto sizes = static_piece_sizes(ctx, dim)) return static_split(ctx, dim, *sizes);
  cut_every(ctx, dim, unsqueeze0(ctx, ctx.int_value("split_size")));
}

// chunk(self, chunks, dim) / unsafe_chunk: pieces of ceil(n / chunks) (torch's rule; the last may be
// shorter and there may be fewer than `chunks`: the program's outputs say how many).
void chunk(TranslateContext& ctx) {
  const int64_t dim = dim_arg(ctx);
  if (const auto sizes = static_piece_sizes(ctx, dim)) return static_split(ctx, dim, *sizes);
  const std::string chunks = ctx.graph.constant_i64({ctx.int_arg("chunks", 1)});
  const std::string len = length_of(ctx, dim);
  const std::string up = ctx.emit1("Sub", {ctx.emit1("Add", {len, chunks}), ctx.graph.constant_i64({1})});
  cut_every(ctx, dim, ctx.emit1("Div", {up, chunks}, "chunk_size"));
}

// split.sizes(self, split_size: SymInt[], dim): the sizes given, static or read at run time.
void split_sizes(TranslateContext& ctx) {
  const int64_t dim = dim_arg(ctx);
  if (const auto sizes = static_piece_sizes(ctx, dim)) return static_split(ctx, dim, *sizes);
  set_attr(ctx.emit("Split", {ctx.tensor("self"), ctx.int_list_value("split_size")}, outputs(ctx)), "axis", dim);
}

void tensor_split_sections(TranslateContext& ctx) {
  const int64_t dim = dim_arg(ctx);
  if (const auto sizes = static_piece_sizes(ctx, dim)) return static_split(ctx, dim, *sizes);
  sections(ctx, dim, unsqueeze0(ctx, ctx.int_value("sections")));
}

void tensor_split_indices(TranslateContext& ctx) {
  const int64_t dim = dim_arg(ctx);
  if (const auto sizes = static_piece_sizes(ctx, dim)) return static_split(ctx, dim, *sizes);
  cut_at(ctx, dim, "indices");
}

// hsplit / vsplit / dsplit: tensor_split along dim 1 (dim 0 of a 1-d tensor), 0 and 2.
void split_along(TranslateContext& ctx, int64_t dim) {
  if (const auto sizes = static_piece_sizes(ctx, dim)) return static_split(ctx, dim, *sizes);
  if (ctx.has("sections")) return sections(ctx, dim, ctx.graph.constant_i64({ctx.int_arg("sections", 1)}));
  cut_at(ctx, dim, "indices");
}
void hsplit(TranslateContext& ctx) { split_along(ctx, ctx.rank("self") >= 2 ? 1 : 0); }
void vsplit(TranslateContext& ctx) { split_along(ctx, 0); }
void dsplit(TranslateContext& ctx) { split_along(ctx, 2); }

}  // namespace

PARITY_TRANSLATION("aten::split.Tensor", split_tensor, 18);
PARITY_TRANSLATION("aten::chunk.default", chunk, 18);
PARITY_TRANSLATION("aten::split.sizes", split_sizes, 18);
PARITY_TRANSLATION("aten::tensor_split.sections", tensor_split_sections, 18);
PARITY_TRANSLATION("aten::tensor_split.indices", tensor_split_indices, 18);
PARITY_TRANSLATION("aten::hsplit.int", hsplit, 18);
PARITY_TRANSLATION("aten::hsplit.array", hsplit, 18);
PARITY_TRANSLATION("aten::vsplit.int", vsplit, 18);
PARITY_TRANSLATION("aten::vsplit.array", vsplit, 18);
PARITY_TRANSLATION("aten::dsplit.int", dsplit, 18);
PARITY_TRANSLATION("aten::dsplit.array", dsplit, 18);

}  // namespace parity::exporter
