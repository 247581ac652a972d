// CompositeImplicitAutograd nn and statistics ops that torch.export keeps in a program (nn.ConvTranspose*
// calls conv_transpose*d, F.cosine_similarity, F.one_hot, Tensor.var() with `unbiased`, ...), written with
// the formulas of torch's composites.
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "../src/translate.h"
#include "unbatched_conv.h"
#include "attention_mask.h"

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
  const UnbatchedConv unbatched(ctx);
  std::vector<std::string> inputs = {unbatched.input(), ctx.tensor("weight")};
  if (ctx.has("bias")) inputs.push_back(ctx.tensor("bias"));
  auto* node = ctx.emit("ConvTranspose", inputs, {unbatched.result()});
  set_attr(node, "strides", per_dim(ctx, "stride", n, 1));
  set_attr(node, "dilations", per_dim(ctx, "dilation", n, 1));
  set_attr(node, "group", ctx.int_arg("groups", 1));
  std::vector<int64_t> pads = per_dim(ctx, "padding", n, 0);
  pads.insert(pads.end(), pads.begin(), pads.end());
  set_attr(node, "pads", pads);
  const auto extra = per_dim(ctx, "output_padding", n, 0);
  if (std::any_of(extra.begin(), extra.end(), [](int64_t v) { return v != 0; }))
    set_attr(node, "output_padding", extra);
  unbatched.finish();
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

// triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction):
// max(0, margin + d(a, p) - d(a, n)) with d the pairwise distance (swap: d(a, n) = min(d(a, n), d(p, n))).
void triplet_margin_loss(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const double p = ctx.float_arg("p", 2.0);
  const std::string eps = ctx.constant(ctx.float_arg("eps", 1e-6), t);
  auto dist = [&](const char* a, const char* b) {
    const std::string out = ctx.temp("distance");
    p_norm_last(ctx, ctx.emit1("Add", {ctx.emit1("Sub", {ctx.value(a, t), ctx.value(b, t)}), eps}), p, false, t, out);
    return out;
  };
  const std::string pos = dist("anchor", "positive");
  std::string neg = dist("anchor", "negative");
  if (ctx.bool_arg("swap", false)) neg = ctx.emit1("Min", {neg, dist("positive", "negative")});
  const std::string v = ctx.emit1("Sub", {ctx.emit1("Add", {ctx.constant(ctx.float_arg("margin", 1.0), t), pos}), neg});
  reduce_loss(ctx, ctx.emit1("Max", {v, ctx.constant(0, t)}));
}

// torch's pad list (last dim first, begin/end pairs) as ONNX pads (begins of every dim, then ends).
std::vector<int64_t> onnx_pads_of(TranslateContext& ctx, const std::vector<int64_t>& pad, int64_t rank) {
  if (pad.size() % 2 || static_cast<int64_t>(pad.size()) > 2 * rank) ctx.fail("pad list of a wrong length");
  std::vector<int64_t> pads(static_cast<size_t>(2 * rank), 0);
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    const auto d = static_cast<size_t>(rank - 1 - static_cast<int64_t>(i));
    pads[d] = pad[2 * i];
    pads[d + static_cast<size_t>(rank)] = pad[2 * i + 1];
  }
  return pads;
}

// Circular padding: each padded dim becomes x[-begin:] ++ x ++ x[:end] (one Concat per dim).
std::string pad_circular_of(TranslateContext& ctx, std::string x, const std::vector<int64_t>& pad, int64_t rank) {
  const auto pads = onnx_pads_of(ctx, pad, rank);
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t b = pads[static_cast<size_t>(d)], e = pads[static_cast<size_t>(d + rank)];
    if (b < 0 || e < 0) ctx.fail("circular padding with negative pads is not supported");
    if (b == 0 && e == 0) continue;
    const std::string axis = i64s(ctx, {d});
    std::vector<std::string> parts;
    if (b > 0)
      parts.push_back(ctx.emit1("Slice", {x, i64s(ctx, {-b}), i64s(ctx, {std::numeric_limits<int64_t>::max()}), axis}));
    parts.push_back(x);
    if (e > 0) parts.push_back(ctx.emit1("Slice", {x, i64s(ctx, {0}), i64s(ctx, {e}), axis}));
    x = concat(ctx, parts, d, "circular");
  }
  return x;
}
void pad_circular(TranslateContext& ctx) {
  ctx.alias_output(
      0, ctx.emit1("Identity", {pad_circular_of(ctx, ctx.tensor("self"), ctx.ints_arg("pad"), ctx.rank("self"))}));
}

