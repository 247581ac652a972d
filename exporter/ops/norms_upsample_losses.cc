// nn ATen ops -> ONNX (torch_lib registry coverage): norms, upsampling of every rank, glu, 1-d max pool
// with indices, CPU flash attention, bilinear, embedding renorm, losses.
#include <cmath>
#include <limits>

#include "../src/translate.h"
#include "attention_mask.h"

namespace parity::exporter {
namespace {

constexpr int64_t kEnd = std::numeric_limits<int64_t>::max();

// [C] -> [C, 1, ..., 1] so that it broadcasts over dim 1 of a rank-`rank` input.
std::string per_channel(TranslateContext& ctx, const std::string& v, int64_t rank) {
  std::vector<int64_t> shape = {-1};
  for (int64_t i = 2; i < rank; ++i) shape.push_back(1);
  return ctx.emit1("Reshape", {v, ctx.graph.constant_i64(shape)});
}

// linalg_vector_norm(self, ord, dim?, keepdim, dtype?): the reduction ops ONNX has for 1, 2, +-inf; 0 counts
// non-zeros; any other p is (sum |x|^p)^(1/p). The input is cast to `dtype` first, as torch does.
void linalg_vector_norm(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const std::string x = ctx.value("self", t);
  const double p = ctx.float_arg("ord", 2.0);
  std::vector<int64_t> axes = ctx.has("dim") ? ctx.ints_arg("dim") : std::vector<int64_t>{};
  const int64_t rank = ctx.rank("self");
  for (auto& a : axes) a = ctx.normalized_dim(a, rank);
  if (rank == 0) axes.clear();
  const bool keep = ctx.bool_arg("keepdim", false);
  const std::string out = ctx.output();
  const std::string ax = ctx.emit1("Abs", {x});
  if (p == 2.0)
    emit_reduce(ctx, "ReduceL2", x, axes, keep, out);
  else if (p == 1.0)
    emit_reduce(ctx, "ReduceL1", x, axes, keep, out);
  else if (std::isinf(p))
    emit_reduce(ctx, p > 0 ? "ReduceMax" : "ReduceMin", ax, axes, keep, out);
  else if (p == 0.0) {
    const std::string nz =
        ctx.cast_if_needed(ctx.emit1("Not", {ctx.emit1("Equal", {x, ctx.constant(0, t)})}), DType::kBool, t);
    emit_reduce(ctx, "ReduceSum", nz, axes, keep, out);
  } else {
    const std::string s = ctx.temp("sum_pow");
    emit_reduce(ctx, "ReduceSum", ctx.emit1("Pow", {ax, ctx.constant(p, t)}), axes, keep, s);
    ctx.emit("Pow", {s, ctx.constant(1.0 / p, t)}, {out});
  }
}

// Normalises x with (mean, var) and applies the optional per-channel affine.
std::string normalize(TranslateContext& ctx, const std::string& x, const std::string& mean, const std::string& var,
                      double eps, int64_t rank, DType t) {
  const std::string invstd =
      ctx.emit1("Reciprocal", {ctx.emit1("Sqrt", {ctx.emit1("Add", {var, ctx.constant(eps, t)})})});
  std::string y = ctx.emit1("Mul", {ctx.emit1("Sub", {x, mean}), invstd});
  if (ctx.has("weight")) y = ctx.emit1("Mul", {y, per_channel(ctx, ctx.value("weight", t), rank)});
  if (ctx.has("bias")) y = ctx.emit1("Add", {y, per_channel(ctx, ctx.value("bias", t), rank)});
  return y;
}

// Biased mean and variance of x over `axes`, kept as broadcastable dims.
std::pair<std::string, std::string> moments(TranslateContext& ctx, const std::string& x,
                                            const std::vector<int64_t>& axes) {
  const std::string mean = ctx.temp("mean"), var = ctx.temp("var");
  emit_reduce(ctx, "ReduceMean", x, axes, true, mean);
  const std::string d = ctx.emit1("Sub", {x, mean});
  emit_reduce(ctx, "ReduceMean", ctx.emit1("Mul", {d, d}), axes, true, var);
  return {mean, var};
}

// instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn):
// statistics per (sample, channel) over the spatial dims; without use_input_stats the running ones.
void instance_norm(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const std::string x = ctx.value("input", t);
  const int64_t rank = ctx.rank("input");
  const double eps = ctx.float_arg("eps", 1e-5);
  std::string mean, var;
  if (ctx.bool_arg("use_input_stats", true)) {
    std::vector<int64_t> axes;
    for (int64_t i = 2; i < rank; ++i) axes.push_back(i);
    std::tie(mean, var) = moments(ctx, x, axes);
  } else {
    mean = per_channel(ctx, ctx.value("running_mean", t), rank);
    var = per_channel(ctx, ctx.value("running_var", t), rank);
  }
  ctx.alias_output(0, normalize(ctx, x, mean, var, eps, rank, t));
}

// native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps) ->
// (out, save_mean, save_invstd). Training: batch statistics, saved as [C]; eval: the running statistics and
// empty saved tensors (torch's CPU kernel). The schema declares no mutation, so running stats are not updated.
void native_batch_norm(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const std::string x = ctx.value("input", t);
  const int64_t rank = ctx.rank("input");
  const double eps = ctx.float_arg("eps", 1e-5);
  if (ctx.bool_arg("training", false)) {
    std::vector<int64_t> axes = {0};
    for (int64_t i = 2; i < rank; ++i) axes.push_back(i);
    auto [mean, var] = moments(ctx, x, axes);
    ctx.alias_output(0, normalize(ctx, x, mean, var, eps, rank, t));
    const std::string c = ctx.graph.constant_i64({-1});
    ctx.emit("Reshape", {mean, c}, {ctx.output(1)});
    const std::string invstd =
        ctx.emit1("Reciprocal", {ctx.emit1("Sqrt", {ctx.emit1("Add", {var, ctx.constant(eps, t)})})});
    ctx.emit("Reshape", {invstd, c}, {ctx.output(2)});
    return;
  }
  const std::string mean = per_channel(ctx, ctx.value("running_mean", t), rank);
  const std::string var = per_channel(ctx, ctx.value("running_var", t), rank);
  ctx.alias_output(0, normalize(ctx, x, mean, var, eps, rank, t));
  const std::string empty = ctx.emit1("Expand", {ctx.constant(0, ctx.output_dtype(1)), ctx.graph.constant_i64({0})});
  ctx.alias_output(1, empty);
  ctx.alias_output(2, empty);
}

// upsample_<mode><N>d: .default (self, output_size, [align_corners], scales...) and .vec (input,
// output_size?, [align_corners], scale_factors?) -> Resize. Explicit scales drive torch's coordinate
// mapping, so they are passed as scales when every spatial one is given; otherwise the output sizes.
void upsample(TranslateContext& ctx, const std::string& mode) {
  const bool vec = ctx.arg("input") != nullptr;
  const std::string x = ctx.tensor(vec ? "input" : "self");
  const int64_t rank = ctx.rank(vec ? "input" : "self");
  const int64_t n = rank - 2;
  std::vector<double> scales;
  if (vec && ctx.has("scale_factors")) {
    scales = ctx.required("scale_factors").as_floats();
  } else if (!vec) {
    const char* names[3][3] = {{"scales", "", ""}, {"scales_h", "scales_w", ""}, {"scales_d", "scales_h", "scales_w"}};
    for (int64_t i = 0; i < n; ++i)
      if (ctx.has(names[n - 1][i])) scales.push_back(ctx.float_arg(names[n - 1][i], 1.0));
    if (static_cast<int64_t>(scales.size()) != n) scales.clear();
  }
  std::vector<std::string> inputs = {x, ""};
  // With align_corners torch maps by the integer output length ((in - 1) / (out - 1)), never by the scale;
  // ONNX's reference Resize uses in * scale unrounded there (refrt does), ONNX Runtime the integer length.
  // The sizes, floor(in * scale) as torch computes them (in double), give both runtimes torch's mapping.
  const bool corners = mode != "nearest" && ctx.bool_arg("align_corners", false);
  if (!scales.empty() && corners) {
    const std::string spatial =
        ctx.emit1("Slice", {shape_of(ctx, x), ctx.graph.constant_i64({2}), ctx.graph.constant_i64({rank})}, "spatial");
    Tensor f(DType::kFloat64, {n});
    for (int64_t i = 0; i < n; ++i) f.data<double>()[i] = scales[static_cast<size_t>(i)];
    const std::string factors = ctx.graph.unique_name(ctx.node.name + "_scale_factors");
    ctx.graph.add_initializer(factors, f);
    const std::string scaled =
        ctx.emit1("Floor", {ctx.emit1("Mul", {ctx.cast_if_needed(spatial, DType::kInt64, DType::kFloat64), factors})});
    const std::string nc =
        ctx.emit1("Slice", {shape_of(ctx, x), ctx.graph.constant_i64({0}), ctx.graph.constant_i64({2})}, "nc");
    const std::string sizes = concat(ctx, {nc, ctx.cast_if_needed(scaled, DType::kFloat64, DType::kInt64)}, 0, "sizes");
    inputs.push_back("");
    inputs.push_back(sizes);
  } else if (!scales.empty()) {
    Tensor s(DType::kFloat32, {rank});
    s.data<float>()[0] = s.data<float>()[1] = 1.0f;
    for (int64_t i = 0; i < n; ++i) s.data<float>()[i + 2] = static_cast<float>(scales[static_cast<size_t>(i)]);
    const std::string name = ctx.graph.unique_name(ctx.node.name + "_scales");
    ctx.graph.add_initializer(name, s);
    inputs.push_back(name);
  } else {
    const std::string nc =
        ctx.emit1("Slice", {shape_of(ctx, x), ctx.graph.constant_i64({0}), ctx.graph.constant_i64({2})}, "nc");
    auto* sizes = ctx.emit("Concat", {nc, ctx.int_list_value("output_size")}, {ctx.temp("sizes")});
    set_attr(sizes, "axis", int64_t{0});
    inputs.push_back("");
    inputs.push_back(sizes->output(0));
  }
  auto* node = ctx.emit("Resize", inputs, {ctx.output()});
  set_attr(node, "mode", mode);
  if (mode == "nearest") {
    set_attr(node, "coordinate_transformation_mode", std::string("asymmetric"));
    set_attr(node, "nearest_mode", std::string("floor"));
    return;
  }
  set_attr(node, "coordinate_transformation_mode", std::string(corners ? "align_corners" : "pytorch_half_pixel"));
  if (mode == "cubic") set_attr(node, "cubic_coeff_a", -0.75f);  // torch's bicubic a
}
void upsample_nearest(TranslateContext& ctx) { upsample(ctx, "nearest"); }
void upsample_linear(TranslateContext& ctx) { upsample(ctx, "linear"); }
void upsample_cubic(TranslateContext& ctx) { upsample(ctx, "cubic"); }

// glu(self, dim) = a * sigmoid(b), a and b the two halves along dim.
void glu(TranslateContext& ctx) {
  const int64_t dim = ctx.normalized_dim(ctx.int_arg("dim", -1), ctx.rank("self"));
  const std::string x = ctx.tensor("self");
  const std::string half = ctx.emit1(
      "Div", {ctx.emit1("Gather", {shape_of(ctx, x), ctx.graph.constant_i64({dim})}), ctx.graph.constant_i64({2})});
  const std::string axis = ctx.graph.constant_i64({dim});
  const std::string a = ctx.emit1("Slice", {x, ctx.graph.constant_i64({0}), half, axis});
  const std::string b = ctx.emit1("Slice", {x, half, ctx.graph.constant_i64({kEnd}), axis});
  ctx.emit("Mul", {a, ctx.emit1("Sigmoid", {b})}, {ctx.output()});
}

// max_pool1d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode): MaxPool's indices count
// over the whole tensor; torch's within the length dim, hence the modulo.
void max_pool1d_with_indices(TranslateContext& ctx) {
  const std::string x = ctx.tensor("self");
  const bool batched = ctx.rank("self") == 3;
  const std::string x3 = batched ? x : ctx.emit1("Unsqueeze", {x, ctx.graph.constant_i64({0})});
  const auto kernel = ctx.ints_arg("kernel_size");
  auto stride = ctx.ints_arg("stride");
  if (stride.empty()) stride = kernel;
  const auto padding = ctx.ints_arg("padding", {0});
  const std::string values = ctx.temp("values"), raw = ctx.temp("flat_indices");
  auto* node = ctx.emit("MaxPool", {x3}, {values, raw});
  set_attr(node, "kernel_shape", std::vector<int64_t>{kernel[0]});
  set_attr(node, "strides", std::vector<int64_t>{stride[0]});
  set_attr(node, "pads", std::vector<int64_t>{padding[0], padding[0]});
  set_attr(node, "dilations", std::vector<int64_t>{ctx.ints_arg("dilation", {1})[0]});
  set_attr(node, "ceil_mode", int64_t{ctx.bool_arg("ceil_mode", false) ? 1 : 0});
  const std::string len = ctx.emit1("Gather", {shape_of(ctx, x3), ctx.graph.constant_i64({2}, true)});
  auto* mod = ctx.emit("Mod", {raw, len}, {ctx.temp("indices")});
  set_attr(mod, "fmod", int64_t{0});
  const std::string axes0 = ctx.graph.constant_i64({0});
  if (batched) {
    ctx.alias_output(0, values);
    ctx.alias_output(1, mod->output(0));
  } else {
    ctx.emit("Squeeze", {values, axes0}, {ctx.output(0)});
    ctx.emit("Squeeze", {mod->output(0), axes0}, {ctx.output(1)});
  }
}

// _scaled_dot_product_flash_attention_for_cpu(query, key, value, dropout_p, is_causal, attn_mask?, scale?)
// -> (output, logsumexp): softmax attention written out; logsumexp is that of the scaled, masked scores.
void sdpa_flash_cpu(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  if (ctx.float_arg("dropout_p", 0.0) != 0.0) ctx.fail("attention with dropout_p > 0 is not supported");
  const std::string v = ctx.tensor("value");
  std::string scores = attention_scores(ctx, t);
  const std::string minus_inf = ctx.constant(-std::numeric_limits<double>::infinity(), t);
  if (ctx.bool_arg("is_causal", false)) {
    const std::string ls =
        ctx.emit1("Slice", {shape_of(ctx, scores), ctx.graph.constant_i64({-2}), ctx.graph.constant_i64({kEnd})});
    auto* tri = ctx.emit("Trilu", {ctx.emit1("Expand", {ctx.constant(1, DType::kInt64), ls})}, {ctx.temp("causal")});
    set_attr(tri, "upper", int64_t{0});
    const std::string keep = ctx.cast_if_needed(tri->output(0), DType::kInt64, DType::kBool);
    scores = ctx.emit1("Where", {keep, scores, minus_inf});
  }
  if (ctx.has("attn_mask")) {
    if (ctx.input_meta("attn_mask").dtype == DType::kBool)
      scores = ctx.emit1("Where", {ctx.tensor("attn_mask"), scores, minus_inf});
    else
      scores = ctx.emit1("Add", {scores, ctx.value("attn_mask", t)});
  }
  auto* sm = ctx.emit("Softmax", {scores}, {ctx.temp("weights")});
  set_attr(sm, "axis", int64_t{-1});
  if (!ctx.has("attn_mask")) {
    ctx.emit("MatMul", {sm->output(0), v}, {ctx.output(0)});
    emit_reduce(ctx, "ReduceLogSumExp", scores, {-1}, false, ctx.output(1));
    return;
  }
  // torch's kernel gives a fully masked row output 0 and logsumexp 0 (not NaN and -inf).
  const std::string dead = fully_masked_rows(ctx, scores, t);
  const std::string zero = ctx.constant(0, t);
  ctx.emit("MatMul", {ctx.emit1("Where", {dead, zero, sm->output(0)}), v}, {ctx.output(0)});
  const std::string lse = ctx.temp("logsumexp");
  emit_reduce(ctx, "ReduceLogSumExp", scores, {-1}, true, lse);
  ctx.emit("Squeeze", {ctx.emit1("Where", {dead, zero, lse}), ctx.graph.constant_i64({-1})}, {ctx.output(1)});
}

// bilinear(input1, input2, weight, bias?): y[..., o] = x1[..., i] W[o, i, j] x2[..., j] + b[o].
void bilinear(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  auto* e = ctx.emit("Einsum", {ctx.value("input1", t), ctx.value("weight", t), ctx.value("input2", t)},
                     {ctx.temp("bilinear")});
  set_attr(e, "equation", std::string("...i,oij,...j->...o"));
  std::string y = e->output(0);
  if (ctx.has("bias")) y = ctx.emit1("Add", {y, ctx.value("bias", t)});
  ctx.alias_output(0, y);
}

// embedding_renorm(self, indices, max_norm, norm_type): rows that `indices` reference and whose p-norm
// exceeds max_norm are scaled by max_norm / (norm + 1e-7); other rows are kept.
void embedding_renorm(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const std::string w = ctx.tensor("self");
  const double max_norm = ctx.float_arg("max_norm", 1.0), p = ctx.float_arg("norm_type", 2.0);
  const std::string norm = ctx.temp("norm");
  if (p == 2.0)
    emit_reduce(ctx, "ReduceL2", w, {1}, true, norm);
  else if (p == 1.0)
    emit_reduce(ctx, "ReduceL1", w, {1}, true, norm);
  else {
    const std::string s = ctx.temp("sum_pow");
    emit_reduce(ctx, "ReduceSum", ctx.emit1("Pow", {ctx.emit1("Abs", {w}), ctx.constant(p, t)}), {1}, true, s);
    ctx.emit("Pow", {s, ctx.constant(1.0 / p, t)}, {norm});
  }
  const std::string scale =
      ctx.emit1("Div", {ctx.constant(max_norm, t), ctx.emit1("Add", {norm, ctx.constant(1e-7, t)})});
  const std::string rows = ctx.emit1("Gather", {shape_of(ctx, w), ctx.graph.constant_i64({0}, true)});
  const std::string ids =
      ctx.emit1("Range", {ctx.graph.constant_i64({0}, true), rows, ctx.graph.constant_i64({1}, true)});
  const std::string flat = ctx.emit1("Reshape", {ctx.value("indices", DType::kInt64), ctx.graph.constant_i64({1, -1})});
  const std::string hit_any = ctx.temp("referenced");
  emit_reduce(ctx, "ReduceMax",
              ctx.cast_if_needed(ctx.emit1("Equal", {ctx.emit1("Unsqueeze", {ids, ctx.graph.constant_i64({1})}), flat}),
                                 DType::kBool, DType::kInt64),
              {1}, true, hit_any);
  const std::string hit = ctx.cast_if_needed(hit_any, DType::kInt64, DType::kBool);
  const std::string renorm = ctx.emit1("And", {hit, ctx.emit1("Greater", {norm, ctx.constant(max_norm, t)})});
  ctx.emit("Where", {renorm, ctx.emit1("Mul", {w, scale}), w}, {ctx.output()});
}

// Reduction enum of the loss functions: 0 none, 1 mean, 2 sum.
std::string reduce_loss(TranslateContext& ctx, const std::string& loss, int64_t reduction,
                        const std::string& out_name) {
  if (reduction == 0) {
    ctx.emit("Identity", {loss}, {out_name});
  } else {
    emit_reduce(ctx, reduction == 1 ? "ReduceMean" : "ReduceSum", loss, {}, false, out_name);
  }
  return out_name;
}

void mse_loss(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const std::string d = ctx.emit1("Sub", {ctx.value("self", t), ctx.value("target", t)});
  reduce_loss(ctx, ctx.emit1("Mul", {d, d}), ctx.int_arg("reduction", 1), ctx.output());
}

// Negative log-likelihood of class-index targets on log-probabilities `logp` (class axis 1, or 0 for an
// unbatched input): per-element loss and weight (0 where target == ignore_index).
std::pair<std::string, std::string> nll_terms(TranslateContext& ctx, const std::string& logp, int64_t rank, DType t) {
  const int64_t axis = rank == 1 ? 0 : 1;
  const std::string target = ctx.value("target", DType::kInt64);
  const std::string ignore =
      ctx.has("ignore_index") ? ctx.value("ignore_index", DType::kInt64) : ctx.graph.constant_i64({-100}, true);
  const std::string ignored = ctx.emit1("Equal", {target, ignore});
  const std::string safe = ctx.emit1("Where", {ignored, ctx.graph.constant_i64({0}, true), target});
  const std::string ax = ctx.graph.constant_i64({axis});
  auto* g = ctx.emit("GatherElements", {logp, ctx.emit1("Unsqueeze", {safe, ax})}, {ctx.temp("picked")});
  set_attr(g, "axis", axis);
  const std::string picked = ctx.emit1("Squeeze", {g->output(0), ax});
  std::string w = ctx.has("weight") ? ctx.emit1("Gather", {ctx.value("weight", t), safe})
                                    : ctx.emit1("Expand", {ctx.constant(1, t), shape_of(ctx, target)});
  w = ctx.emit1("Where", {ignored, ctx.constant(0, t), w});
  return {ctx.emit1("Neg", {ctx.emit1("Mul", {picked, w})}), w};
}

// Sum of `loss` (/ sum of `w` for mean), or `loss` itself for reduction none.
std::string weighted_reduce(TranslateContext& ctx, const std::string& loss, const std::string& w, int64_t reduction,
                            const std::string& out_name) {
  if (reduction == 0) {
    ctx.emit("Identity", {loss}, {out_name});
    return out_name;
  }
  const std::string s = ctx.temp("loss_sum");
  emit_reduce(ctx, "ReduceSum", loss, {}, false, reduction == 2 ? out_name : s);
  if (reduction == 1) {
    const std::string ws = ctx.temp("weight_sum");
    emit_reduce(ctx, "ReduceSum", w, {}, false, ws);
    ctx.emit("Div", {s, ws}, {out_name});
  }
  return out_name;
}

// nll_loss(self, target, weight?, reduction, ignore_index); nll_loss_forward adds total_weight (the sum
// of the weights of the counted targets; 0 for reduction none, as torch's CPU kernel).
void nll_loss(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const int64_t rank = ctx.rank("self"), reduction = ctx.int_arg("reduction", 1);
  auto [loss, w] = nll_terms(ctx, ctx.value("self", t), rank, t);
  weighted_reduce(ctx, loss, w, reduction, ctx.output(0));
  if (ctx.output_count() < 2) return;
  if (reduction == 0) {
    ctx.emit("Identity", {ctx.constant(0, t)}, {ctx.output(1)});
  } else {
    emit_reduce(ctx, "ReduceSum", w, {}, false, ctx.output(1));
  }
}

// cross_entropy_loss(self, target, weight?, reduction, ignore_index, label_smoothing): log_softmax over the
// class axis, then NLL of class indices (blended with the uniform smoothing term) or the cross entropy of
// class probabilities (floating targets).
void cross_entropy_loss(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const int64_t rank = ctx.rank("self"), reduction = ctx.int_arg("reduction", 1);
  const int64_t axis = rank == 1 ? 0 : 1;
  auto* ls = ctx.emit("LogSoftmax", {ctx.value("self", t)}, {ctx.temp("log_probs")});
  set_attr(ls, "axis", axis);
  const std::string logp = ls->output(0);
  const double eps = ctx.float_arg("label_smoothing", 0.0);
  const std::string n_classes = ctx.cast_if_needed(
      ctx.emit1("Gather", {shape_of(ctx, logp), ctx.graph.constant_i64({axis}, true)}), DType::kInt64, t);
  const std::string w_c = ctx.has("weight") ? per_channel(ctx, ctx.value("weight", t), rank == 1 ? 2 : rank) : "";
  auto class_weighted = [&](const std::string& v) { return w_c.empty() ? v : ctx.emit1("Mul", {v, w_c}); };
  if (dtype_is_floating(ctx.input_meta("target").dtype)) {
    std::string target = ctx.value("target", t);
    if (eps > 0)
      target = ctx.emit1("Add", {ctx.emit1("Mul", {target, ctx.constant(1.0 - eps, t)}),
                                 ctx.emit1("Div", {ctx.constant(eps, t), n_classes})});
    const std::string per = ctx.temp("per_element");
    emit_reduce(ctx, "ReduceSum", ctx.emit1("Neg", {class_weighted(ctx.emit1("Mul", {logp, target}))}), {axis}, false,
                per);
    if (reduction == 1 && rank > 1) {  // mean over the batch elements: numel / C
      const std::string s = ctx.temp("loss_sum");
      emit_reduce(ctx, "ReduceSum", per, {}, false, s);
      const std::string count = ctx.cast_if_needed(ctx.emit1("Size", {per}), DType::kInt64, t);
      ctx.emit("Div", {s, count}, {ctx.output()});
    } else {
      reduce_loss(ctx, per, reduction == 1 ? 2 : reduction, ctx.output());
    }
    return;
  }
  auto [nll, w] = nll_terms(ctx, logp, rank, t);
  if (eps <= 0) {
    weighted_reduce(ctx, nll, w, reduction, ctx.output());
    return;
  }
  // Smoothing term: -sum_c w_c logp_c per element, zero where the target is ignored.
  const std::string smooth_all = ctx.temp("smooth");
  emit_reduce(ctx, "ReduceSum", ctx.emit1("Neg", {class_weighted(logp)}), {axis}, false, smooth_all);
  const std::string kept =
      ctx.emit1("Not", {ctx.emit1("Equal", {ctx.value("target", DType::kInt64),
                                            ctx.has("ignore_index") ? ctx.value("ignore_index", DType::kInt64)
                                                                    : ctx.graph.constant_i64({-100}, true)})});
  const std::string smooth = ctx.emit1("Where", {kept, smooth_all, ctx.constant(0, t)});
  const std::string a = ctx.constant(1.0 - eps, t);
  const std::string b = ctx.emit1("Div", {ctx.constant(eps, t), n_classes});
  if (reduction == 0) {
    ctx.emit("Add", {ctx.emit1("Mul", {nll, a}), ctx.emit1("Mul", {smooth, b})}, {ctx.output()});
    return;
  }
  const std::string nll_r = weighted_reduce(ctx, nll, w, reduction, ctx.temp("nll"));
  // torch divides the smoothing sum by the summed target weights too (the count without weights).
  const std::string smooth_r = weighted_reduce(ctx, smooth, w, reduction, ctx.temp("smooth_reduced"));
  ctx.emit("Add", {ctx.emit1("Mul", {nll_r, a}), ctx.emit1("Mul", {smooth_r, b})}, {ctx.output()});
}

}  // namespace

PARITY_TRANSLATION("aten::linalg_vector_norm.default", linalg_vector_norm, 18);
PARITY_TRANSLATION("aten::instance_norm.default", instance_norm, 18);
PARITY_TRANSLATION("aten::native_batch_norm.default", native_batch_norm, 18);
PARITY_TRANSLATION("aten::upsample_nearest1d.default", upsample_nearest, 18);
PARITY_TRANSLATION("aten::upsample_nearest1d.vec", upsample_nearest, 18);
PARITY_TRANSLATION("aten::upsample_nearest3d.default", upsample_nearest, 18);
PARITY_TRANSLATION("aten::upsample_nearest3d.vec", upsample_nearest, 18);
PARITY_TRANSLATION("aten::upsample_linear1d.default", upsample_linear, 18);
PARITY_TRANSLATION("aten::upsample_linear1d.vec", upsample_linear, 18);
PARITY_TRANSLATION("aten::upsample_trilinear3d.default", upsample_linear, 18);
PARITY_TRANSLATION("aten::upsample_trilinear3d.vec", upsample_linear, 18);
PARITY_TRANSLATION("aten::upsample_bicubic2d.default", upsample_cubic, 18);
PARITY_TRANSLATION("aten::upsample_bicubic2d.vec", upsample_cubic, 18);
PARITY_TRANSLATION("aten::glu.default", glu, 18);
PARITY_TRANSLATION("aten::max_pool1d_with_indices.default", max_pool1d_with_indices, 18);
PARITY_TRANSLATION("aten::_scaled_dot_product_flash_attention_for_cpu.default", sdpa_flash_cpu, 18);
PARITY_TRANSLATION("aten::bilinear.default", bilinear, 18);
PARITY_TRANSLATION("aten::embedding_renorm.default", embedding_renorm, 18);
PARITY_TRANSLATION("aten::mse_loss.default", mse_loss, 18);
PARITY_TRANSLATION("aten::nll_loss.default", nll_loss, 18);
PARITY_TRANSLATION("aten::nll_loss_forward.default", nll_loss, 18);
PARITY_TRANSLATION("aten::cross_entropy_loss.default", cross_entropy_loss, 18);

// _embedding_bag's translation reads the same argument names (padding_idx None = -1).
PARITY_ALIAS("aten::embedding_bag.default", "aten::_embedding_bag.default");
PARITY_ALIAS("aten::embedding_bag.padding_idx", "aten::_embedding_bag.default");
PARITY_ALIAS("aten::_embedding_bag_forward_only.default", "aten::_embedding_bag.default");

}  // namespace parity::exporter
