// The `quantized_decomposed` operators of PT2E quantization, for the libtorch reference executor.
//
// torch defines them in Python (torch/ao/quantization/fx/_decomposed.py), so a C++ process has no
// kernel for them. They are registered here with torch's schemas and implemented with the same ATen
// calls in the same order as torch's Python bodies (x * (1.0 / scale) with the reciprocal taken in
// double and the product in float32, round half to even, clamp, cast), so the reference is bit-identical
// to eager, not merely close.
#include "reference_quantized.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>

namespace parity::verify {

namespace {

using at::Tensor;

void check_range(int64_t quant_min, int64_t quant_max, at::ScalarType dtype) {
  TORCH_CHECK(dtype == at::kByte || dtype == at::kChar || dtype == at::kShort || dtype == at::kInt ||
                  dtype == at::ScalarType::UInt16,
              "quantized_decomposed: unsupported quantized dtype ", dtype, " in the reference executor");
  TORCH_CHECK(quant_min <= quant_max, "quant_min ", quant_min, " > quant_max ", quant_max);
}

Tensor float_input(const Tensor& input) {
  Tensor x = input;
  if (x.scalar_type() == at::kHalf || x.scalar_type() == at::kBFloat16) x = x.to(at::kFloat);
  TORCH_CHECK(x.scalar_type() == at::kFloat,
              "Expecting input to have dtype torch.float32, but got dtype: ", x.scalar_type());
  return x;
}

Tensor quantize_per_tensor(const Tensor& input, double scale, int64_t zero_point, int64_t quant_min, int64_t quant_max,
                           at::ScalarType dtype) {
  const Tensor x = float_input(input);
  check_range(quant_min, quant_max, dtype);
  const double inv_scale = 1.0 / scale;  // Python float arithmetic: double; the product is float32
  return at::clamp(at::round(x * inv_scale) + zero_point, quant_min, quant_max).to(dtype);
}

std::pair<double, int64_t> one_element_qparams(const Tensor& scale, const Tensor& zero_point) {
  TORCH_CHECK(zero_point.numel() == 1,
              "Expecting zero_point tensor to be one element, but received : ", zero_point.numel());
  TORCH_CHECK(scale.numel() == 1, "Expecting scale tensor to be one element, but received : ", scale.numel());
  return {scale.item<double>(), zero_point.item<int64_t>()};
}

Tensor quantize_per_tensor_tensor(const Tensor& input, const Tensor& scale, const Tensor& zero_point, int64_t quant_min,
                                  int64_t quant_max, at::ScalarType dtype) {
  const auto [s, zp] = one_element_qparams(scale, zero_point);
  return quantize_per_tensor(input, s, zp, quant_min, quant_max, dtype);
}

Tensor quantize_per_tensor_tensor2(const Tensor& input, const Tensor& scale, const Tensor& zero_point,
                                   const Tensor& quant_min, const Tensor& quant_max, at::ScalarType dtype) {
  const auto [s, zp] = one_element_qparams(scale, zero_point);
  return quantize_per_tensor(input, s, zp, quant_min.item<int64_t>(), quant_max.item<int64_t>(), dtype);
}

Tensor dequantize_per_tensor(const Tensor& input, double scale, int64_t zero_point, int64_t quant_min,
                             int64_t quant_max, at::ScalarType dtype, std::optional<at::ScalarType> out_dtype) {
  TORCH_CHECK(input.scalar_type() == dtype, "Expecting input to have dtype: ", dtype, ", but got ",
              input.scalar_type());
  check_range(quant_min, quant_max, dtype);
  return (input.to(out_dtype.value_or(at::kFloat)) - zero_point) * scale;
}

Tensor dequantize_per_tensor_tensor(const Tensor& input, const Tensor& scale, const Tensor& zero_point,
                                    int64_t quant_min, int64_t quant_max, at::ScalarType dtype,
                                    std::optional<at::ScalarType> out_dtype) {
  const auto [s, zp] = one_element_qparams(scale, zero_point);
  return dequantize_per_tensor(input, s, zp, quant_min, quant_max, dtype, out_dtype);
}

Tensor dequantize_per_tensor_tensor2(const Tensor& input, const Tensor& scale, const Tensor& zero_point,
                                     const Tensor& quant_min, const Tensor& quant_max, at::ScalarType dtype,
                                     std::optional<at::ScalarType> out_dtype) {
  const auto [s, zp] = one_element_qparams(scale, zero_point);
  return dequantize_per_tensor(input, s, zp, quant_min.item<int64_t>(), quant_max.item<int64_t>(), dtype, out_dtype);
}

// scales / zero points shaped to broadcast along `axis` (torch permutes `axis` to the front instead: the
// same elementwise arithmetic).
Tensor along(const Tensor& v, const Tensor& input, int64_t axis) {
  std::vector<int64_t> shape(static_cast<size_t>(input.dim()), 1);
  shape[static_cast<size_t>(axis)] = v.size(0);
  return v.view(shape);
}

int64_t checked_axis(const Tensor& input, int64_t axis) {
  TORCH_CHECK(axis < input.dim(), "Expecting axis to be < ", input.dim());
  return axis < 0 ? axis + input.dim() : axis;
}

Tensor quantize_per_channel(const Tensor& input, const Tensor& scales, const Tensor& zero_points, int64_t axis,
                            int64_t quant_min, int64_t quant_max, at::ScalarType dtype) {
  const Tensor x = float_input(input);
  axis = checked_axis(x, axis);
  check_range(quant_min, quant_max, dtype);
  // Python's `1.0 / scales` is scales.reciprocal() * 1.0
  const Tensor inv = at::reciprocal(along(scales, x, axis)) * 1.0;
  return at::clamp(at::round(x * inv) + along(zero_points, x, axis), quant_min, quant_max).to(dtype);
}

Tensor dequantize_per_channel(const Tensor& input, const Tensor& scales, const std::optional<Tensor>& zero_points,
                              int64_t axis, int64_t quant_min, int64_t quant_max, at::ScalarType dtype,
                              std::optional<at::ScalarType> out_dtype) {
  TORCH_CHECK(input.scalar_type() == dtype, "Expecting input to have dtype: ", dtype,
              ", but got dtype: ", input.scalar_type());
  axis = checked_axis(input, axis);
  check_range(quant_min, quant_max, dtype);
  const Tensor s = along(scales, input, axis);
  const Tensor res = zero_points ? (input - along(*zero_points, input, axis)) * s : input * s;
  return res.to(out_dtype.value_or(at::kFloat));
}

// torch.ao.quantization.utils.determine_qparams for one min/max pair (per-tensor affine or symmetric).
std::tuple<Tensor, Tensor> determine_qparams(const Tensor& input, int64_t qmin, int64_t qmax, double eps,
                                             at::ScalarType dtype, bool symmetric) {
  TORCH_CHECK(
      input.scalar_type() == at::kFloat || input.scalar_type() == at::kHalf || input.scalar_type() == at::kBFloat16,
      "Expecting input to have dtype torch.float32/16/b16, but got dtype: ", input.scalar_type());
  TORCH_CHECK(qmin <= 0 && 0 <= qmax, "Used-specified quantization range must include 0.");
  TORCH_CHECK(qmin < qmax, "qmin must be strictly less than qmax for user-specified quantization range.");
  const auto [min_val, max_val] = at::aminmax(input);
  if (min_val.item<double>() == INFINITY && max_val.item<double>() == -INFINITY)  // check_min_max_valid
    return {at::tensor({1.0}, at::kFloat), at::tensor({int64_t{0}}, at::kLong)};
  TORCH_CHECK(at::all(min_val <= max_val).item<bool>(), "min ", min_val, " should be less than max ", max_val);
  const Tensor min_neg = at::minimum(min_val, at::zeros_like(min_val));
  Tensor max_pos = at::maximum(max_val, at::zeros_like(max_val));
  const Tensor eps_t = at::tensor({static_cast<float>(eps)}, at::kFloat);  // torch.Tensor([eps])
  Tensor scale, zero_point;
  if (symmetric) {
    max_pos = at::maximum(-min_neg, max_pos);
    scale = at::maximum(max_pos / (static_cast<double>(qmax - qmin) / 2), eps_t);
    zero_point = at::full(min_neg.sizes(), dtype == at::kByte ? 128 : 0, at::kLong);
  } else {
    scale = at::maximum((max_pos - min_neg) / static_cast<double>(qmax - qmin), eps_t);
    zero_point = at::clamp(at::rsub(at::round(min_neg / scale).to(at::kInt), qmin), qmin, qmax);
  }
  if (scale.dim() == 0) scale = scale.reshape({1});
  if (zero_point.dim() == 0) zero_point = zero_point.reshape({1});
  return {scale.to(at::kDouble), zero_point.to(at::kLong)};
}

std::tuple<Tensor, Tensor> choose_qparams(const Tensor& input, int64_t qmin, int64_t qmax, double eps,
                                          at::ScalarType dtype) {
  return determine_qparams(input, qmin, qmax, eps, dtype, false);
}

std::tuple<Tensor, Tensor> choose_qparams_symmetric(const Tensor& input, int64_t qmin, int64_t qmax, double eps,
                                                    at::ScalarType dtype) {
  return determine_qparams(input, qmin, qmax, eps, dtype, true);
}

Tensor convert_element_type(const Tensor& a, at::ScalarType dtype) { return a.to(dtype); }

}  // namespace

void register_quantized_decomposed_ops() {
  static std::once_flag once;
  std::call_once(once, [] {
    // A process that already has the namespace (a loaded library defining it) keeps its definitions.
    if (c10::Dispatcher::singleton().findSchema({"quantized_decomposed::quantize_per_tensor", ""})) return;
    static auto* lib =
        new torch::Library(torch::Library::DEF, "quantized_decomposed", std::nullopt, __FILE__, __LINE__);
    // The schemas of torch/ao/quantization/fx/_decomposed.py.
    lib->def(
        "quantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, "
        "ScalarType dtype) -> Tensor",
        &quantize_per_tensor);
    lib->def(
        "quantize_per_tensor.tensor(Tensor input, Tensor scale, Tensor zero_point, int quant_min, "
        "int quant_max, ScalarType dtype) -> Tensor",
        &quantize_per_tensor_tensor);
    lib->def(
        "quantize_per_tensor.tensor2(Tensor input, Tensor scale, Tensor zero_point, Tensor quant_min, "
        "Tensor quant_max, ScalarType dtype) -> Tensor",
        &quantize_per_tensor_tensor2);
    lib->def(
        "dequantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, "
        "ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor",
        &dequantize_per_tensor);
    lib->def(
        "dequantize_per_tensor.tensor(Tensor input, Tensor scale, Tensor zero_point, int quant_min, "
        "int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor",
        &dequantize_per_tensor_tensor);
    lib->def(
        "dequantize_per_tensor.tensor2(Tensor input, Tensor scale, Tensor zero_point, Tensor quant_min, "
        "Tensor quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor",
        &dequantize_per_tensor_tensor2);
    lib->def(
        "quantize_per_channel(Tensor input, Tensor scales, Tensor zero_points, int axis, int quant_min, "
        "int quant_max, ScalarType dtype) -> Tensor",
        &quantize_per_channel);
    lib->def(
        "dequantize_per_channel(Tensor input, Tensor scales, Tensor? zero_points, int axis, int quant_min, "
        "int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor",
        &dequantize_per_channel);
    lib->def(
        "choose_qparams.tensor(Tensor input, int quant_min, int quant_max, float eps, ScalarType dtype) -> "
        "(Tensor, Tensor)",
        &choose_qparams);
    lib->def(
        "choose_qparams_symmetric.tensor(Tensor input, int quant_min, int quant_max, float eps, "
        "ScalarType dtype) -> (Tensor, Tensor)",
        &choose_qparams_symmetric);
    lib->def("convert_element_type.no_fuse(Tensor input, ScalarType dtype) -> Tensor", &convert_element_type);
  });
}

}  // namespace parity::verify