// _pad_enum(self, pad, mode, value?): torch's padding_mode enum, 0 reflect, 1 replicate, 2 circular,
// 3 constant.
void pad_enum(TranslateContext& ctx) {
  const int64_t mode = ctx.int_arg("mode", 3), rank = ctx.rank("self");
  const auto pad = ctx.ints_arg("pad");
  if (mode == 2)
    return ctx.alias_output(0, ctx.emit1("Identity", {pad_circular_of(ctx, ctx.tensor("self"), pad, rank)}));
  if (mode < 0 || mode > 3) ctx.fail("_pad_enum: unknown mode " + std::to_string(mode));
  std::vector<std::string> inputs = {ctx.tensor("self"), i64s(ctx, onnx_pads_of(ctx, pad, rank))};
  if (mode == 3)
    inputs.push_back(ctx.constant(ctx.has("value") ? ctx.float_arg("value", 0) : 0, ctx.output_meta().dtype));
  auto* node = ctx.emit("Pad", inputs, {ctx.output()});
  set_attr(node, "mode", std::string(mode == 3 ? "constant" : mode == 0 ? "reflect" : "edge"));
}

// thnn_conv2d / slow_conv3d (self, weight, kernel_size, bias?, stride, padding): a plain Conv.
void slow_conv(TranslateContext& ctx) {
  const size_t n = static_cast<size_t>(ctx.rank("weight") - 2);
  std::vector<std::string> inputs = {ctx.tensor("self"), ctx.tensor("weight")};
  if (ctx.has("bias")) inputs.push_back(ctx.tensor("bias"));
  auto* node = ctx.emit("Conv", inputs, {ctx.output()});
  set_attr(node, "kernel_shape", per_dim(ctx, "kernel_size", n, 1));
  set_attr(node, "strides", per_dim(ctx, "stride", n, 1));
  std::vector<int64_t> pads = per_dim(ctx, "padding", n, 0);
  pads.insert(pads.end(), pads.begin(), pads.end());
  set_attr(node, "pads", pads);
}

// [C] -> [C, 1, ..., 1] broadcasting over dim 1 of a rank-`rank` input.
std::string per_channel(TranslateContext& ctx, const std::string& v, int64_t rank) {
  std::vector<int64_t> shape = {-1};
  for (int64_t i = 2; i < rank; ++i) shape.push_back(1);
  return ctx.emit1("Reshape", {v, i64s(ctx, shape)});
}

