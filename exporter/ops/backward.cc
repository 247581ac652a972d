// Backward ATen ops (training graphs) -> ONNX, composed from forward ops: transposed convolutions,
// scatter-adds and the closed-form normalisation gradients.
#include <algorithm>
#include <limits>

#include "../src/translate.h"

namespace parity::exporter {
namespace {

std::vector<int64_t> static_sizes(TranslateContext& ctx, const std::string& tensor) {
  std::vector<int64_t> out;
  for (const auto& d : ctx.input_meta(tensor).sizes) {
    if (!d.value) ctx.fail("'" + tensor + "' needs static sizes here");
    out.push_back(*d.value);
  }
  return out;
}

std::vector<int64_t> spatial_list(TranslateContext& ctx, const std::string& name, size_t n, int64_t fallback) {
  std::vector<int64_t> v = ctx.ints_arg(name);
  if (v.empty()) v = {fallback};
  if (v.size() == 1) v.assign(n, v[0]);
  if (v.size() != n) ctx.fail("argument '" + name + "' does not match the spatial rank");
  return v;
}

std::vector<int64_t> range_from(int64_t first, int64_t end) {
  std::vector<int64_t> v;
  for (int64_t i = first; i < end; ++i) v.push_back(i);
  return v;
}

// A reduction over `axes`; no axes means nothing to reduce (emit_reduce would reduce everything).
std::string reduce_sum(TranslateContext& ctx, const std::string& x, const std::vector<int64_t>& axes, bool keepdims) {
  if (axes.empty()) return x;
  const std::string out = ctx.temp("sum");
  emit_reduce(ctx, "ReduceSum", x, axes, keepdims, out);
  return out;
}

std::string reduce_mean(TranslateContext& ctx, const std::string& x, const std::vector<int64_t>& axes) {
  const std::string out = ctx.temp("mean");
  emit_reduce(ctx, "ReduceMean", x, axes, true, out);
  return out;
}

// embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq)
void embedding_dense_backward(TranslateContext& ctx) {
  if (ctx.bool_arg("scale_grad_by_freq", false)) ctx.fail("scale_grad_by_freq is not supported");
  const DType t = ctx.output_meta().dtype;
  std::string grad = ctx.tensor("grad_output");
  const std::string indices = ctx.value("indices", DType::kInt64);
  const int64_t padding_idx = ctx.int_arg("padding_idx", -1);
  if (padding_idx >= 0) {
    const std::string is_pad = ctx.emit1("Equal", {indices, ctx.graph.constant_i64({padding_idx}, true)});
    grad =
        ctx.emit1("Where", {ctx.emit1("Unsqueeze", {is_pad, ctx.graph.constant_i64({-1})}), ctx.constant(0, t), grad});
  }
  const std::string dim = ctx.emit1("Slice", {shape_of(ctx, grad), ctx.graph.constant_i64({-1}),
                                              ctx.graph.constant_i64({std::numeric_limits<int64_t>::max()})});
  auto* shape = ctx.emit("Concat", {unsqueeze0(ctx, ctx.int_value("num_weights")), dim}, {ctx.temp("shape")});
  set_attr(shape, "axis", int64_t{0});
  const std::string zeros = ctx.emit1("Expand", {ctx.constant(0, t), shape->output(0)}, "zeros");
  auto* n = ctx.emit("ScatterND", {zeros, ctx.emit1("Unsqueeze", {indices, ctx.graph.constant_i64({-1})}), grad},
                     {ctx.output()});
  set_attr(n, "reduction", std::string("add"));
}

// max_poolNd_with_indices_backward(grad_output, self, ..., indices): scatter-add into each (n, c) plane.
void max_pool_backward(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const std::string self = ctx.tensor("self");
  const std::string planes = ctx.graph.constant_i64({0, 0, -1});
  const std::string zeros =
      ctx.emit1("Reshape", {ctx.emit1("Expand", {ctx.constant(0, t), shape_of(ctx, self)}), planes}, "zeros");
  const std::string idx = ctx.emit1("Reshape", {ctx.tensor("indices"), planes}, "indices");
  const std::string grad = ctx.emit1("Reshape", {ctx.tensor("grad_output"), planes}, "grad");
  auto* n = ctx.emit("ScatterElements", {zeros, idx, grad}, {ctx.temp("scattered")});
  set_attr(n, "axis", int64_t{2});
  set_attr(n, "reduction", std::string("add"));
  ctx.emit("Reshape", {n->output(0), shape_of(ctx, self)}, {ctx.output()});
}

// The gradient of an average pool: every output gradient spread evenly over its window, a ConvTranspose
// of each (n, c) plane with a constant 1/|window| kernel.
void spread_average(TranslateContext& ctx, const std::vector<int64_t>& kernel, const std::vector<int64_t>& stride,
                    const std::vector<int64_t>& padding) {
  const DType t = ctx.output_meta().dtype;
  const auto in = static_sizes(ctx, "self");
  const auto out = static_sizes(ctx, "grad_output");
  const size_t n = kernel.size();
  int64_t window = 1;
  for (int64_t k : kernel) window *= k;
  Tensor w(t == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32, [&] {
    Shape s = {1, 1};
    for (int64_t k : kernel) s.push_back(k);
    return s;
  }());
  for (int64_t i = 0; i < window; ++i) {
    if (w.dtype() == DType::kFloat64)
      w.data<double>()[i] = 1.0 / static_cast<double>(window);
    else
      w.data<float>()[i] = 1.0f / static_cast<float>(window);
  }
  const std::string weight = ctx.graph.unique_name(ctx.node.name + "_window");
  ctx.graph.add_initializer(weight, w);
  std::vector<int64_t> plane_shape = {-1, 1};
  for (size_t i = 0; i < n; ++i) plane_shape.push_back(out[out.size() - n + i]);
  const std::string grad =
      ctx.emit1("Reshape", {ctx.value("grad_output", w.dtype()), ctx.graph.constant_i64(plane_shape)}, "planes");
  std::vector<int64_t> output_padding, pads = padding;
  for (size_t i = 0; i < n; ++i) {
    const int64_t produced = (out[out.size() - n + i] - 1) * stride[i] - 2 * padding[i] + kernel[i];
    output_padding.push_back(in[in.size() - n + i] - produced);
    pads.push_back(padding[i]);
  }
  auto* conv = ctx.emit("ConvTranspose", {grad, weight}, {ctx.temp("spread")});
  set_attr(conv, "strides", stride);
  set_attr(conv, "pads", pads);
  if (std::any_of(output_padding.begin(), output_padding.end(), [](int64_t v) { return v != 0; }))
    set_attr(conv, "output_padding", output_padding);
  const std::string back = ctx.emit1("Reshape", {conv->output(0), shape_of(ctx, ctx.tensor("self"))});
  ctx.alias_output(0, ctx.cast_if_needed(back, w.dtype(), t));
}

// avg_poolNd_backward(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
void avg_pool_backward(TranslateContext& ctx) {
  const size_t n = static_cast<size_t>(ctx.rank("self") - 2);
  const auto kernel = spatial_list(ctx, "kernel_size", n, 1);
  std::vector<int64_t> stride = ctx.ints_arg("stride");
  if (stride.empty()) stride = kernel;
  if (stride.size() == 1) stride.assign(n, stride[0]);
  const auto padding = spatial_list(ctx, "padding", n, 0);
  const bool padded = std::any_of(padding.begin(), padding.end(), [](int64_t p) { return p != 0; });
  if (ctx.has("divisor_override") || ctx.bool_arg("ceil_mode", false) ||
      (padded && !ctx.bool_arg("count_include_pad", true)))
    ctx.fail("avg_pool backward with divisor_override, ceil_mode or count_include_pad=False padding is not supported");
  spread_average(ctx, kernel, stride, padding);
}

// _adaptive_avg_poolNd_backward(grad_output, self): exact when the output size divides the input size.
void adaptive_avg_pool_backward(TranslateContext& ctx) {
  const auto in = static_sizes(ctx, "self");
  const auto out = static_sizes(ctx, "grad_output");
  const size_t n = in.size() - 2;
  std::vector<int64_t> k;
  for (size_t i = 0; i < n; ++i) {
    if (in[i + 2] % out[i + 2] != 0) ctx.fail("adaptive pooling backward with non-dividing sizes is not supported");
    k.push_back(in[i + 2] / out[i + 2]);
  }
  spread_average(ctx, k, k, std::vector<int64_t>(n, 0));
}

// native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask)
void layer_norm_backward(TranslateContext& ctx) {
  const int64_t rank = ctx.rank("input");
  const int64_t k = static_cast<int64_t>(ctx.required("normalized_shape").list_length());
  const auto norm_axes = range_from(rank - k, rank), batch_axes = range_from(0, rank - k);
  const std::string grad = ctx.tensor("grad_out");
  const std::string x_hat =
      ctx.emit1("Mul", {ctx.emit1("Sub", {ctx.tensor("input"), ctx.tensor("mean")}), ctx.tensor("rstd")}, "x_hat");
  const std::string g = ctx.has("weight") ? ctx.emit1("Mul", {grad, ctx.tensor("weight")}) : grad;
  const std::string inner =
      ctx.emit1("Sub", {ctx.emit1("Sub", {g, reduce_mean(ctx, g, norm_axes)}),
                        ctx.emit1("Mul", {x_hat, reduce_mean(ctx, ctx.emit1("Mul", {g, x_hat}), norm_axes)})});
  ctx.emit("Mul", {ctx.tensor("rstd"), inner}, {ctx.output(0)});
  if (ctx.output_count() > 1) ctx.alias_output(1, reduce_sum(ctx, ctx.emit1("Mul", {grad, x_hat}), batch_axes, false));
  if (ctx.output_count() > 2) ctx.alias_output(2, reduce_sum(ctx, grad, batch_axes, false));
}

// native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C, HxW, group, output_mask)
void group_norm_backward(TranslateContext& ctx) {
  const int64_t rank = ctx.rank("input");
  const int64_t groups = ctx.int_arg("group", 1);
  const std::string x = ctx.tensor("input"), grad = ctx.tensor("grad_out");
  const std::string grouped = ctx.graph.constant_i64({0, groups, -1});
  const std::string stats_shape = ctx.graph.constant_i64({0, groups, 1});
  const std::string mean = ctx.emit1("Reshape", {ctx.tensor("mean"), stats_shape});
  const std::string rstd = ctx.emit1("Reshape", {ctx.tensor("rstd"), stats_shape});
  const std::string x_hat =
      ctx.emit1("Mul", {ctx.emit1("Sub", {ctx.emit1("Reshape", {x, grouped}), mean}), rstd}, "x_hat");
  std::string g = grad;
  if (ctx.has("weight")) {
    std::vector<int64_t> per_channel = {-1};
    for (int64_t i = 2; i < rank; ++i) per_channel.push_back(1);
    g = ctx.emit1("Mul", {grad, ctx.emit1("Reshape", {ctx.tensor("weight"), ctx.graph.constant_i64(per_channel)})});
  }
  g = ctx.emit1("Reshape", {g, grouped});
  const std::string inner =
      ctx.emit1("Sub", {ctx.emit1("Sub", {g, reduce_mean(ctx, g, {2})}),
                        ctx.emit1("Mul", {x_hat, reduce_mean(ctx, ctx.emit1("Mul", {g, x_hat}), {2})})});
  ctx.emit("Reshape", {ctx.emit1("Mul", {rstd, inner}), shape_of(ctx, x)}, {ctx.output(0)});
  std::vector<int64_t> axes = {0};
  for (int64_t i = 2; i < rank; ++i) axes.push_back(i);
  const std::string x_hat_full = ctx.emit1("Reshape", {x_hat, shape_of(ctx, x)});
  if (ctx.output_count() > 1) ctx.alias_output(1, reduce_sum(ctx, ctx.emit1("Mul", {grad, x_hat_full}), axes, false));
  if (ctx.output_count() > 2) ctx.alias_output(2, reduce_sum(ctx, grad, axes, false));
}

// convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
// output_padding, groups, output_mask), plain convolutions with groups=1:
//   grad_input  = ConvTranspose(grad_output, weight)
//   grad_weight = Conv over the batch axis: input as [C_in, N, ...] with grad_output as [C_out, N, ...] filters
//   grad_bias   = sum of grad_output over every axis except 1
void convolution_backward(TranslateContext& ctx) {
  if (ctx.bool_arg("transposed", false) || ctx.int_arg("groups", 1) != 1)
    ctx.fail("convolution_backward is supported for plain convolutions with groups=1");
  const auto in = static_sizes(ctx, "input"), w = static_sizes(ctx, "weight"), out = static_sizes(ctx, "grad_output");
  const size_t n = in.size() - 2;
  const auto stride = spatial_list(ctx, "stride", n, 1), padding = spatial_list(ctx, "padding", n, 0),
             dilation = spatial_list(ctx, "dilation", n, 1);
  std::vector<int64_t> pads = padding;
  pads.insert(pads.end(), padding.begin(), padding.end());
  const std::string grad = ctx.tensor("grad_output");

  std::vector<int64_t> output_padding;
  for (size_t i = 0; i < n; ++i)
    output_padding.push_back(in[i + 2] -
                             ((out[i + 2] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (w[i + 2] - 1) + 1));
  auto* gi = ctx.emit("ConvTranspose", {grad, ctx.tensor("weight")}, {ctx.output(0)});
  set_attr(gi, "strides", stride);
  set_attr(gi, "pads", pads);
  set_attr(gi, "dilations", dilation);
  if (std::any_of(output_padding.begin(), output_padding.end(), [](int64_t v) { return v != 0; }))
    set_attr(gi, "output_padding", output_padding);

  if (ctx.output_count() > 1) {
    std::vector<int64_t> swap = {1, 0};
    for (size_t i = 0; i < n; ++i) swap.push_back(static_cast<int64_t>(i) + 2);
    auto transpose = [&](const std::string& v) {
      auto* t = ctx.emit("Transpose", {v}, {ctx.temp("batch_as_channels")});
      set_attr(t, "perm", swap);
      return t->output(0);
    };
    auto* gw = ctx.emit("Conv", {transpose(ctx.tensor("input")), transpose(grad)}, {ctx.temp("weight_grad")});
    set_attr(gw, "strides", dilation);
    set_attr(gw, "dilations", stride);
    set_attr(gw, "pads", pads);
    // The correlation can run past the kernel when the last window did not fit: keep the kernel extent.
    std::vector<int64_t> zeros(n, 0), ends(w.begin() + 2, w.end()), axes = range_from(2, static_cast<int64_t>(n) + 2);
    const std::string cut = ctx.emit1("Slice", {gw->output(0), ctx.graph.constant_i64(zeros),
                                                ctx.graph.constant_i64(ends), ctx.graph.constant_i64(axes)});
    ctx.alias_output(1, transpose(cut));
  }
  if (ctx.output_count() > 2) {
    std::vector<int64_t> axes = {0};
    for (size_t i = 0; i < n; ++i) axes.push_back(static_cast<int64_t>(i) + 2);
    ctx.alias_output(2, reduce_sum(ctx, grad, axes, false));
  }
}

}  // namespace

PARITY_TRANSLATION("aten::embedding_dense_backward.default", embedding_dense_backward, 18);
PARITY_TRANSLATION("aten::max_pool2d_with_indices_backward.default", max_pool_backward, 18);
PARITY_TRANSLATION("aten::max_pool3d_with_indices_backward.default", max_pool_backward, 18);
PARITY_TRANSLATION("aten::avg_pool2d_backward.default", avg_pool_backward, 18);
PARITY_TRANSLATION("aten::avg_pool3d_backward.default", avg_pool_backward, 18);
PARITY_TRANSLATION("aten::_adaptive_avg_pool2d_backward.default", adaptive_avg_pool_backward, 18);
PARITY_TRANSLATION("aten::native_layer_norm_backward.default", layer_norm_backward, 18);
PARITY_TRANSLATION("aten::native_group_norm_backward.default", group_norm_backward, 18);
PARITY_TRANSLATION("aten::convolution_backward.default", convolution_backward, 18);

}  // namespace parity::exporter
