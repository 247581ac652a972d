// Reductions, scans, sorting and softmax ATen ops -> ONNX (opset 18: ReduceX takes axes as an input).
#include "../src/translate.h"

namespace parity::exporter {
namespace {

// The `dim` argument (int, int list or None) normalised; empty = every axis.
std::vector<int64_t> reduce_axes(TranslateContext& ctx, const std::string& tensor, const std::string& name = "dim") {
  const int64_t rank = ctx.rank(tensor);
  std::vector<int64_t> axes;
  const pt2::Argument* a = ctx.arg(name);
  if (!a || a->is_none()) return axes;
  if (a->is(pt2::ArgKind::as_int))
    axes = {a->as_int()};
  else
    axes = ctx.ints_arg(name);
  for (auto& d : axes) d = ctx.normalized_dim(d, rank);
  return axes;
}

// Input cast to the output dtype first (sum of bool/int8 accumulates in int64, dtype= overrides).
void reduce(TranslateContext& ctx, const std::string& op, const std::string& tensor = "self") {
  const DType out = ctx.output_meta().dtype;
  const std::string x = ctx.value(tensor, out);
  const auto axes = reduce_axes(ctx, tensor);
  if (ctx.rank(tensor) == 0) return ctx.alias_output(0, x);
  emit_reduce(ctx, op, x, axes, ctx.bool_arg("keepdim", false), ctx.output());
}

void sum(TranslateContext& ctx) { reduce(ctx, "ReduceSum"); }
void mean(TranslateContext& ctx) { reduce(ctx, "ReduceMean"); }
void prod(TranslateContext& ctx) { reduce(ctx, "ReduceProd"); }
void logsumexp(TranslateContext& ctx) { reduce(ctx, "ReduceLogSumExp"); }

// amax/amin: bool has no ReduceMax in opset 18, so go through uint8... int32 keeps it simple.
void extreme(TranslateContext& ctx, const std::string& op) {
  const DType out = ctx.output_meta().dtype;
  const DType work = out == DType::kBool ? DType::kInt32 : out;
  const std::string x = ctx.value("self", work);
  if (ctx.rank("self") == 0) return ctx.alias_output(0, x);
  const std::string r = ctx.temp("reduced");
  emit_reduce(ctx, op, x, reduce_axes(ctx, "self"), ctx.bool_arg("keepdim", false), r);
  ctx.alias_output(0, ctx.cast_if_needed(r, work, out));
}
void amax(TranslateContext& ctx) { extreme(ctx, "ReduceMax"); }
void amin(TranslateContext& ctx) { extreme(ctx, "ReduceMin"); }

// any/all: (x != 0) as int32, then ReduceMax/ReduceMin.
void any_all(TranslateContext& ctx, const std::string& op) {
  const std::string as_int = ctx.cast_if_needed(ctx.value("self", DType::kBool), DType::kBool, DType::kInt32);
  const std::string r = ctx.temp("reduced");
  if (ctx.rank("self") == 0) return ctx.alias_output(0, ctx.value("self", DType::kBool));
  emit_reduce(ctx, op, as_int, reduce_axes(ctx, "self"), ctx.bool_arg("keepdim", false), r);
  ctx.alias_output(0, ctx.cast_if_needed(r, DType::kInt32, ctx.output_meta().dtype));
}
void any(TranslateContext& ctx) { any_all(ctx, "ReduceMax"); }
void all(TranslateContext& ctx) { any_all(ctx, "ReduceMin"); }

// argmax/argmin(self, dim?, keepdim): dim None flattens first.
void arg_extreme(TranslateContext& ctx, const std::string& op) {
  std::string x = ctx.tensor("self");
  const bool keepdim = ctx.bool_arg("keepdim", false);
  const auto dim = ctx.optional_int("dim");
  if (!dim || ctx.rank("self") == 0) {
    x = ctx.emit1("Reshape", {x, ctx.graph.constant_i64({-1})}, "flat");
    const std::string r = ctx.temp("arg");
    auto* n = ctx.emit(op, {x}, {r});
    set_attr(n, "axis", int64_t{0});
    set_attr(n, "keepdims", int64_t{0});
    // keepdim with dim=None keeps every axis as 1.
    std::vector<int64_t> shape(keepdim ? static_cast<size_t>(ctx.rank("self")) : 0, 1);
    ctx.emit("Reshape", {r, ctx.graph.constant_i64(shape)}, {ctx.output()});
    return;
  }
  auto* n = ctx.emit(op, {x}, {ctx.output()});
  set_attr(n, "axis", ctx.normalized_dim(*dim, ctx.rank("self")));
  set_attr(n, "keepdims", int64_t{keepdim ? 1 : 0});
}
void argmax(TranslateContext& ctx) { arg_extreme(ctx, "ArgMax"); }
void argmin(TranslateContext& ctx) { arg_extreme(ctx, "ArgMin"); }

// max.dim / min.dim -> (values, indices)
void extreme_dim(TranslateContext& ctx, const std::string& reduce_op, const std::string& arg_op) {
  const std::string x = ctx.tensor("self");
  const int64_t dim = ctx.normalized_dim(ctx.int_arg("dim", 0), ctx.rank("self"));
  const bool keepdim = ctx.bool_arg("keepdim", false);
  if (ctx.rank("self") == 0) {
    ctx.alias_output(0, x);
    ctx.emit("Expand", {ctx.constant(0, DType::kInt64), ctx.graph.constant_i64({})}, {ctx.output(1)});
    return;
  }
  emit_reduce(ctx, reduce_op, x, {dim}, keepdim, ctx.output(0));
  auto* n = ctx.emit(arg_op, {x}, {ctx.output(1)});
  set_attr(n, "axis", dim);
  set_attr(n, "keepdims", int64_t{keepdim ? 1 : 0});
}
void max_dim(TranslateContext& ctx) { extreme_dim(ctx, "ReduceMax", "ArgMax"); }
void min_dim(TranslateContext& ctx) { extreme_dim(ctx, "ReduceMin", "ArgMin"); }

// max.default/min.default: over every element.
void max_all(TranslateContext& ctx) { emit_reduce(ctx, "ReduceMax", ctx.tensor("self"), {}, false, ctx.output()); }
void min_all(TranslateContext& ctx) { emit_reduce(ctx, "ReduceMin", ctx.tensor("self"), {}, false, ctx.output()); }

// var(self, dim, correction|unbiased, keepdim): sum((x - mean)^2) / (N - correction), N from the shapes.
std::string variance(TranslateContext& ctx) {
  const DType out = ctx.output_meta().dtype;
  const std::string x = ctx.value("self", out);
  const auto axes = reduce_axes(ctx, "self");
  const bool keepdim = ctx.bool_arg("keepdim", false);
  double correction = 1.0;
  if (ctx.arg("unbiased"))
    correction = ctx.bool_arg("unbiased", true) ? 1.0 : 0.0;
  else if (ctx.node.target.find("correction") != std::string::npos)
    correction = ctx.float_arg("correction", 1.0);
  const std::string m = ctx.temp("mean");
  emit_reduce(ctx, "ReduceMean", x, axes, true, m);
  const std::string d = ctx.emit1("Sub", {x, m}, "centered");
  const std::string ss = ctx.temp("sum_squares");
  emit_reduce(ctx, "ReduceSum", ctx.emit1("Mul", {d, d}), axes, keepdim, ss);
  const std::string n = ctx.emit1("Div", {ctx.emit1("Size", {x}), ctx.emit1("Size", {m})}, "count");
  const std::string denom =
      ctx.emit1("Sub", {ctx.cast_if_needed(n, DType::kInt64, out), ctx.constant(correction, out)});
  return ctx.emit1("Div", {ss, denom}, "var");
}
void var(TranslateContext& ctx) { ctx.alias_output(0, variance(ctx)); }
void std_(TranslateContext& ctx) { ctx.emit("Sqrt", {variance(ctx)}, {ctx.output()}); }

// cumsum(self, dim, dtype?)
void cumsum(TranslateContext& ctx) {
  const DType out = ctx.output_meta().dtype;
  const int64_t dim = ctx.normalized_dim(ctx.int_arg("dim", 0), ctx.rank("self"));
  std::string x = ctx.value("self", out);
  if (ctx.rank("self") == 0) return ctx.alias_output(0, x);
  ctx.emit("CumSum", {x, ctx.graph.constant_i64({dim}, true)}, {ctx.output()});
}

// topk(self, k, dim, largest, sorted) -> (values, indices)
void topk(TranslateContext& ctx) {
  const int64_t dim = ctx.normalized_dim(ctx.int_arg("dim", -1), ctx.rank("self"));
  auto* n = ctx.emit("TopK", {ctx.tensor("self"), unsqueeze0(ctx, ctx.int_value("k"))}, {ctx.output(0), ctx.output(1)});
  set_attr(n, "axis", dim);
  set_attr(n, "largest", int64_t{ctx.bool_arg("largest", true) ? 1 : 0});
  set_attr(n, "sorted", int64_t{1});
}

// kthvalue(self, k, dim, keepdim) -> (values, indices): the k-th smallest along dim, the last of TopK's k
// smallest (k may be a SymInt read from the data). Among equal values the index is TopK's (the lowest).
void kthvalue(TranslateContext& ctx) {
  const int64_t dim = ctx.normalized_dim(ctx.int_arg("dim", -1), ctx.rank("self"));
  const std::string k = ctx.int_value("k");
  auto* n = ctx.emit("TopK", {ctx.tensor("self"), unsqueeze0(ctx, k)}, {ctx.temp("smallest"), ctx.temp("order")});
  set_attr(n, "axis", dim);
  set_attr(n, "largest", int64_t{0});
  set_attr(n, "sorted", int64_t{1});
  // A [1] index keeps the axis (keepdim), a 0-d one drops it.
  std::string last = ctx.emit1("Sub", {k, ctx.graph.constant_i64({1}, true)}, "kth");
  if (ctx.bool_arg("keepdim", false)) last = unsqueeze0(ctx, last);
  for (size_t i = 0; i < 2; ++i) set_attr(ctx.emit("Gather", {n->output(i), last}, {ctx.output(i)}), "axis", dim);
}

// sort(self, dim, descending) -> TopK over the whole axis.
void sort(TranslateContext& ctx) {
  const int64_t dim = ctx.normalized_dim(ctx.int_arg("dim", -1), ctx.rank("self"));
  const std::string x = ctx.tensor("self");
  const std::string k = ctx.emit1("Unsqueeze", {element(ctx, shape_of(ctx, x), dim), ctx.graph.constant_i64({0})}, "k");
  auto* n = ctx.emit("TopK", {x, k}, {ctx.output(0), ctx.output(1)});
  set_attr(n, "axis", dim);
  set_attr(n, "largest", int64_t{ctx.bool_arg("descending", false) ? 1 : 0});
  set_attr(n, "sorted", int64_t{1});
}

void argsort(TranslateContext& ctx) {
  const int64_t dim = ctx.normalized_dim(ctx.int_arg("dim", -1), ctx.rank("self"));
  const std::string x = ctx.tensor("self");
  const std::string k = ctx.emit1("Unsqueeze", {element(ctx, shape_of(ctx, x), dim), ctx.graph.constant_i64({0})}, "k");
  auto* n = ctx.emit("TopK", {x, k}, {ctx.temp("values"), ctx.output()});
  set_attr(n, "axis", dim);
  set_attr(n, "largest", int64_t{ctx.bool_arg("descending", false) ? 1 : 0});
  set_attr(n, "sorted", int64_t{1});
}

// _softmax(self, dim, half_to_float) / softmax.int(self, dim, dtype)
void softmax_like(TranslateContext& ctx, const std::string& op) {
  const DType out = ctx.output_meta().dtype;
  const std::string x = ctx.value("self", out);
  if (ctx.rank("self") == 0) {
    ctx.alias_output(0, op == "Softmax" ? ctx.constant(1, out) : ctx.constant(0, out));
    return;
  }
  set_attr(ctx.emit(op, {x}, {ctx.output()}), "axis", ctx.normalized_dim(ctx.int_arg("dim", -1), ctx.rank("self")));
}
void softmax(TranslateContext& ctx) { softmax_like(ctx, "Softmax"); }
void log_softmax(TranslateContext& ctx) { softmax_like(ctx, "LogSoftmax"); }

}  // namespace

PARITY_TRANSLATION("aten::sum.dim_IntList", sum, 18);
PARITY_TRANSLATION("aten::sum.default", sum, 18);
PARITY_TRANSLATION("aten::mean.dim", mean, 18);
PARITY_TRANSLATION("aten::mean.default", mean, 18);
PARITY_TRANSLATION("aten::prod.dim_int", prod, 18);
PARITY_TRANSLATION("aten::prod.default", prod, 18);
PARITY_TRANSLATION("aten::logsumexp.default", logsumexp, 18);
PARITY_TRANSLATION("aten::amax.default", amax, 18);
PARITY_TRANSLATION("aten::amin.default", amin, 18);
PARITY_TRANSLATION("aten::any.default", any, 18);
PARITY_TRANSLATION("aten::any.dim", any, 18);
PARITY_TRANSLATION("aten::any.dims", any, 18);
PARITY_TRANSLATION("aten::all.default", all, 18);
PARITY_TRANSLATION("aten::all.dim", all, 18);
PARITY_TRANSLATION("aten::all.dims", all, 18);
// torch's own helpers behind `assert tensor.all()` style checks (Gemma-3n): a bool tensor to one bool.
PARITY_TRANSLATION("aten::_is_all_true.default", all, 18);
PARITY_TRANSLATION("aten::_is_any_true.default", any, 18);
PARITY_TRANSLATION("aten::argmax.default", argmax, 18);
PARITY_TRANSLATION("aten::argmin.default", argmin, 18);
PARITY_TRANSLATION("aten::max.dim", max_dim, 18);
PARITY_TRANSLATION("aten::min.dim", min_dim, 18);
PARITY_TRANSLATION("aten::max.default", max_all, 18);
PARITY_TRANSLATION("aten::min.default", min_all, 18);
PARITY_TRANSLATION("aten::var.correction", var, 18);
PARITY_TRANSLATION("aten::var.dim", var, 18);
PARITY_TRANSLATION("aten::std.correction", std_, 18);
PARITY_TRANSLATION("aten::std.dim", std_, 18);
PARITY_TRANSLATION("aten::cumsum.default", cumsum, 18);
PARITY_TRANSLATION("aten::topk.default", topk, 18);
PARITY_TRANSLATION("aten::kthvalue.default", kthvalue, 18);
PARITY_TRANSLATION("aten::sort.default", sort, 18);
PARITY_TRANSLATION("aten::sort.stable", sort, 18);
PARITY_TRANSLATION("aten::argsort.default", argsort, 18);
PARITY_TRANSLATION("aten::argsort.stable", argsort, 18);
PARITY_TRANSLATION("aten::_softmax.default", softmax, 18);
PARITY_TRANSLATION("aten::softmax.int", softmax, 18);
PARITY_TRANSLATION("aten::_log_softmax.default", log_softmax, 18);
PARITY_TRANSLATION("aten::log_softmax.int", log_softmax, 18);

}  // namespace parity::exporter