// _batch_norm_impl_index(input, weight?, bias?, running_mean?, running_var?, training, momentum, eps, cudnn):
// output 0 is batch_norm's; training uses the batch statistics (biased variance) and returns the mean and
// 1/sqrt(var + eps) per channel, evaluation the running ones and empty statistics (as the CPU kernel).
void batch_norm_impl_index(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const std::string x = ctx.value("input", t);
  const int64_t rank = ctx.rank("input");
  const bool training = ctx.bool_arg("training", false) || !ctx.has("running_mean");
  if (ctx.bool_arg("training", false) && ctx.has("running_mean"))
    ctx.fail("_batch_norm_impl_index in training mode updates the running statistics: export in eval mode");
  std::string mean, var;
  std::vector<int64_t> axes = {0};
  for (int64_t d = 2; d < rank; ++d) axes.push_back(d);
  if (training) {
    mean = ctx.temp("mean");
    var = ctx.temp("var");
    emit_reduce(ctx, "ReduceMean", x, axes, true, mean);
    const std::string d = ctx.emit1("Sub", {x, mean});
    emit_reduce(ctx, "ReduceMean", ctx.emit1("Mul", {d, d}), axes, true, var);
  } else {
    mean = per_channel(ctx, ctx.value("running_mean", t), rank);
    var = per_channel(ctx, ctx.value("running_var", t), rank);
  }
  const std::string invstd = ctx.emit1(
      "Reciprocal", {ctx.emit1("Sqrt", {ctx.emit1("Add", {var, ctx.constant(ctx.float_arg("eps", 1e-5), t)})})});
  std::string y = ctx.emit1("Mul", {ctx.emit1("Sub", {x, mean}), invstd});
  if (ctx.has("weight")) y = ctx.emit1("Mul", {y, per_channel(ctx, ctx.value("weight", t), rank)});
  if (ctx.has("bias")) y = ctx.emit1("Add", {y, per_channel(ctx, ctx.value("bias", t), rank)});
  ctx.alias_output(0, y);
  const std::string empty = ctx.emit1("Expand", {ctx.constant(0, t), i64s(ctx, {0})});
  ctx.alias_output(1, training ? ctx.emit1("Reshape", {mean, i64s(ctx, {-1})}) : empty);
  ctx.alias_output(2, training ? ctx.emit1("Reshape", {invstd, i64s(ctx, {-1})}) : empty);
  ctx.alias_output(3, empty);
}

// _fused_rms_norm(input, normalized_shape, weight?, eps?) -> (x * rstd * weight, rstd), rstd =
// rsqrt(mean(x^2) + eps) over the normalized dims (kept); eps defaults to the dtype's machine epsilon.
void fused_rms_norm(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const std::string x = ctx.value("input", t);
  const int64_t rank = ctx.rank("input"), n = static_cast<int64_t>(ctx.required("normalized_shape").list_length());
  std::vector<int64_t> axes;
  for (int64_t d = rank - n; d < rank; ++d) axes.push_back(d);
  double eps = t == DType::kFloat64 ? std::numeric_limits<double>::epsilon() : std::numeric_limits<float>::epsilon();
  if (ctx.has("eps")) eps = ctx.float_arg("eps", eps);
  const std::string ms = ctx.temp("mean_square");
  emit_reduce(ctx, "ReduceMean", ctx.emit1("Mul", {x, x}), axes, true, ms);
  const std::string rstd = ctx.emit1("Reciprocal", {ctx.emit1("Sqrt", {ctx.emit1("Add", {ms, ctx.constant(eps, t)})})});
  std::string y = ctx.emit1("Mul", {x, rstd});
  if (ctx.has("weight")) y = ctx.emit1("Mul", {y, ctx.value("weight", t)});
  ctx.alias_output(0, y);
  ctx.alias_output(1, rstd);
}

// _scaled_dot_product_attention_math(query, key, value, attn_mask?, dropout_p, is_causal, dropout_mask?,
// scale?, enable_gqa) -> (softmax(q k^T * scale + mask) v, the attention weights).
void sdpa_math(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  if (ctx.float_arg("dropout_p", 0.0) != 0.0 || ctx.has("dropout_mask"))
    ctx.fail("_scaled_dot_product_attention_math with dropout is not supported");
  const bool gqa = ctx.bool_arg("enable_gqa", false);
  std::string scores = attention_scores(ctx, t, gqa ? repeat_kv_heads(ctx, ctx.tensor("key")) : "");
  const std::string minus_inf = ctx.constant(-std::numeric_limits<double>::infinity(), t);
  if (ctx.bool_arg("is_causal", false)) {
    const std::string last2 =
        ctx.emit1("Slice", {shape_of(ctx, scores), i64s(ctx, {-2}), i64s(ctx, {std::numeric_limits<int64_t>::max()})});
    auto* tri = ctx.emit("Trilu", {ctx.emit1("Expand", {ctx.constant(1, t), last2})}, {ctx.temp("causal")});
    set_attr(tri, "upper", int64_t{0});
    scores = ctx.emit1("Where", {ctx.emit1("Equal", {tri->output(0), ctx.constant(0, t)}), minus_inf, scores});
  }
  if (ctx.has("attn_mask")) {
    scores = ctx.input_meta("attn_mask").dtype == DType::kBool
                 ? ctx.emit1("Where", {ctx.tensor("attn_mask"), scores, minus_inf})
                 : ctx.emit1("Add", {scores, ctx.value("attn_mask", t)});
  }
  auto* sm = ctx.emit("Softmax", {scores}, {ctx.temp("weights")});
  set_attr(sm, "axis", int64_t{-1});
  std::string weights = sm->output(0);
  if (ctx.has("attn_mask")) weights = zero_fully_masked_rows(ctx, scores, weights, t);
  ctx.emit("MatMul", {weights, gqa ? repeat_kv_heads(ctx, ctx.tensor("value")) : ctx.tensor("value")}, {ctx.output(0)});
  ctx.alias_output(1, weights);
}

