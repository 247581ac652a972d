// CompositeImplicitAutograd nn and statistics ops that torch.export keeps in a program (nn.ConvTranspose*
// calls conv_transpose*d, F.cosine_similarity, F.one_hot, Tensor.var() with `unbiased`, ...), written with
// the formulas of torch's composites.
#include <cmath>
#include <limits>

#include "../src/translate.h"

namespace parity::exporter {
namespace {

std::string i64s(TranslateContext& ctx, std::vector<int64_t> v) { return ctx.graph.constant_i64(v); }

std::vector<int64_t> per_dim(TranslateContext& ctx, const std::string& name, size_t n, int64_t fallback) {
  std::vector<int64_t> v = ctx.ints_arg(name, {fallback});
  if (v.size() == 1) v.assign(n, v[0]);
  if (v.size() != n)
    ctx.fail(name + " has " + std::to_string(v.size()) + " values for " + std::to_string(n) + " spatial dims");
  return v;
}

// conv_transposeNd.input(input, weight, bias?, stride, padding, output_padding, groups, dilation).
void conv_transpose(TranslateContext& ctx) {
  const size_t n = static_cast<size_t>(ctx.rank("weight") - 2);
  std::vector<std::string> inputs = {ctx.tensor("input"), ctx.tensor("weight")};
  if (ctx.has("bias")) inputs.push_back(ctx.tensor("bias"));
  auto* node = ctx.emit("ConvTranspose", inputs, {ctx.output()});
  set_attr(node, "strides", per_dim(ctx, "stride", n, 1));
  set_attr(node, "dilations", per_dim(ctx, "dilation", n, 1));
  set_attr(node, "group", ctx.int_arg("groups", 1));
  std::vector<int64_t> pads = per_dim(ctx, "padding", n, 0);
  pads.insert(pads.end(), pads.begin(), pads.end());
  set_attr(node, "pads", pads);
  const auto extra = per_dim(ctx, "output_padding", n, 0);
  for (int64_t v : extra)
    if (v != 0) return set_attr(node, "output_padding", extra);
}

// The reduced axes of a `dim` argument (absent or empty = every axis).
std::vector<int64_t> reduced_axes(TranslateContext& ctx, int64_t rank) {
  std::vector<int64_t> axes = ctx.has("dim") ? ctx.ints_arg("dim") : std::vector<int64_t>{};
  if (axes.empty())
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  for (auto& a : axes) a = ctx.normalized_dim(a, rank);
  return axes;
}

// The variance (and mean) of self over `dim`: sum((x - mean)^2) / (count - correction). The correction
// comes from `correction` (default 1) or from `unbiased` (the older overloads).
std::pair<std::string, std::string> var_and_mean(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const int64_t rank = ctx.rank("self");
  const std::string x = ctx.value("self", t);
  const std::vector<int64_t> axes = reduced_axes(ctx, rank);
  const bool keep = ctx.bool_arg("keepdim", false);
  double correction = ctx.bool_arg("unbiased", true) ? 1.0 : 0.0;
  if (ctx.has("correction")) correction = ctx.float_arg("correction", 1.0);
  const std::string mean = ctx.temp("mean"), ss = ctx.temp("sum_squares");
  emit_reduce(ctx, "ReduceMean", x, axes, true, mean);
  const std::string d = ctx.emit1("Sub", {x, mean});
  emit_reduce(ctx, "ReduceSum", ctx.emit1("Mul", {d, d}), axes, keep, ss);
  const std::string count = ctx.emit1("Div", {ctx.emit1("Size", {x}), ctx.emit1("Size", {mean})}, "count");
  const std::string denom =
      ctx.emit1("Sub", {ctx.cast_if_needed(count, DType::kInt64, t), ctx.constant(correction, t)});
  const std::string var = ctx.emit1("Div", {ss, denom}, "var");
  return {var, keep || rank == 0 ? mean : ctx.emit1("Squeeze", {mean, i64s(ctx, axes)})};
}
void var_all(TranslateContext& ctx) { ctx.alias_output(0, var_and_mean(ctx).first); }
void std_all(TranslateContext& ctx) { ctx.emit("Sqrt", {var_and_mean(ctx).first}, {ctx.output()}); }
void var_mean(TranslateContext& ctx) {
  const auto [var, mean] = var_and_mean(ctx);
  ctx.alias_output(0, var);
  ctx.alias_output(1, mean);
}
void std_mean(TranslateContext& ctx) {
  const auto [var, mean] = var_and_mean(ctx);
  ctx.emit("Sqrt", {var}, {ctx.output(0)});
  ctx.alias_output(1, mean);
}

// cosine_similarity(x1, x2, dim=1, eps=1e-8): sum((x1 / max(|x1|, eps)) * (x2 / max(|x2|, eps))) over dim,
// both inputs broadcast first (torch's composite since 2.0: each side normalised on its own).
void cosine_similarity(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const int64_t rank = std::max(ctx.rank("x1"), ctx.rank("x2"));
  const int64_t dim = ctx.normalized_dim(ctx.int_arg("dim", 1), rank);
  const std::string a0 = ctx.value("x1", t), b0 = ctx.value("x2", t);
  const std::string a = ctx.emit1("Expand", {a0, shape_of(ctx, b0)}), b = ctx.emit1("Expand", {b0, shape_of(ctx, a0)});
  const std::string eps = ctx.constant(ctx.float_arg("eps", 1e-8), t);
  auto unit = [&](const std::string& v) {
    const std::string norm = ctx.temp("norm");
    emit_reduce(ctx, "ReduceL2", v, {dim}, true, norm);
    return ctx.emit1("Div", {v, ctx.emit1("Max", {norm, eps})});
  };
  emit_reduce(ctx, "ReduceSum", ctx.emit1("Mul", {unit(a), unit(b)}), {dim}, false, ctx.output());
}

// The p-norm of v over its last axis.
void p_norm_last(TranslateContext& ctx, const std::string& v, double p, bool keep, DType t, const std::string& out) {
  if (p == 2.0)
    emit_reduce(ctx, "ReduceL2", v, {-1}, keep, out);
  else if (p == 1.0)
    emit_reduce(ctx, "ReduceL1", v, {-1}, keep, out);
  else if (std::isinf(p))
    emit_reduce(ctx, p > 0 ? "ReduceMax" : "ReduceMin", ctx.emit1("Abs", {v}), {-1}, keep, out);
  else if (p == 0.0)
    emit_reduce(ctx, "ReduceSum",
                ctx.cast_if_needed(ctx.emit1("Not", {ctx.emit1("Equal", {v, ctx.constant(0, t)})}), DType::kBool, t),
                {-1}, keep, out);
  else {
    const std::string s = ctx.temp("sum_pow");
    emit_reduce(ctx, "ReduceSum", ctx.emit1("Pow", {ctx.emit1("Abs", {v}), ctx.constant(p, t)}), {-1}, keep, s);
    ctx.emit("Pow", {s, ctx.constant(1.0 / p, t)}, {out});
  }
}

// pairwise_distance(x1, x2, p=2, eps=1e-6, keepdim=False) = norm(x1 - x2 + eps, p, dim=-1).
void pairwise_distance(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const std::string d = ctx.emit1(
      "Add", {ctx.emit1("Sub", {ctx.value("x1", t), ctx.value("x2", t)}), ctx.constant(ctx.float_arg("eps", 1e-6), t)});
  if (std::max(ctx.rank("x1"), ctx.rank("x2")) == 0) ctx.fail("pairwise_distance of 0-d tensors");
  p_norm_last(ctx, d, ctx.float_arg("p", 2.0), ctx.bool_arg("keepdim", false), t, ctx.output());
}

// one_hot(self, num_classes=-1): int64 [..., classes]; -1 = max(self) + 1 classes (data-dependent).
void one_hot(TranslateContext& ctx) {
  const std::string idx = ctx.value("self", DType::kInt64);
  const int64_t classes = ctx.int_arg("num_classes", -1);
  std::string depth;
  if (classes >= 0) {
    depth = ctx.graph.constant_i64({classes}, true);
  } else {
    const std::string top = ctx.temp("max_class");
    emit_reduce(ctx, "ReduceMax", idx, {}, false, top);
    depth = ctx.emit1("Add", {top, ctx.graph.constant_i64({1}, true)});
  }
  auto* node = ctx.emit("OneHot", {idx, depth, i64s(ctx, {0, 1})}, {ctx.output()});
  set_attr(node, "axis", int64_t{-1});
}

// A loss's reduction argument: 0 none, 1 mean, 2 sum.
void reduce_loss(TranslateContext& ctx, const std::string& loss) {
  const int64_t reduction = ctx.int_arg("reduction", 1);
  if (reduction == 0) return ctx.alias_output(0, loss);
  emit_reduce(ctx, reduction == 2 ? "ReduceSum" : "ReduceMean", loss, {}, false, ctx.output());
}

// l1_loss(self, target, reduction=mean) = |self - target|.
void l1_loss(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  reduce_loss(ctx, ctx.emit1("Abs", {ctx.emit1("Sub", {ctx.value("self", t), ctx.value("target", t)})}));
}

// nanmean(self, dim?, keepdim, dtype?) = sum of the non-NaN values / their count.
void nanmean(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const std::string x = ctx.value("self", t);
  const std::vector<int64_t> axes = reduced_axes(ctx, ctx.rank("self"));
  const bool keep = ctx.bool_arg("keepdim", false);
  const std::string nan = ctx.emit1("IsNaN", {x});
  const std::string sum = ctx.temp("sum"), count = ctx.temp("count");
  emit_reduce(ctx, "ReduceSum", ctx.emit1("Where", {nan, ctx.constant(0, t), x}), axes, keep, sum);
  emit_reduce(ctx, "ReduceSum", ctx.cast_if_needed(ctx.emit1("Not", {nan}), DType::kBool, t), axes, keep, count);
  ctx.emit("Div", {sum, count}, {ctx.output()});
}

}  // namespace

PARITY_TRANSLATION("aten::conv_transpose1d.default", conv_transpose, 18);
PARITY_TRANSLATION("aten::conv_transpose2d.input", conv_transpose, 18);
PARITY_TRANSLATION("aten::conv_transpose3d.input", conv_transpose, 18);
PARITY_TRANSLATION("aten::var.default", var_all, 18);
PARITY_TRANSLATION("aten::std.default", std_all, 18);
PARITY_TRANSLATION("aten::var_mean.default", var_mean, 18);
PARITY_TRANSLATION("aten::var_mean.dim", var_mean, 18);
PARITY_TRANSLATION("aten::var_mean.correction", var_mean, 18);
PARITY_TRANSLATION("aten::std_mean.default", std_mean, 18);
PARITY_TRANSLATION("aten::std_mean.dim", std_mean, 18);
PARITY_TRANSLATION("aten::std_mean.correction", std_mean, 18);
PARITY_TRANSLATION("aten::cosine_similarity.default", cosine_similarity, 18);
PARITY_TRANSLATION("aten::pairwise_distance.default", pairwise_distance, 18);
PARITY_TRANSLATION("aten::one_hot.default", one_hot, 18);
PARITY_TRANSLATION("aten::l1_loss.default", l1_loss, 18);
PARITY_TRANSLATION("aten::nanmean.default", nanmean, 18);
PARITY_ALIAS("aten::upsample_nearest2d.default", "aten::upsample_nearest1d.default");

}  // namespace parity::exporter
