// Gather/scatter style ATen ops -> ONNX: index_select, gather, scatter*, index, index_put, *_scatter,
// masked_scatter, masked_select, nonzero (static too), embedding, padding.
#include <algorithm>
#include <cmath>
#include <limits>

#include "../src/translate.h"
#include "int_lists.h"

namespace parity::exporter {
namespace {

void index_select(TranslateContext& ctx) {
  const int64_t dim = ctx.normalized_dim(ctx.int_arg("dim", 0), ctx.rank("self"));
  set_attr(ctx.emit("Gather", {ctx.tensor("self"), ctx.tensor("index")}, {ctx.output()}), "axis", dim);
}

void gather(TranslateContext& ctx) {
  const int64_t dim = ctx.normalized_dim(ctx.int_arg("dim", 0), ctx.rank("self"));
  set_attr(ctx.emit("GatherElements", {ctx.tensor("self"), ctx.tensor("index")}, {ctx.output()}), "axis", dim);
}

// scatter(self, dim, index, src|value[, reduce]) -> ScatterElements; a scalar value is expanded to index's shape.
void scatter_with(TranslateContext& ctx, const std::string& reduction) {
  const DType out = ctx.output_meta().dtype;
  const int64_t dim = ctx.normalized_dim(ctx.int_arg("dim", 0), ctx.rank("self"));
  const std::string index = ctx.tensor("index");
  std::string updates = ctx.has("src") ? ctx.value("src", out) : ctx.value("value", out);
  if (!ctx.has("src") || !ctx.required("src").is_tensor())
    updates = ctx.emit1("Expand", {updates, shape_of(ctx, index)}, "updates");
  else  // src may be larger than index: ScatterElements wants the same shape.
    updates =
        ctx.emit1("Slice",
                  {updates, ctx.graph.constant_i64(std::vector<int64_t>(static_cast<size_t>(ctx.rank("index")), 0)),
                   shape_of(ctx, index)},
                  "updates");
  auto* n = ctx.emit("ScatterElements", {ctx.tensor("self"), index, updates}, {ctx.output()});
  set_attr(n, "axis", dim);
  if (!reduction.empty()) set_attr(n, "reduction", reduction);
}
void scatter(TranslateContext& ctx) { scatter_with(ctx, ""); }
void scatter_add(TranslateContext& ctx) { scatter_with(ctx, "add"); }

// scatter_reduce.two(self, dim, index, src, reduce, include_self). include_self=False first overwrites
// the touched positions with the reduction's identity, which makes the result exact.
void scatter_reduce(TranslateContext& ctx) {
  const DType out = ctx.output_meta().dtype;
  const std::string reduce = ctx.string_arg("reduce", "sum");
  std::string reduction;
  double identity = 0;
  if (reduce == "sum")
    reduction = "add";
  else if (reduce == "prod")
    reduction = "mul", identity = 1;
  else if (reduce == "amax")
    reduction = "max", identity = -std::numeric_limits<double>::infinity();
  else if (reduce == "amin")
    reduction = "min", identity = std::numeric_limits<double>::infinity();
  else
    ctx.fail("scatter_reduce with reduce='" + reduce + "' has no ONNX ScatterElements reduction");
  if (!dtype_is_floating(out) && std::isinf(identity))
    identity =
        identity < 0 ? static_cast<double>(std::numeric_limits<int32_t>::min()) : std::numeric_limits<int32_t>::max();
  const int64_t dim = ctx.normalized_dim(ctx.int_arg("dim", 0), ctx.rank("self"));
  const std::string index = ctx.tensor("index");
  const std::string src = ctx.emit1(
      "Slice",
      {ctx.value("src", out), ctx.graph.constant_i64(std::vector<int64_t>(static_cast<size_t>(ctx.rank("index")), 0)),
       shape_of(ctx, index)},
      "updates");
  std::string self = ctx.tensor("self");
  if (!ctx.bool_arg("include_self", true)) {
    const std::string fill = ctx.emit1("Expand", {ctx.constant(identity, out), shape_of(ctx, index)});
    auto* n = ctx.emit("ScatterElements", {self, index, fill}, {ctx.temp("cleared")});
    set_attr(n, "axis", dim);
    self = n->output(0);
  }
  auto* n = ctx.emit("ScatterElements", {self, index, src}, {ctx.output()});
  set_attr(n, "axis", dim);
  set_attr(n, "reduction", reduction);
}

// Advanced indexing: the index tensors (bool masks become their nonzero coordinates), broadcast together
// and stacked on a last axis, index the leading axes of a transposed input through GatherND.
struct AdvancedIndex {
  std::vector<int64_t> positions;  // indexed axes of self
  std::string stacked;             // [*broadcast, k] int64
  std::vector<int64_t> perm;       // moves the indexed axes to the front
  bool consecutive = true;
  int64_t broadcast_rank = 0;
};

AdvancedIndex advanced_index(TranslateContext& ctx) {
  const auto entries = ctx.required("indices").optional_tensor_names();
  const int64_t rank = ctx.rank("self");
  AdvancedIndex ai;
  std::vector<std::string> parts;
  std::vector<int64_t> part_ranks;
  int64_t axis = 0;
  for (const auto& e : entries) {
    if (!e) {
      ++axis;
      continue;
    }
    const auto& meta = ctx.fx_graph.meta(*e, ctx.node.name);
    const pt2::Argument ref = pt2::Argument::tensor(*e);
    if (meta.dtype == DType::kBool || meta.dtype == DType::kUInt8) {
      // A k-dim mask covers k axes: its nonzero coordinates, one int64 row per axis.
      const std::string nz = ctx.emit1("NonZero", {ctx.value(ref, DType::kBool)});
      for (size_t j = 0; j < meta.sizes.size(); ++j) {
        parts.push_back(element(ctx, nz, static_cast<int64_t>(j)));
        part_ranks.push_back(1);
        ai.positions.push_back(axis++);
      }
      continue;
    }
    parts.push_back(ctx.value(ref, DType::kInt64));
    part_ranks.push_back(static_cast<int64_t>(meta.sizes.size()));
    ai.positions.push_back(axis++);
  }
  if (parts.empty()) ctx.fail("index with no index tensors");
  for (size_t i = 1; i < ai.positions.size(); ++i)
    ai.consecutive = ai.consecutive && ai.positions[i] == ai.positions[i - 1] + 1;
  // Broadcast: add a zero tensor of the parts' common shape (Max broadcasts them all); one part is
  // already its own broadcast.
  std::string zero;
  if (parts.size() > 1) zero = ctx.emit1("Mul", {ctx.emit1("Max", parts), ctx.graph.constant_i64({0}, true)});
  ai.broadcast_rank = *std::max_element(part_ranks.begin(), part_ranks.end());
  std::vector<std::string> cols;
  for (const auto& p : parts)
    cols.push_back(
        ctx.emit1("Unsqueeze", {zero.empty() ? p : ctx.emit1("Add", {p, zero}), ctx.graph.constant_i64({-1})}));
  auto* cat = ctx.emit("Concat", cols, {ctx.temp("indices")});
  set_attr(cat, "axis", int64_t{-1});
  ai.stacked = cat->output(0);
  ai.perm = ai.positions;
  for (int64_t i = 0; i < rank; ++i)
    if (std::find(ai.positions.begin(), ai.positions.end(), i) == ai.positions.end()) ai.perm.push_back(i);
  return ai;
}

bool is_identity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return true;
}

std::string transpose(TranslateContext& ctx, const std::string& x, const std::vector<int64_t>& perm) {
  if (is_identity(perm)) return x;
  auto* n = ctx.emit("Transpose", {x}, {ctx.temp("transposed")});
  set_attr(n, "perm", perm);
  return n->output(0);
}

std::vector<int64_t> inverse(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return inv;
}

// Gathered layout is [*broadcast, *other axes]; torch puts the broadcast dims where the (consecutive)
// indexed axes were, after the axes before them.
std::vector<int64_t> result_perm(const AdvancedIndex& ai, int64_t out_rank) {
  std::vector<int64_t> perm;
  const int64_t b = ai.broadcast_rank, before = ai.consecutive ? ai.positions.front() : 0;
  for (int64_t i = 0; i < before; ++i) perm.push_back(b + i);
  for (int64_t i = 0; i < b; ++i) perm.push_back(i);
  for (int64_t i = b + before; i < out_rank; ++i) perm.push_back(i);
  return perm;
}

void index(TranslateContext& ctx) {
  const AdvancedIndex ai = advanced_index(ctx);
  const std::string x = transpose(ctx, ctx.tensor("self"), ai.perm);
  const std::string g = ctx.emit1("GatherND", {x, ai.stacked}, "gathered");
  const int64_t out_rank = static_cast<int64_t>(ctx.output_meta().sizes.size());
  ctx.alias_output(0, transpose(ctx, g, result_perm(ai, out_rank)));
}

// index_put(self, indices, values, accumulate): ScatterND on the transposed input, values broadcast
// to the indexed result's shape.
void index_put(TranslateContext& ctx) {
  const DType out = ctx.output_meta().dtype;
  const AdvancedIndex ai = advanced_index(ctx);
  const std::string x = transpose(ctx, ctx.tensor("self"), ai.perm);
  const std::string slots = ctx.emit1("GatherND", {x, ai.stacked}, "slots");
  const int64_t slot_rank = ai.broadcast_rank + ctx.rank("self") - static_cast<int64_t>(ai.positions.size());
  // values broadcast against torch's result layout, then moved to the gathered layout.
  const std::vector<int64_t> to_torch = result_perm(ai, slot_rank);
  const std::string torch_shape = shape_of(ctx, transpose(ctx, slots, to_torch));
  std::string values = ctx.emit1("Expand", {ctx.value("values", out), torch_shape}, "values");
  values = transpose(ctx, values, inverse(to_torch));
  auto* n = ctx.emit("ScatterND", {x, ai.stacked, values}, {ctx.temp("scattered")});
  if (ctx.bool_arg("accumulate", false)) set_attr(n, "reduction", std::string("add"));
  ctx.alias_output(0, transpose(ctx, n->output(0), inverse(ai.perm)));
}

// Positions start, start+step, ... along `dim`, shaped to broadcast against src: ScatterElements indices.
std::string positions_along(TranslateContext& ctx, const std::string& src, int64_t dim, int64_t rank,
                            const std::string& start, const std::string& step) {
  const std::string len = element(ctx, shape_of(ctx, src), dim);
  const std::string limit = ctx.emit1("Add", {start, ctx.emit1("Mul", {len, step})});
  const std::string r = ctx.emit1("Range", {start, limit, step}, "positions");
  std::vector<int64_t> shape(static_cast<size_t>(rank), 1);
  shape[static_cast<size_t>(dim)] = -1;
  const std::string shaped = ctx.emit1("Reshape", {r, ctx.graph.constant_i64(shape)});
  return ctx.emit1("Expand", {shaped, shape_of(ctx, src)}, "indices");
}

// slice_scatter(self, src, dim, start, end, step)
void slice_scatter(TranslateContext& ctx) {
  const DType out = ctx.output_meta().dtype;
  const int64_t rank = ctx.rank("self");
  const int64_t dim = ctx.normalized_dim(ctx.int_arg("dim", 0), rank);
  const std::string self = ctx.tensor("self");
  std::string start = ctx.has("start") ? ctx.int_value("start") : ctx.graph.constant_i64({0}, true);
  // A negative start counts from the end: start + size where start < 0.
  const std::string size = element(ctx, shape_of(ctx, self), dim);
  const std::string zero = ctx.graph.constant_i64({0}, true);
  start = ctx.emit1("Where", {ctx.emit1("Less", {start, zero}), ctx.emit1("Add", {start, size}), start});
  start = ctx.emit1("Min", {ctx.emit1("Max", {start, zero}), size}, "start");
  const std::string step = ctx.graph.constant_i64({ctx.int_arg("step", 1)}, true);
  const std::string src = ctx.value("src", out);
  const std::string idx = positions_along(ctx, src, dim, rank, start, step);
  set_attr(ctx.emit("ScatterElements", {self, idx, src}, {ctx.output()}), "axis", dim);
}

// select_scatter(self, src, dim, index): src gains the selected axis back, then ScatterElements.
void select_scatter(TranslateContext& ctx) {
  const DType out = ctx.output_meta().dtype;
  const int64_t rank = ctx.rank("self");
  const int64_t dim = ctx.normalized_dim(ctx.int_arg("dim", 0), rank);
  const std::string src = ctx.emit1("Unsqueeze", {ctx.value("src", out), ctx.graph.constant_i64({dim})}, "src");
  std::string index = ctx.int_value("index");
  const std::string size = element(ctx, shape_of(ctx, ctx.tensor("self")), dim);
  index = ctx.emit1(
      "Where", {ctx.emit1("Less", {index, ctx.graph.constant_i64({0}, true)}), ctx.emit1("Add", {index, size}), index});
  const std::string idx = ctx.emit1("Expand", {index, shape_of(ctx, src)}, "indices");
  const std::string self = ctx.tensor("self");  // read before output(): a write-back rebinds self's FX name
  set_attr(ctx.emit("ScatterElements", {self, idx, src}, {ctx.output()}), "axis", dim);
}

// masked_scatter(self, mask, source): the k-th true position takes source's k-th element.
void masked_scatter(TranslateContext& ctx) {
  const DType out = ctx.output_meta().dtype;
  const std::string self = ctx.tensor("self");
  const std::string shape = shape_of(ctx, self);
  const std::string flat_shape = ctx.graph.constant_i64({-1});
  const std::string mask =
      ctx.emit1("Reshape", {ctx.emit1("Expand", {ctx.value("mask", DType::kBool), shape}), flat_shape}, "mask");
  const std::string counts =
      ctx.emit1("CumSum", {ctx.cast_if_needed(mask, DType::kBool, DType::kInt64), ctx.graph.constant_i64({0}, true)});
  const std::string k = ctx.emit1(
      "Max", {ctx.emit1("Sub", {counts, ctx.graph.constant_i64({1}, true)}), ctx.graph.constant_i64({0}, true)}, "k");
  // One element more than source holds, so that the Gather stays inside it when source is empty (no true
  // position: every k is 0 and Where keeps self); torch never reads past source's true count.
  const std::string zero = ctx.emit1("Reshape", {ctx.constant(0, out), ctx.graph.constant_i64({1})});
  const std::string source = ctx.temp("source_padded");
  set_attr(ctx.emit("Concat", {ctx.emit1("Reshape", {ctx.value("source", out), flat_shape}, "source"), zero}, {source}),
           "axis", int64_t{0});
  const std::string taken = ctx.emit1("Gather", {source, k}, "taken");
  const std::string merged = ctx.emit1("Where", {mask, taken, ctx.emit1("Reshape", {self, flat_shape})});
  ctx.emit("Reshape", {merged, shape}, {ctx.output()});
}

// nonzero(self) -> [n, rank] (ONNX gives [rank, n]).
void nonzero(TranslateContext& ctx) {
  const std::string nz = ctx.emit1("NonZero", {ctx.tensor("self")});
  set_attr(ctx.emit("Transpose", {nz}, {ctx.output()}), "perm", std::vector<int64_t>{1, 0});
}

// nonzero_static(self, size, fill_value) -> [size, rank]: nonzero's rows, cut to `size` or filled up to it
// with rows of fill_value (Concat of `size` fill rows, then the first `size` rows).
void nonzero_static(TranslateContext& ctx) {
  const std::string nz = ctx.emit1("NonZero", {ctx.tensor("self")});
  auto* rows = ctx.emit("Transpose", {nz}, {ctx.temp("rows")});
  set_attr(rows, "perm", std::vector<int64_t>{1, 0});
  const std::string size = unsqueeze0(ctx, ctx.int_value("size"));
  const std::string fill_shape = concat(ctx, {size, ctx.graph.constant_i64({ctx.rank("self")})}, 0, "fill_shape");
  const std::string fill =
      ctx.emit1("Expand", {ctx.graph.constant_i64({ctx.int_arg("fill_value", -1)}, true), fill_shape}, "fill");
  const std::string all = concat(ctx, {rows->output(0), fill}, 0, "filled");
  ctx.emit("Slice", {all, ctx.graph.constant_i64({0}), size, ctx.graph.constant_i64({0})}, {ctx.output()});
}

// masked_select(self, mask) -> 1-D: the elements of self and mask broadcast together where mask holds, in
// row-major order (Compress of the flattened pair).
void masked_select(TranslateContext& ctx) {
  std::string self = ctx.tensor("self");
  std::string mask = ctx.value("mask", DType::kBool);
  const auto same_sizes = [](const pt2::TensorMeta& a, const pt2::TensorMeta& b) {
    if (a.sizes.size() != b.sizes.size()) return false;
    for (size_t i = 0; i < a.sizes.size(); ++i)
      if (a.sizes[i].value != b.sizes[i].value || a.sizes[i].expr != b.sizes[i].expr) return false;
    return true;
  };
  if (!same_sizes(ctx.input_meta("self"), ctx.input_meta("mask"))) {
    // ONNX Expand broadcasts both ways: self to the common shape, then mask to self's new shape.
    self = ctx.emit1("Expand", {self, shape_of(ctx, mask)}, "self_broadcast");
    mask = ctx.emit1("Expand", {mask, shape_of(ctx, self)}, "mask_broadcast");
  }
  const std::string flat = ctx.graph.constant_i64({-1});
  set_attr(
      ctx.emit("Compress", {ctx.emit1("Reshape", {self, flat}), ctx.emit1("Reshape", {mask, flat})}, {ctx.output()}),
      "axis", int64_t{0});
}

// embedding(weight, indices, ...): rows of the table.
void embedding(TranslateContext& ctx) {
  set_attr(ctx.emit("Gather", {ctx.tensor("weight"), ctx.tensor("indices")}, {ctx.output()}), "axis", int64_t{0});
}

// Which bag each index belongs to: offset2bag [n] (#(offsets <= i) - 1) and the membership matrix
// member [n, B] (bool), with padding_idx's positions in no bag.
struct BagMembership {
  std::string offset2bag, member, bags;
};

BagMembership bag_membership(TranslateContext& ctx, const std::string& indices, const std::string& offsets,
                             int64_t padding_idx) {
  const std::string zero = ctx.graph.constant_i64({0}, true), one = ctx.graph.constant_i64({1}, true);
  const std::string n = element(ctx, shape_of(ctx, indices), 0), bags = element(ctx, shape_of(ctx, offsets), 0);
  const std::string positions = ctx.emit1("Range", {zero, n, one}, "positions");
  // offset2bag[i] = #(offsets <= i) - 1
  const std::string started =
      ctx.emit1("LessOrEqual", {ctx.emit1("Unsqueeze", {offsets, ctx.graph.constant_i64({0})}),
                                ctx.emit1("Unsqueeze", {positions, ctx.graph.constant_i64({1})})});
  const std::string count = ctx.temp("started");
  emit_reduce(ctx, "ReduceSum", ctx.cast_if_needed(started, DType::kBool, DType::kInt64), {1}, false, count);
  const std::string offset2bag = ctx.emit1("Sub", {count, one}, "offset2bag");
  std::string member =
      ctx.emit1("Equal",
                {ctx.emit1("Unsqueeze", {offset2bag, ctx.graph.constant_i64({1})}),
                 ctx.emit1("Unsqueeze", {ctx.emit1("Range", {zero, bags, one}), ctx.graph.constant_i64({0})})},
                "member");  // [n, B]
  if (padding_idx >= 0) {
    const std::string kept =
        ctx.emit1("Not", {ctx.emit1("Equal", {indices, ctx.graph.constant_i64({padding_idx}, true)})});
    member = ctx.emit1("And", {member, ctx.emit1("Unsqueeze", {kept, ctx.graph.constant_i64({1})})});
  }
  return {offset2bag, member, bags};
}

// _embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights,
// include_last_offset, padding_idx) -> (output, offset2bag, bag_size, max_indices), 1-D indices.
// Bag membership is a [n, B] one-hot matrix: sums are a MatMul, max a masked ReduceMax. The extra
// outputs follow torch's CPU kernel: empty/zero for sum, bag sizes for mean's max_indices.
void embedding_bag(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  if (ctx.bool_arg("scale_grad_by_freq", false)) ctx.fail("scale_grad_by_freq is not supported");
  if (ctx.rank("indices") != 1) ctx.fail("2-D indices (bags without offsets) are not supported yet");
  const int64_t mode = ctx.int_arg("mode", 0);
  const std::string indices = ctx.value("indices", DType::kInt64);
  std::string offsets = ctx.value("offsets", DType::kInt64);
  if (ctx.bool_arg("include_last_offset", false))
    offsets = ctx.emit1("Slice", {offsets, ctx.graph.constant_i64({0}), ctx.graph.constant_i64({-1})}, "offsets");
  const std::string zero = ctx.graph.constant_i64({0}, true), one = ctx.graph.constant_i64({1}, true);
  const int64_t padding_idx = ctx.int_arg("padding_idx", -1);
  const auto [offset2bag, member, bags] = bag_membership(ctx, indices, offsets, padding_idx);
  auto* gather = ctx.emit("Gather", {ctx.tensor("weight"), indices}, {ctx.temp("rows")});
  set_attr(gather, "axis", int64_t{0});
  std::string rows = gather->output(0);  // [n, D]
  if (ctx.has("per_sample_weights"))
    rows = ctx.emit1("Mul",
                     {rows, ctx.emit1("Unsqueeze", {ctx.value("per_sample_weights", t), ctx.graph.constant_i64({1})})});
  const std::string member_t =
      ctx.emit1("Transpose", {ctx.cast_if_needed(member, DType::kBool, t)}, "member_t");  // [B, n]
  const std::string sizes = ctx.temp("bag_size");
  emit_reduce(ctx, "ReduceSum", ctx.cast_if_needed(member, DType::kBool, DType::kInt64), {0}, false, sizes);
  const std::string empty = ctx.emit1("Equal", {sizes, zero}, "empty_bag");
  const std::string empty_rows = ctx.emit1("Unsqueeze", {empty, ctx.graph.constant_i64({1})});
  if (mode == 0 || mode == 1) {
    std::string sum = ctx.emit1("MatMul", {member_t, rows}, "bag_sum");
    if (mode == 1) {
      const std::string divisor = ctx.cast_if_needed(ctx.emit1("Max", {sizes, one}), DType::kInt64, t);
      sum = ctx.emit1("Div", {sum, ctx.emit1("Unsqueeze", {divisor, ctx.graph.constant_i64({1})})});
    }
    ctx.alias_output(0, sum);
  } else if (mode == 2) {
    const std::string masked =
        ctx.emit1("Where",
                  {ctx.emit1("Unsqueeze", {ctx.emit1("Transpose", {member}), ctx.graph.constant_i64({2})}),
                   ctx.emit1("Unsqueeze", {rows, ctx.graph.constant_i64({0})}),
                   ctx.constant(-std::numeric_limits<double>::infinity(), t)},
                  "masked");  // [B, n, D]
    const std::string best = ctx.temp("bag_max");
    emit_reduce(ctx, "ReduceMax", masked, {1}, false, best);
    ctx.emit("Where", {empty_rows, ctx.constant(0, t), best}, {ctx.output(0)});
    auto* arg = ctx.emit("ArgMax", {masked}, {ctx.temp("argmax")});
    set_attr(arg, "axis", int64_t{1});
    set_attr(arg, "keepdims", int64_t{0});
    auto* which = ctx.emit("Gather", {indices, arg->output(0)}, {ctx.temp("max_rows")});
    set_attr(which, "axis", int64_t{0});
    ctx.emit("Where", {empty_rows, zero, which->output(0)}, {ctx.output(3)});
  } else {
    ctx.fail("unknown embedding_bag mode " + std::to_string(mode));
  }
  if (mode == 0) {
    // torch's sum mode fills offset2bag only when it had to look at padding.
    if (padding_idx >= 0)
      ctx.alias_output(1, offset2bag);
    else
      ctx.emit("Expand", {zero, ctx.graph.constant_i64({0})}, {ctx.output(1)});
    const std::string zeros = ctx.emit1("Expand", {zero, unsqueeze0(ctx, bags)});
    ctx.alias_output(2, zeros);
    ctx.alias_output(3, zeros);
    return;
  }
  ctx.alias_output(1, offset2bag);
  ctx.alias_output(2, sizes);
  if (mode == 1) ctx.alias_output(3, sizes);
}

// torch pads are (last-dim begin, last-dim end, previous-dim begin, ...); ONNX wants all begins, then all ends.
std::vector<int64_t> onnx_pads(const std::vector<int64_t>& torch_pads, int64_t rank) {
  std::vector<int64_t> pads(static_cast<size_t>(2 * rank), 0);
  for (size_t i = 0; i < torch_pads.size() && i / 2 < static_cast<size_t>(rank); i += 2) {
    const size_t axis = static_cast<size_t>(rank) - 1 - i / 2;
    pads[axis] = torch_pads[i];
    pads[axis + static_cast<size_t>(rank)] = i + 1 < torch_pads.size() ? torch_pads[i + 1] : 0;
  }
  return pads;
}

// ONNX Pad's `pads` input from torch's pad list argument `name`: a constant when every amount is static;
// when some come from the data (`.item()`, unbacked SymInts), the list is built at run time and reordered
// by one Gather (a trailing 0 fills the axes torch leaves unpadded).
std::string pads_value(TranslateContext& ctx, const std::string& name) {
  const pt2::Argument& a = ctx.required(name);
  const int64_t rank = ctx.rank("self");
  if (list_symbols(a).empty()) return ctx.graph.constant_i64(onnx_pads(ctx.ints_arg(name), rank));
  const int64_t count = static_cast<int64_t>(a.list_length());
  if (count % 2 != 0 || count / 2 > rank)
    ctx.fail("argument '" + name + "' has " + std::to_string(count) + " amounts for a rank-" + std::to_string(rank) +
             " input");
  std::vector<int64_t> order(static_cast<size_t>(2 * rank), count);  // index `count`: the appended 0
  for (int64_t i = 0; i < count; i += 2) {
    const int64_t axis = rank - 1 - i / 2;
    order[static_cast<size_t>(axis)] = i;
    order[static_cast<size_t>(axis + rank)] = i + 1;
  }
  const std::string amounts = concat(ctx, {ctx.int_list_value(name), ctx.graph.constant_i64({0})}, 0, "pad_amounts");
  auto* g = ctx.emit("Gather", {amounts, ctx.graph.constant_i64(order)}, {ctx.temp("pads")});
  set_attr(g, "axis", int64_t{0});
  return g->output(0);
}

// reflection_padNd / replication_padNd(self, padding)
void pad_with(TranslateContext& ctx, const std::string& mode) {
  set_attr(ctx.emit("Pad", {ctx.tensor("self"), pads_value(ctx, "padding")}, {ctx.output()}), "mode", mode);
}

void constant_pad_nd(TranslateContext& ctx) {
  const DType out = ctx.output_meta().dtype;
  const std::string value = ctx.has("value") ? ctx.value("value", out) : ctx.constant(0, out);
  set_attr(ctx.emit("Pad", {ctx.tensor("self"), pads_value(ctx, "pad"), value}, {ctx.output()}), "mode",
           std::string("constant"));
}
// F.pad(mode="circular"): per padded axis (torch lists the last axis first), the axis' last `left` elements
// before it and its first `right` after it, by Slice + Concat: ONNX Pad's mode "wrap" needs opset 19 and the
// models are opset 18. Amounts from the data (SymInts) are read at run time.
void pad_circular(TranslateContext& ctx) {
  constexpr int64_t kToEnd = std::numeric_limits<int64_t>::max();
  const pt2::Argument& a = ctx.required("pad");
  const int64_t rank = ctx.rank("self");
  const int64_t count = static_cast<int64_t>(a.list_length());
  if (count % 2 != 0 || count / 2 > rank)
    ctx.fail("argument 'pad' has " + std::to_string(count) + " amounts for a rank-" + std::to_string(rank) + " input");
  const bool symbolic = !list_symbols(a).empty();
  const std::string list = symbolic ? ctx.int_list_value("pad") : "";
  const std::vector<int64_t> amounts =
      symbolic ? std::vector<int64_t>(static_cast<size_t>(count), 1) : ctx.ints_arg("pad");
  const auto c = [&](int64_t v) { return ctx.graph.constant_i64({v}); };
  std::string x = ctx.tensor("self");
  for (int64_t i = 0; i < count; i += 2) {
    const int64_t axis = rank - 1 - i / 2;
    const int64_t left = amounts[static_cast<size_t>(i)], right = amounts[static_cast<size_t>(i + 1)];
    if (left < 0 || right < 0) ctx.fail("circular padding by a negative amount (cropping) is not translated");
    std::vector<std::string> parts;
    if (symbolic) {
      const std::string len = ctx.emit1("Slice", {shape_of(ctx, x), c(axis), c(axis + 1)}, "length");
      const std::string l = ctx.emit1("Slice", {list, c(i), c(i + 1)}),
                        r = ctx.emit1("Slice", {list, c(i + 1), c(i + 2)});
      parts = {ctx.emit1("Slice", {x, ctx.emit1("Sub", {len, l}), c(kToEnd), c(axis)}, "wrapped_left"), x,
               ctx.emit1("Slice", {x, c(0), r, c(axis)}, "wrapped_right")};
    } else {
      if (left > 0) parts.push_back(ctx.emit1("Slice", {x, c(-left), c(kToEnd), c(axis)}, "wrapped_left"));
      parts.push_back(x);
      if (right > 0) parts.push_back(ctx.emit1("Slice", {x, c(0), c(right), c(axis)}, "wrapped_right"));
    }
    if (parts.size() > 1) x = concat(ctx, parts, axis, "circular");
  }
  ctx.alias_output(0, x);
}

// pad(self, pad, mode, value): F.pad before decomposition.
void pad(TranslateContext& ctx) {
  const std::string mode = ctx.string_arg("mode", "constant");
  if (mode == "constant") return constant_pad_nd(ctx);
  if (mode == "circular") return pad_circular(ctx);
  const std::string onnx_mode = mode == "reflect" ? "reflect" : mode == "replicate" ? "edge" : "";
  if (onnx_mode.empty()) ctx.fail("unknown pad mode '" + mode + "'");
  set_attr(ctx.emit("Pad", {ctx.tensor("self"), pads_value(ctx, "pad")}, {ctx.output()}), "mode", onnx_mode);
}

void reflection_pad(TranslateContext& ctx) { pad_with(ctx, "reflect"); }
void replication_pad(TranslateContext& ctx) { pad_with(ctx, "edge"); }

}  // namespace