// _upsample_nearest_exact{1,2,3}d.vec(input, output_size?, scale_factors?): torch's source index
// floor((i + 0.5) * in / out) is Resize's half_pixel with round_prefer_ceil.
void upsample_nearest_exact(TranslateContext& ctx) {
  const std::string x = ctx.tensor("input");
  const int64_t rank = ctx.rank("input");
  std::vector<std::string> inputs = {x, ""};
  if (ctx.has("scale_factors")) {
    const auto factors = ctx.required("scale_factors").as_floats();
    if (static_cast<int64_t>(factors.size()) != rank - 2) ctx.fail("one scale factor per spatial dim is needed");
    Tensor s(DType::kFloat32, {rank});
    s.data<float>()[0] = s.data<float>()[1] = 1.0f;
    for (size_t i = 0; i < factors.size(); ++i) s.data<float>()[i + 2] = static_cast<float>(factors[i]);
    const std::string name = ctx.graph.unique_name(ctx.node.name + "_scales");
    ctx.graph.add_initializer(name, s);
    inputs.push_back(name);
  } else {
    const std::string nc = ctx.emit1("Slice", {shape_of(ctx, x), i64s(ctx, {0}), i64s(ctx, {2})}, "nc");
    inputs.push_back("");
    inputs.push_back(concat(ctx, {nc, ctx.int_list_value("output_size")}, 0, "sizes"));
  }
  auto* node = ctx.emit("Resize", inputs, {ctx.output()});
  set_attr(node, "mode", std::string("nearest"));
  set_attr(node, "coordinate_transformation_mode", std::string("half_pixel"));
  set_attr(node, "nearest_mode", std::string("round_prefer_ceil"));
}

// adaptive_max_pool1d(self, output_size) -> (values, indices): window i spans [floor(i L / n),
// ceil((i + 1) L / n)) of the (static) length L; one ReduceMax and one ArgMax (first maximum) per window.
void adaptive_max_pool1d(TranslateContext& ctx) {
  const auto& sizes = ctx.input_meta("self").sizes;
  if (sizes.empty() || !sizes.back().value) ctx.fail("adaptive_max_pool1d needs a static length");
  const int64_t len = *sizes.back().value, n = ctx.ints_arg("output_size").at(0);
  if (n <= 0 || len <= 0) ctx.fail("adaptive_max_pool1d with an empty input or output");
  const std::string x = ctx.tensor("self");
  std::vector<std::string> vals, idxs;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t start = i * len / n, end = ((i + 1) * len + n - 1) / n;
    const std::string w = ctx.emit1("Slice", {x, i64s(ctx, {start}), i64s(ctx, {end}), i64s(ctx, {-1})});
    const std::string v = ctx.temp("window_max");
    emit_reduce(ctx, "ReduceMax", w, {-1}, true, v);
    vals.push_back(v);
    auto* am = ctx.emit("ArgMax", {w}, {ctx.temp("window_argmax")});
    set_attr(am, "axis", int64_t{-1});
    set_attr(am, "keepdims", int64_t{1});
    idxs.push_back(ctx.emit1("Add", {am->output(0), ctx.graph.constant_i64({start}, true)}));
  }
  set_attr(ctx.emit("Concat", vals, {ctx.output(0)}), "axis", int64_t{-1});
  set_attr(ctx.emit("Concat", idxs, {ctx.output(1)}), "axis", int64_t{-1});
}

