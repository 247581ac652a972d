// Convolution, pooling, normalisation, resampling and attention ATen ops -> ONNX.
#include <algorithm>
#include <cmath>
#include <limits>

#include "../src/translate.h"
#include "unbatched_conv.h"
#include "attention_mask.h"

namespace parity::exporter {

// query @ key^T * scale (the `scale` argument, else 1/sqrt(head dim)): the scores of an unfused attention.
std::string attention_scores(TranslateContext& ctx, DType t, const std::string& key) {
  const std::string q = ctx.tensor("query"), k = key.empty() ? ctx.tensor("key") : key;
  const std::string kt = transpose_last_two(ctx, k, ctx.rank("key"), "key_t");
  std::string scale;
  if (ctx.has("scale")) {
    scale = ctx.value("scale", t);
  } else {
    const std::string e = ctx.cast_if_needed(element(ctx, shape_of(ctx, q), ctx.rank("query") - 1), DType::kInt64, t);
    scale = ctx.emit1("Reciprocal", {ctx.emit1("Sqrt", {e})}, "scale");
  }
  return ctx.emit1("Mul", {ctx.emit1("MatMul", {q, kt}), scale}, "scores");
}

std::string repeat_kv_heads(TranslateContext& ctx, const std::string& kv) {
  const auto part = [&](const std::string& shape, int64_t a, int64_t b) {
    return ctx.emit1("Slice", {shape, ctx.graph.constant_i64({a}), ctx.graph.constant_i64({b})});
  };
  const std::string s = shape_of(ctx, kv), q = shape_of(ctx, ctx.tensor("query"));
  const std::string lead = part(s, 0, -3), heads = part(s, -3, -2), tail = part(s, -2, INT64_MAX);
  const std::string q_heads = part(q, -3, -2), groups = ctx.emit1("Div", {q_heads, heads}, "groups");
  const auto concat = [&](const std::vector<std::string>& parts) {
    const std::string out = ctx.temp("shape");
    set_attr(ctx.emit("Concat", parts, {out}), "axis", int64_t{0});
    return out;
  };
  // [..., Hkv, 1, S, E] expanded to [..., Hkv, g, S, E], then merged to [..., Hkv * g, S, E].
  const std::string wide = ctx.emit1(
      "Expand", {ctx.emit1("Unsqueeze", {kv, ctx.graph.constant_i64({-3})}), concat({lead, heads, groups, tail})});
  return ctx.emit1("Reshape", {wide, concat({lead, q_heads, tail})}, "repeated_heads");
}

namespace {

// An int list argument repeated to `n` spatial dims (torch accepts one value for all).
std::vector<int64_t> per_dim(TranslateContext& ctx, const std::string& name, size_t n, int64_t fallback) {
  std::vector<int64_t> v = ctx.ints_arg(name);
  if (v.empty()) v = {fallback};
  if (v.size() == 1) v.assign(n, v[0]);
  if (v.size() != n)
    ctx.fail("argument '" + name + "' has " + std::to_string(v.size()) + " values for " + std::to_string(n) +
             " spatial dims");
  return v;
}

std::vector<int64_t> twice(const std::vector<int64_t>& v) {
  std::vector<int64_t> out(v);
  out.insert(out.end(), v.begin(), v.end());
  return out;
}

// A per-channel vector shaped [C, 1, ..., 1] to broadcast over NC... tensors.
std::string channel_vector(TranslateContext& ctx, const std::string& v, int64_t rank) {
  std::vector<int64_t> shape = {-1};
  for (int64_t i = 2; i < rank; ++i) shape.push_back(1);
  return ctx.emit1("Reshape", {v, ctx.graph.constant_i64(shape)}, "per_channel");
}

// convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups) and convNd.
void convolution(TranslateContext& ctx) {
  const size_t n = static_cast<size_t>(ctx.rank("weight") - 2);
  const bool transposed = ctx.bool_arg("transposed", false);
  const UnbatchedConv unbatched(ctx);
  std::vector<std::string> inputs = {unbatched.input(), ctx.tensor("weight")};
  if (ctx.has("bias")) inputs.push_back(ctx.tensor("bias"));
  auto* node = ctx.emit(transposed ? "ConvTranspose" : "Conv", inputs, {unbatched.result()});
  set_attr(node, "strides", per_dim(ctx, "stride", n, 1));
  set_attr(node, "dilations", per_dim(ctx, "dilation", n, 1));
  set_attr(node, "group", ctx.int_arg("groups", 1));
  const pt2::Argument* padding = ctx.arg("padding");
  if (padding && padding->is(pt2::ArgKind::as_string)) {
    // "same": total padding dilation*(k-1), the odd pixel at the end (explicit pads: ORT rejects
    // auto_pad SAME with dilations).
    const bool same = padding->as_string() == "same";
    const auto dilation = per_dim(ctx, "dilation", n, 1);
    const auto& w = ctx.input_meta("weight").sizes;
    std::vector<int64_t> pads(2 * n, 0);
    for (size_t i = 0; same && i < n; ++i) {
      if (!w[i + 2].value) ctx.fail("padding='same' needs a static kernel size");
      const int64_t total = dilation[i] * (*w[i + 2].value - 1);
      pads[i] = total / 2;
      pads[i + n] = total - total / 2;
    }
    set_attr(node, "pads", pads);
  } else {
    set_attr(node, "pads", twice(per_dim(ctx, "padding", n, 0)));
  }
  if (transposed) {
    const auto op = per_dim(ctx, "output_padding", n, 0);
    if (std::any_of(op.begin(), op.end(), [](int64_t v) { return v != 0; })) set_attr(node, "output_padding", op);
  }
  unbatched.finish();
}

// avg_poolNd(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
void avg_pool(TranslateContext& ctx) {
  const size_t n = static_cast<size_t>(ctx.rank("self") - 2);
  if (ctx.has("divisor_override")) ctx.fail("avg_pool with divisor_override is not supported");
  const auto kernel = per_dim(ctx, "kernel_size", n, 1);
  std::vector<int64_t> stride = ctx.ints_arg("stride");
  if (stride.empty()) stride = kernel;
  if (stride.size() == 1) stride.assign(n, stride[0]);
  auto* node = ctx.emit("AveragePool", {ctx.tensor("self")}, {ctx.output()});
  set_attr(node, "kernel_shape", kernel);
  set_attr(node, "strides", stride);
  set_attr(node, "pads", twice(per_dim(ctx, "padding", n, 0)));
  set_attr(node, "ceil_mode", int64_t{ctx.bool_arg("ceil_mode", false) ? 1 : 0});
  set_attr(node, "count_include_pad", int64_t{ctx.bool_arg("count_include_pad", true) ? 1 : 0});
}

onnx::NodeProto* max_pool_node(TranslateContext& ctx, const std::vector<std::string>& outputs) {
  const size_t n = static_cast<size_t>(ctx.rank("self") - 2);
  const auto kernel = per_dim(ctx, "kernel_size", n, 1);
  std::vector<int64_t> stride = ctx.ints_arg("stride");
  if (stride.empty()) stride = kernel;
  if (stride.size() == 1) stride.assign(n, stride[0]);
  auto* node = ctx.emit("MaxPool", {ctx.tensor("self")}, outputs);
  set_attr(node, "kernel_shape", kernel);
  set_attr(node, "strides", stride);
  set_attr(node, "pads", twice(per_dim(ctx, "padding", n, 0)));
  set_attr(node, "dilations", per_dim(ctx, "dilation", n, 1));
  set_attr(node, "ceil_mode", int64_t{ctx.bool_arg("ceil_mode", false) ? 1 : 0});
  return node;
}

void max_pool(TranslateContext& ctx) { max_pool_node(ctx, {ctx.output()}); }

// ONNX indices count over the whole NC... tensor, torch's within one (n, c) plane: modulo the plane size.
void max_pool_with_indices(TranslateContext& ctx) {
  const std::string raw = ctx.temp("flat_indices");
  max_pool_node(ctx, {ctx.output(0), raw});
  const std::string spatial = ctx.emit1("Slice", {shape_of(ctx, ctx.tensor("self")), ctx.graph.constant_i64({2}),
                                                  ctx.graph.constant_i64({std::numeric_limits<int64_t>::max()})});
  const std::string plane = ctx.temp("plane");
  emit_reduce(ctx, "ReduceProd", spatial, {}, false, plane);
  set_attr(ctx.emit("Mod", {raw, plane}, {ctx.output(1)}), "fmod", int64_t{0});
}

// Weight/bias, or ones/zeros shaped like `like` when None.
std::string affine_or(TranslateContext& ctx, const std::string& name, double fallback, const std::string& like_shape,
                      DType t) {
  if (ctx.has(name)) return ctx.value(name, t);
  return ctx.emit1("Expand", {ctx.constant(fallback, t), like_shape}, name);
}

// Batch statistics over every axis except 1: (y, mean[C], invstd[C], biased var [C], count).
struct BatchStats {
  std::string y, mean, invstd, var;
};
BatchStats batch_norm_train(TranslateContext& ctx, const std::string& x, double eps, DType t) {
  const int64_t rank = ctx.rank("input");
  std::vector<int64_t> axes = {0};
  for (int64_t i = 2; i < rank; ++i) axes.push_back(i);
  const std::string mean = ctx.temp("batch_mean");
  emit_reduce(ctx, "ReduceMean", x, axes, true, mean);
  const std::string d = ctx.emit1("Sub", {x, mean}, "centered");
  const std::string var = ctx.temp("batch_var");
  emit_reduce(ctx, "ReduceMean", ctx.emit1("Mul", {d, d}), axes, true, var);
  const std::string invstd =
      ctx.emit1("Reciprocal", {ctx.emit1("Sqrt", {ctx.emit1("Add", {var, ctx.constant(eps, t)})})}, "invstd");
  const std::string channels = element(ctx, shape_of(ctx, x), 1);
  const std::string c_shape = unsqueeze0(ctx, channels);
  std::string y = ctx.emit1("Mul", {d, invstd});
  y = ctx.emit1("Mul", {y, channel_vector(ctx, affine_or(ctx, "weight", 1, c_shape, t), rank)});
  y = ctx.emit1("Add", {y, channel_vector(ctx, affine_or(ctx, "bias", 0, c_shape, t), rank)});
  const std::string flat = ctx.graph.constant_i64({-1});
  return {y, ctx.emit1("Reshape", {mean, flat}), ctx.emit1("Reshape", {invstd, flat}),
          ctx.emit1("Reshape", {var, flat})};
}

// Training updates the running statistics: running = (1 - momentum) * running + momentum * batch, the
// variance unbiased. Returns the new (mean, var).
std::pair<std::string, std::string> updated_running_stats(TranslateContext& ctx, const BatchStats& s, DType t) {
  const double m = ctx.float_arg("momentum", 0.1);
  const std::string n = ctx.emit1("Div", {ctx.emit1("Size", {ctx.tensor("input")}), ctx.emit1("Size", {s.mean})});
  const std::string nf = ctx.cast_if_needed(n, DType::kInt64, t);
  const std::string unbiased =
      ctx.emit1("Div", {ctx.emit1("Mul", {s.var, nf}), ctx.emit1("Sub", {nf, ctx.constant(1, t)})});
  auto blend = [&](const std::string& running, const std::string& batch) {
    return ctx.emit1("Add",
                     {ctx.emit1("Mul", {ctx.tensor(running), ctx.constant(1 - m, t)}),
                      ctx.emit1("Mul", {batch, ctx.constant(m, t)})},
                     running + "_updated");
  };
  return {blend("running_mean", s.mean), blend("running_var", unbiased)};
}

std::string batch_norm_eval(TranslateContext& ctx, double eps, DType t) {
  const std::string c_shape = shape_of(ctx, ctx.tensor("running_mean"));
  auto* node = ctx.emit("BatchNormalization",
                        {ctx.tensor("input"), affine_or(ctx, "weight", 1, c_shape, t),
                         affine_or(ctx, "bias", 0, c_shape, t), ctx.tensor("running_mean"), ctx.tensor("running_var")},
                        {ctx.temp("bn")});
  set_attr(node, "epsilon", static_cast<float>(eps));
  return node->output(0);
}

void empty_outputs(TranslateContext& ctx, size_t from, DType t) {
  for (size_t i = from; i < ctx.output_count(); ++i)
    ctx.emit("Expand", {ctx.constant(0, t), ctx.graph.constant_i64({0})}, {ctx.output(i)});
}

// _native_batch_norm_legit_no_training(input, weight, bias, running_mean, running_var, momentum, eps)
void batch_norm_no_training(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  ctx.alias_output(0, batch_norm_eval(ctx, ctx.float_arg("eps", 1e-5), t));
  empty_outputs(ctx, 1, t);
}

// _native_batch_norm_legit(input, weight, bias, running_mean, running_var, training, momentum, eps),
// .no_stats and _functional: training uses batch statistics; _functional also returns the updated running stats.
void batch_norm_legit(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const double eps = ctx.float_arg("eps", 1e-5);
  const bool has_running = ctx.has("running_mean");
  if (!ctx.bool_arg("training", false) && has_running) {
    ctx.alias_output(0, batch_norm_eval(ctx, eps, t));
    empty_outputs(ctx, 1, t);
    return;
  }
  const BatchStats s = batch_norm_train(ctx, ctx.tensor("input"), eps, t);
  ctx.alias_output(0, s.y);
  ctx.alias_output(1, s.mean);
  ctx.alias_output(2, s.invstd);
  if (!has_running) return;
  const auto [mean, var] = updated_running_stats(ctx, s, t);
  if (ctx.output_count() == 5) {  // _functional returns the new running stats
    ctx.alias_output(3, mean);
    ctx.alias_output(4, var);
  } else {  // the in-place form writes them into its arguments
    ctx.rebind("running_mean", mean);
    ctx.rebind("running_var", var);
  }
}

// batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled)
void batch_norm(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const double eps = ctx.float_arg("eps", 1e-5);
  if (!ctx.bool_arg("training", false) && ctx.has("running_mean"))
    return ctx.alias_output(0, batch_norm_eval(ctx, eps, t));
  const BatchStats s = batch_norm_train(ctx, ctx.tensor("input"), eps, t);
  ctx.alias_output(0, s.y);
  if (ctx.has("running_mean")) {  // batch_norm writes the running statistics in place
    const auto [mean, var] = updated_running_stats(ctx, s, t);
    ctx.rebind("running_mean", mean);
    ctx.rebind("running_var", var);
  }
}

// native_layer_norm(input, normalized_shape, weight, bias, eps) -> (y, mean, rstd); layer_norm -> y.
void layer_norm(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  // The axis count is the list's length even when its sizes are symbolic (unbacked sizes of a masked
  // select, non-strict); the sizes themselves are only needed for a default weight, at run time.
  const auto normalized = static_cast<int64_t>(ctx.required("normalized_shape").list_length());
  std::vector<std::string> inputs = {ctx.tensor("input"),
                                     affine_or(ctx, "weight", 1, ctx.int_list_value("normalized_shape"), t)};
  if (ctx.has("bias")) inputs.push_back(ctx.value("bias", t));
  // Mean and InvStdDev of a float16 / bfloat16 X are float32 (stash_type 1); torch's are in X's dtype, so
  // they are cast to it (the export's dead-node pass drops the casts of unused ones).
  const bool half = t == DType::kFloat16 || t == DType::kBFloat16;
  std::vector<std::string> outputs = {ctx.output(0)};
  for (size_t i = 1; i < ctx.output_count(); ++i) outputs.push_back(half ? ctx.temp("layer_norm_stat") : ctx.output(i));
  auto* node = ctx.emit("LayerNormalization", inputs, outputs);
  set_attr(node, "axis", -normalized);
  set_attr(node, "epsilon", static_cast<float>(ctx.float_arg("eps", 1e-5)));
  for (size_t i = 1; half && i < outputs.size(); ++i)
    ctx.alias_output(i, ctx.cast_if_needed(outputs[i], DType::kFloat32, t));
}

// native_group_norm(input, weight, bias, N, C, HxW, group, eps) -> (y, mean[N,G], rstd[N,G]); group_norm -> y.
// Composed (opset 18's GroupNormalization has per-group scale, fixed only in opset 21).
void group_norm(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const std::string x = ctx.tensor("input");
  const int64_t groups = ctx.arg("group") ? ctx.int_arg("group", 1) : ctx.int_arg("num_groups", 1);
  const double eps = ctx.float_arg("eps", 1e-5);
  const std::string grouped = ctx.emit1("Reshape", {x, ctx.graph.constant_i64({0, groups, -1})}, "grouped");
  const std::string mean = ctx.temp("group_mean");
  emit_reduce(ctx, "ReduceMean", grouped, {2}, true, mean);
  const std::string d = ctx.emit1("Sub", {grouped, mean});
  const std::string var = ctx.temp("group_var");
  emit_reduce(ctx, "ReduceMean", ctx.emit1("Mul", {d, d}), {2}, true, var);
  const std::string rstd =
      ctx.emit1("Reciprocal", {ctx.emit1("Sqrt", {ctx.emit1("Add", {var, ctx.constant(eps, t)})})}, "rstd");
  std::string y = ctx.emit1("Reshape", {ctx.emit1("Mul", {d, rstd}), shape_of(ctx, x)}, "normalized");
  const int64_t rank = ctx.rank("input");
  if (ctx.has("weight")) y = ctx.emit1("Mul", {y, channel_vector(ctx, ctx.tensor("weight"), rank)});
  if (ctx.has("bias")) y = ctx.emit1("Add", {y, channel_vector(ctx, ctx.tensor("bias"), rank)});
  ctx.alias_output(0, y);
  if (ctx.output_count() == 3) {
    const std::string ng = ctx.graph.constant_i64({0, groups});
    ctx.emit("Reshape", {mean, ng}, {ctx.output(1)});
    ctx.emit("Reshape", {rstd, ng}, {ctx.output(2)});
  }
}

// upsample_*.vec(input, output_size?, [align_corners,] scale_factors?) -> Resize.
void resize(TranslateContext& ctx, const std::string& mode, const std::string& coordinates) {
  const std::string x = ctx.tensor("input");
  std::vector<std::string> inputs = {x, ""};
  if (ctx.has("output_size")) {
    const std::string nc =
        ctx.emit1("Slice", {shape_of(ctx, x), ctx.graph.constant_i64({0}), ctx.graph.constant_i64({2})}, "nc");
    auto* sizes = ctx.emit("Concat", {nc, ctx.int_list_value("output_size")}, {ctx.temp("sizes")});
    set_attr(sizes, "axis", int64_t{0});
    inputs.push_back("");
    inputs.push_back(sizes->output(0));
  } else {
    const pt2::Argument& sf = ctx.required("scale_factors");
    std::vector<double> factors = sf.as_floats();
    Tensor scales(DType::kFloat32, {static_cast<int64_t>(factors.size() + 2)});
    scales.data<float>()[0] = scales.data<float>()[1] = 1.0f;
    for (size_t i = 0; i < factors.size(); ++i) scales.data<float>()[i + 2] = static_cast<float>(factors[i]);
    const std::string name = ctx.graph.unique_name(ctx.node.name + "_scales");
    ctx.graph.add_initializer(name, scales);
    inputs.push_back(name);
  }
  auto* node = ctx.emit("Resize", inputs, {ctx.output()});
  set_attr(node, "mode", mode);
  set_attr(node, "coordinate_transformation_mode", coordinates);
  if (mode == "nearest") set_attr(node, "nearest_mode", std::string("floor"));
}
void upsample_nearest(TranslateContext& ctx) { resize(ctx, "nearest", "asymmetric"); }
void upsample_linear(TranslateContext& ctx) {
  resize(ctx, "linear", ctx.bool_arg("align_corners", false) ? "align_corners" : "pytorch_half_pixel");
}

// grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners) -> GridSample (opset 16 names).
void grid_sampler(TranslateContext& ctx) {
  static const char* modes[] = {"bilinear", "nearest", "bicubic"};
  static const char* paddings[] = {"zeros", "border", "reflection"};
  const int64_t mode = ctx.int_arg("interpolation_mode", 0), padding = ctx.int_arg("padding_mode", 0);
  if (mode < 0 || mode > 2 || padding < 0 || padding > 2) ctx.fail("unknown grid_sampler mode");
  auto* node = ctx.emit("GridSample", {ctx.tensor("input"), ctx.tensor("grid")}, {ctx.output()});
  std::string m = modes[mode];
  if (ctx.opset >= 20) m = mode == 0 ? "linear" : mode == 2 ? "cubic" : "nearest";
  set_attr(node, "mode", m);
  set_attr(node, "padding_mode", std::string(paddings[padding]));
  set_attr(node, "align_corners", int64_t{ctx.bool_arg("align_corners", false) ? 1 : 0});
}

// col2im(self, output_size, kernel_size, dilation, padding, stride) -> Col2Im (opset 18).
void col2im(TranslateContext& ctx) {
  auto* node =
      ctx.emit("Col2Im", {ctx.tensor("self"), ctx.int_list_value("output_size"), ctx.int_list_value("kernel_size")},
               {ctx.output()});
  set_attr(node, "dilations", per_dim(ctx, "dilation", 2, 1));
  set_attr(node, "pads", twice(per_dim(ctx, "padding", 2, 0)));
  set_attr(node, "strides", per_dim(ctx, "stride", 2, 1));
}

// p-norm of `d` over its last axis.
std::string p_norm_last(TranslateContext& ctx, const std::string& d, double p, DType t) {
  const std::string out = ctx.temp("norm");
  const std::string a = ctx.emit1("Abs", {d});
  if (p == 0) {
    emit_reduce(ctx, "ReduceSum",
                ctx.cast_if_needed(ctx.emit1("Not", {ctx.emit1("Equal", {d, ctx.constant(0, t)})}), DType::kBool, t),
                {-1}, false, out);
  } else if (std::isinf(p)) {
    emit_reduce(ctx, "ReduceMax", a, {-1}, false, out);
  } else if (p == 1) {
    emit_reduce(ctx, "ReduceSum", a, {-1}, false, out);
  } else if (p == 2) {
    const std::string s = ctx.temp("sum_squares");
    emit_reduce(ctx, "ReduceSum", ctx.emit1("Mul", {d, d}), {-1}, false, s);
    return ctx.emit1("Sqrt", {s});
  } else {
    const std::string s = ctx.temp("sum_powers");
    emit_reduce(ctx, "ReduceSum", ctx.emit1("Pow", {a, ctx.constant(p, t)}), {-1}, false, s);
    return ctx.emit1("Pow", {s, ctx.constant(1.0 / p, t)});
  }
  return out;
}

// _cdist_forward(x1, x2, p, compute_mode): all pairwise differences through broadcasting.
void cdist(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const std::string a = ctx.emit1("Unsqueeze", {ctx.tensor("x1"), ctx.graph.constant_i64({-2})});
  const std::string b = ctx.emit1("Unsqueeze", {ctx.tensor("x2"), ctx.graph.constant_i64({-3})});
  ctx.alias_output(0, p_norm_last(ctx, ctx.emit1("Sub", {a, b}), ctx.float_arg("p", 2.0), t));
}

// _pdist_forward(self, p): distances of the row pairs i < j, in row-major order (static row count).
void pdist(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const auto& rows = ctx.input_meta("self").sizes[0];
  if (!rows.value) ctx.fail("pdist over a symbolic row count is not supported");
  std::vector<int64_t> first, second;
  for (int64_t i = 0; i < *rows.value; ++i)
    for (int64_t j = i + 1; j < *rows.value; ++j) first.push_back(i), second.push_back(j);
  auto take = [&](const std::vector<int64_t>& idx) {
    auto* g = ctx.emit("Gather", {ctx.tensor("self"), ctx.graph.constant_i64(idx)}, {ctx.temp("rows")});
    set_attr(g, "axis", int64_t{0});
    return g->output(0);
  };
  ctx.alias_output(0, p_norm_last(ctx, ctx.emit1("Sub", {take(first), take(second)}), ctx.float_arg("p", 2.0), t));
}

// rms_norm(input, normalized_shape, weight?, eps?): torch's default eps is the machine epsilon of the
// compute type (float32 for 16-bit inputs, as torch's CPU kernel).
double rms_norm_eps(TranslateContext& ctx, DType compute) {
  return ctx.float_arg("eps", compute == DType::kFloat64 ? std::numeric_limits<double>::epsilon()
                                                         : std::numeric_limits<float>::epsilon());
}

// rms_norm from opset 23: RMSNormalization.
void rms_norm_op(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const auto normalized = static_cast<int64_t>(ctx.required("normalized_shape").list_length());
  const std::string scale = affine_or(ctx, "weight", 1, ctx.int_list_value("normalized_shape"), t);
  auto* node = ctx.emit("RMSNormalization", {ctx.tensor("input"), scale}, {ctx.output()});
  set_attr(node, "axis", -normalized);
  set_attr(node, "epsilon", static_cast<float>(rms_norm_eps(ctx, t == DType::kFloat64 ? t : DType::kFloat32)));
}

// rms_norm below opset 23: x * rsqrt(mean(x^2) + eps) * weight, in float32 for 16-bit inputs.
void rms_norm_formula(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const DType compute = t == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
  const double eps = rms_norm_eps(ctx, compute);
  const int64_t axis = -static_cast<int64_t>(ctx.required("normalized_shape").list_length());
  std::vector<int64_t> axes;
  for (int64_t a = axis; a < 0; ++a) axes.push_back(a);
  const std::string x = ctx.cast_if_needed(ctx.tensor("input"), t, compute);
  const std::string mean_square = ctx.temp("mean_square");
  emit_reduce(ctx, "ReduceMean", ctx.emit1("Mul", {x, x}), axes, true, mean_square);
  const std::string rms = ctx.emit1("Sqrt", {ctx.emit1("Add", {mean_square, ctx.constant(eps, compute)})}, "rms");
  std::string y = ctx.cast_if_needed(ctx.emit1("Div", {x, rms}), compute, t);
  if (ctx.has("weight")) y = ctx.emit1("Mul", {y, ctx.value("weight", t)});
  ctx.alias_output(0, y);
}

// Opset 23's Attention for 4-D [batch, heads, seq, head_dim] inputs: causal masking, boolean or additive
// masks, scale and grouped-query heads map onto its attributes one to one.
void sdpa_as_attention(TranslateContext& ctx, DType t) {
  std::vector<std::string> inputs = {ctx.tensor("query"), ctx.tensor("key"), ctx.tensor("value")};
  if (ctx.has("attn_mask"))
    inputs.push_back(ctx.input_meta("attn_mask").dtype == DType::kBool ? ctx.tensor("attn_mask")
                                                                       : ctx.value("attn_mask", t));
  auto* node = ctx.emit("Attention", inputs, {ctx.output()});
  if (ctx.bool_arg("is_causal", false)) set_attr(node, "is_causal", int64_t{1});
  if (ctx.has("scale")) set_attr(node, "scale", static_cast<float>(ctx.float_arg("scale", 1.0)));
}

// scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
void sdpa(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  if (ctx.float_arg("dropout_p", 0.0) != 0.0)
    ctx.fail("scaled_dot_product_attention with dropout_p > 0 is not supported");
  if (ctx.opset >= 23 && ctx.rank("query") == 4 && ctx.rank("key") == 4 && ctx.rank("value") == 4)
    return sdpa_as_attention(ctx, t);
  // Grouped-query heads below opset 23: key and value repeated to the query's heads, as torch does.
  const bool gqa = ctx.bool_arg("enable_gqa", false);
  const std::string v = gqa ? repeat_kv_heads(ctx, ctx.tensor("value")) : ctx.tensor("value");
  std::string scores = attention_scores(ctx, t, gqa ? repeat_kv_heads(ctx, ctx.tensor("key")) : "");
  const std::string minus_inf = ctx.constant(-std::numeric_limits<double>::infinity(), t);
  if (ctx.bool_arg("is_causal", false)) {
    const std::string sq = shape_of(ctx, scores);
    const std::string ls = ctx.emit1(
        "Slice", {sq, ctx.graph.constant_i64({-2}), ctx.graph.constant_i64({std::numeric_limits<int64_t>::max()})});
    const std::string ones = ctx.emit1("Expand", {ctx.constant(1, t), ls});
    auto* tri = ctx.emit("Trilu", {ones}, {ctx.temp("causal")});
    set_attr(tri, "upper", int64_t{0});
    const std::string masked = ctx.emit1("Equal", {tri->output(0), ctx.constant(0, t)});
    scores = ctx.emit1("Where", {masked, minus_inf, scores});
  }
  if (ctx.has("attn_mask")) {
    if (ctx.input_meta("attn_mask").dtype == DType::kBool)
      scores = ctx.emit1("Where", {ctx.tensor("attn_mask"), scores, minus_inf});
    else
      scores = ctx.emit1("Add", {scores, ctx.value("attn_mask", t)});
  }
  auto* sm = ctx.emit("Softmax", {scores}, {ctx.temp("weights")});
  set_attr(sm, "axis", int64_t{-1});
  std::string weights = sm->output(0);
  if (ctx.has("attn_mask")) weights = zero_fully_masked_rows(ctx, scores, weights, t);
  ctx.emit("MatMul", {weights, v}, {ctx.output()});
}

}  // namespace

PARITY_TRANSLATION("aten::convolution.default", convolution, 18);
PARITY_TRANSLATION("aten::conv1d.default", convolution, 18);
PARITY_TRANSLATION("aten::conv2d.default", convolution, 18);
PARITY_TRANSLATION("aten::conv3d.default", convolution, 18);
PARITY_TRANSLATION("aten::conv1d.padding", convolution, 18);
PARITY_TRANSLATION("aten::conv2d.padding", convolution, 18);
PARITY_TRANSLATION("aten::conv3d.padding", convolution, 18);
PARITY_TRANSLATION("aten::avg_pool1d.default", avg_pool, 18);
PARITY_TRANSLATION("aten::avg_pool2d.default", avg_pool, 18);
PARITY_TRANSLATION("aten::avg_pool3d.default", avg_pool, 18);
PARITY_TRANSLATION("aten::max_pool1d.default", max_pool, 18);
PARITY_TRANSLATION("aten::max_pool2d.default", max_pool, 18);
PARITY_TRANSLATION("aten::max_pool3d.default", max_pool, 18);
PARITY_TRANSLATION("aten::max_pool2d_with_indices.default", max_pool_with_indices, 18);
PARITY_TRANSLATION("aten::max_pool3d_with_indices.default", max_pool_with_indices, 18);
PARITY_TRANSLATION("aten::_native_batch_norm_legit_no_training.default", batch_norm_no_training, 18);
PARITY_TRANSLATION("aten::_native_batch_norm_legit.default", batch_norm_legit, 18);
PARITY_TRANSLATION("aten::_native_batch_norm_legit.no_stats", batch_norm_legit, 18);
PARITY_TRANSLATION("aten::_native_batch_norm_legit_functional.default", batch_norm_legit, 18);
PARITY_TRANSLATION("aten::batch_norm.default", batch_norm, 18);
PARITY_TRANSLATION("aten::native_layer_norm.default", layer_norm, 18);
PARITY_TRANSLATION("aten::layer_norm.default", layer_norm, 18);
PARITY_TRANSLATION("aten::native_group_norm.default", group_norm, 18);
PARITY_TRANSLATION("aten::group_norm.default", group_norm, 18);
PARITY_TRANSLATION("aten::upsample_nearest2d.vec", upsample_nearest, 18);
PARITY_TRANSLATION("aten::upsample_bilinear2d.vec", upsample_linear, 18);
PARITY_TRANSLATION("aten::grid_sampler_2d.default", grid_sampler, 18);
PARITY_TRANSLATION("aten::col2im.default", col2im, 18);
PARITY_TRANSLATION("aten::_cdist_forward.default", cdist, 18);
PARITY_TRANSLATION("aten::_pdist_forward.default", pdist, 18);
PARITY_TRANSLATION("aten::scaled_dot_product_attention.default", sdpa, 18);
PARITY_TRANSLATION("aten::rms_norm.default", rms_norm_formula, 18);
PARITY_TRANSLATION("aten::rms_norm.default", rms_norm_op, 23);

}  // namespace parity::exporter