PARITY_TRANSLATION("aten::index_select.default", index_select, 18);
PARITY_TRANSLATION("aten::gather.default", gather, 18);
PARITY_TRANSLATION("aten::scatter.src", scatter, 18);
PARITY_TRANSLATION("aten::scatter.value", scatter, 18);
PARITY_TRANSLATION("aten::scatter_add.default", scatter_add, 18);
PARITY_TRANSLATION("aten::scatter_reduce.two", scatter_reduce, 18);
PARITY_TRANSLATION("aten::index.Tensor", index, 18);
PARITY_TRANSLATION("aten::index_put.default", index_put, 18);
PARITY_TRANSLATION("aten::index_put_.default", in_place<index_put>, 18);
PARITY_TRANSLATION("aten::slice_scatter.default", slice_scatter, 18);
PARITY_TRANSLATION("aten::select_scatter.default", select_scatter, 18);
PARITY_TRANSLATION("aten::masked_scatter.default", masked_scatter, 18);
PARITY_TRANSLATION("aten::nonzero.default", nonzero, 18);
PARITY_TRANSLATION("aten::nonzero_static.default", nonzero_static, 18);
PARITY_TRANSLATION("aten::masked_select.default", masked_select, 18);
PARITY_TRANSLATION("aten::embedding.default", embedding, 18);
PARITY_TRANSLATION("aten::_embedding_bag.default", embedding_bag, 18);
PARITY_TRANSLATION("aten::constant_pad_nd.default", constant_pad_nd, 18);
PARITY_TRANSLATION("aten::pad.default", pad, 18);
PARITY_TRANSLATION("aten::reflection_pad1d.default", reflection_pad, 18);
PARITY_TRANSLATION("aten::reflection_pad2d.default", reflection_pad, 18);
PARITY_TRANSLATION("aten::reflection_pad3d.default", reflection_pad, 18);
PARITY_TRANSLATION("aten::replication_pad1d.default", replication_pad, 18);
PARITY_TRANSLATION("aten::replication_pad2d.default", replication_pad, 18);
PARITY_TRANSLATION("aten::replication_pad3d.default", replication_pad, 18);

}  // namespace parity::exporter