// native_channel_shuffle / channel_shuffle (self, groups): [N, g, C/g, ...] with the two group dims swapped.
void channel_shuffle(TranslateContext& ctx) {
  const int64_t rank = ctx.rank("self"), g = ctx.int_arg("groups", 1);
  if (rank < 3) ctx.fail("channel_shuffle needs an input of rank >= 3");
  const std::string x = ctx.tensor("self"), shape = shape_of(ctx, x);
  const std::string split = concat(
      ctx, {slice_shape(ctx, shape, 0, 1), i64s(ctx, {g, -1}), slice_shape(ctx, shape, 2, rank)}, 0, "grouped_shape");
  std::vector<int64_t> perm = {0, 2, 1};
  for (int64_t d = 3; d <= rank; ++d) perm.push_back(d);
  const std::string swapped = ctx.temp("swapped");
  set_attr(ctx.emit("Transpose", {ctx.emit1("Reshape", {x, split})}, {swapped}), "perm", perm);
  ctx.emit("Reshape", {swapped, shape}, {ctx.output()});
}

// norm_except_dim(v, pow, dim): the pow-norm over every dim but `dim` (kept as size-1 dims); dim = -1 is
// the norm of the whole tensor.
void norm_except_dim(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const int64_t rank = ctx.rank("v"), dim = ctx.int_arg("dim", 0);
  const double p = static_cast<double>(ctx.int_arg("pow", 2));
  std::vector<int64_t> axes;
  for (int64_t d = 0; d < rank; ++d)
    if (dim == -1 || d != ctx.normalized_dim(dim, rank)) axes.push_back(d);
  const std::string v = ctx.value("v", t);
  if (p == 2.0) return (void)emit_reduce(ctx, "ReduceL2", v, axes, dim != -1, ctx.output());
  const std::string s = ctx.temp("sum_pow");
  emit_reduce(ctx, "ReduceSum", ctx.emit1("Pow", {ctx.emit1("Abs", {v}), ctx.constant(p, t)}), axes, dim != -1, s);
  ctx.emit("Pow", {s, ctx.constant(1.0 / p, t)}, {ctx.output()});
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
PARITY_TRANSLATION("aten::triplet_margin_loss.default", triplet_margin_loss, 18);
PARITY_TRANSLATION("aten::_pad_circular.default", pad_circular, 18);
PARITY_TRANSLATION("aten::_pad_enum.default", pad_enum, 18);
PARITY_TRANSLATION("aten::thnn_conv2d.default", slow_conv, 18);
PARITY_TRANSLATION("aten::slow_conv3d.default", slow_conv, 18);
PARITY_TRANSLATION("aten::_batch_norm_impl_index.default", batch_norm_impl_index, 18);
PARITY_TRANSLATION("aten::_fused_rms_norm.default", fused_rms_norm, 18);
PARITY_TRANSLATION("aten::_scaled_dot_product_attention_math.default", sdpa_math, 18);
PARITY_TRANSLATION("aten::_upsample_nearest_exact1d.vec", upsample_nearest_exact, 18);
PARITY_TRANSLATION("aten::_upsample_nearest_exact2d.vec", upsample_nearest_exact, 18);
PARITY_TRANSLATION("aten::_upsample_nearest_exact3d.vec", upsample_nearest_exact, 18);
PARITY_TRANSLATION("aten::adaptive_max_pool1d.default", adaptive_max_pool1d, 18);
PARITY_TRANSLATION("aten::native_channel_shuffle.default", channel_shuffle, 18);
PARITY_TRANSLATION("aten::channel_shuffle.default", channel_shuffle, 18);
PARITY_TRANSLATION("aten::norm_except_dim.default", norm_except_dim, 18);
PARITY_ALIAS("aten::_convolution.deprecated", "aten::convolution.default");
PARITY_ALIAS("aten::_convolution_mode.default", "aten::conv1d.padding");
PARITY_ALIAS("aten::upsample_nearest2d.default", "aten::upsample_nearest1d.default");

}  // namespace parity::exporter
