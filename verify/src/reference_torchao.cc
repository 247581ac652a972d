// torchao's affine quantization ops (quantize_affine, dequantize_affine, choose_qparams_affine: the ops a
// `quantize_`-d model's program calls once capture unwrapped its tensor subclasses), for the libtorch
// reference executor.
//
// torchao defines them in Python (torchao/quantization/quant_primitives.py), so a C++ process has no kernel
// for them. They are registered here with torchao's schemas and written as the same ATen calls in the same
// order as torchao's Python bodies (reciprocal then multiply, round half to even, clamp, cast; min/max with
// keepdim, then the scale arithmetic with Python floats as double scalars), so the reference is
// bit-identical to eager.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "reference_quantized.h"

namespace parity::verify {

namespace {

using at::Tensor;

std::vector<int64_t> ints(c10::SymIntArrayRef values) {
  std::vector<int64_t> out;
  for (const auto& v : values) out.push_back(v.guard_int(__FILE__, __LINE__));
  return out;
}

// torchao's _get_reduction_params: the view that groups each block, and the dims to reduce over.
struct Reduction {
  std::vector<int64_t> shape, dims;
};
Reduction reduction_params(const std::vector<int64_t>& block, at::IntArrayRef sizes) {
  TORCH_CHECK(block.size() == sizes.size(), "Got input dim:", sizes.size(), ", block_size: ", block);
  Reduction r;
  int64_t cur = 0;
  for (size_t i = 0; i < block.size(); ++i) {
    if (block[i] != sizes[i] && block[i] > 1) {
      TORCH_CHECK(sizes[i] % block[i] == 0, "Expecting input size at ", i, " dimension: ", sizes[i],
                  " to be divisible by block_size at ", i, " dimension: ", block[i]);
      r.shape.push_back(sizes[i] / block[i]);
      r.shape.push_back(block[i]);
      r.dims.push_back(cur + 1);
      cur += 2;
    } else {
      r.shape.push_back(sizes[i]);
      if (block[i] != 1) r.dims.push_back(cur);
      cur += 1;
    }
  }
  return r;
}

std::vector<int64_t> after_reduction(const Reduction& r) {
  std::vector<int64_t> s = r.shape;
  for (int64_t d : r.dims) s[static_cast<size_t>(d)] = 1;
  return s;
}

// torchao's _get_and_check_qmin_qmax for the byte-sized integer dtypes.
std::pair<int64_t, int64_t> qrange(at::ScalarType dtype, const std::optional<at::Scalar>& qmin,
                                   const std::optional<at::Scalar>& qmax) {
  int64_t lo = 0, hi = 0;
  switch (dtype) {
    case at::kChar:
      lo = -128, hi = 127;
      break;
    case at::kByte:
      lo = 0, hi = 255;
      break;
    case at::kShort:
      lo = -32768, hi = 32767;
      break;
    case at::ScalarType::UInt16:
      lo = 0, hi = 65535;
      break;
    case at::kInt:
      lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max();
      break;
    default:
      TORCH_CHECK(false, "torchao affine ops: unsupported dtype ", dtype, " in the reference executor");
  }
  const int64_t a = qmin ? qmin->toLong() : lo, b = qmax ? qmax->toLong() : hi;
  TORCH_CHECK(a >= lo, "quant_min out of bound for dtype, quant_min_lower_bound: ", lo, " quant_min: ", a);
  TORCH_CHECK(b <= hi, "quant_max out of bound for dtype, quant_max_upper_bound: ", hi, " quant_max: ", b);
  return {a, b};
}

bool is_float(at::ScalarType t) { return t == at::kFloat || t == at::kHalf || t == at::kBFloat16; }

Tensor quantize_affine(const Tensor& input, c10::SymIntArrayRef block_size, const Tensor& scale,
                       const std::optional<Tensor>& zero_point, at::ScalarType output_dtype,
                       const std::optional<at::Scalar>& quant_min, const std::optional<at::Scalar>& quant_max) {
  const auto [qmin, qmax] = qrange(output_dtype, quant_min, quant_max);
  TORCH_CHECK(is_float(input.scalar_type()), "Unsupported input dtype: ", input.scalar_type());
  const Reduction r = reduction_params(ints(block_size), input.sizes());
  const auto after = after_reduction(r);
  const Tensor x = input.view(r.shape);
  Tensor quant = at::round(x * (scale.view(after).reciprocal() * 1.0));  // Python's 1.0 / scale
  if (zero_point && zero_point->defined() && zero_point->numel() > 0) quant = quant + zero_point->view(after);
  return at::clamp(quant, qmin, qmax).view(input.sizes()).to(output_dtype);
}

Tensor dequantize_affine(const Tensor& input, c10::SymIntArrayRef block_size, const Tensor& scale,
                         const std::optional<Tensor>& zero_point, at::ScalarType input_dtype,
                         const std::optional<at::Scalar>& quant_min, const std::optional<at::Scalar>& quant_max,
                         at::ScalarType output_dtype) {
  TORCH_CHECK(input.scalar_type() == input_dtype, "Expected: ", input_dtype, ", got: ", input.scalar_type());
  TORCH_CHECK(is_float(output_dtype), "Unsupported output dtype: ", output_dtype);
  qrange(input_dtype, quant_min, quant_max);
  const Reduction r = reduction_params(ints(block_size), input.sizes());
  const auto after = after_reduction(r);
  Tensor dequant = input.view(r.shape).to(output_dtype, /*non_blocking=*/false, /*copy=*/true);
  if (zero_point && zero_point->defined()) dequant = dequant - zero_point->view(after).to(output_dtype);
  dequant = dequant * scale.view(after);
  return dequant.view(input.sizes()).to(output_dtype);
}

double smallest_normal(at::ScalarType t) {
  if (t == at::kHalf) return static_cast<double>(std::numeric_limits<c10::Half>::min());
  if (t == at::kBFloat16) return static_cast<double>(std::numeric_limits<c10::BFloat16>::min());
  if (t == at::kDouble) return std::numeric_limits<double>::min();
  return static_cast<double>(std::numeric_limits<float>::min());
}

std::tuple<Tensor, Tensor> choose_qparams_affine(const std::optional<Tensor>& maybe_input, c10::string_view mapping,
                                                 c10::SymIntArrayRef block_size, at::ScalarType target_dtype,
                                                 const std::optional<at::Scalar>& quant_min,
                                                 const std::optional<at::Scalar>& quant_max, std::optional<double> eps,
                                                 std::optional<at::ScalarType> scale_dtype,
                                                 std::optional<at::ScalarType> zero_point_dtype, bool keepdim) {
  TORCH_CHECK(maybe_input && maybe_input->defined(), "choose_qparams_affine: input is None");
  const Tensor& input = *maybe_input;
  const auto [qmin, qmax] = qrange(target_dtype, quant_min, quant_max);
  const std::string m(mapping);
  TORCH_CHECK(m == "SYMMETRIC" || m == "SYMMETRIC_NO_CLIPPING_ERR" || m == "ASYMMETRIC",
              "Unsupported mapping type: ", m);
  const at::ScalarType sdtype = scale_dtype.value_or(input.scalar_type());
  const double epsilon = eps.value_or(smallest_normal(input.scalar_type()));
  const auto block = ints(block_size);
  const Reduction r = reduction_params(block, input.sizes());
  const Tensor x = input.view(r.shape);
  const Tensor min_val = at::amin(x, r.dims, keepdim), max_val = at::amax(x, r.dims, keepdim);
  const Tensor min_neg = at::min(min_val, at::zeros_like(min_val));
  Tensor max_pos = at::max(max_val, at::zeros_like(max_val));
  Tensor scale, zero_point;
  if (m != "ASYMMETRIC") {
    if (m == "SYMMETRIC") {
      max_pos = at::max(-min_neg, max_pos);
      scale = max_pos / (static_cast<double>(qmax - qmin) / 2);
    } else {
      const Tensor smin = min_neg / static_cast<double>(qmin), smax = max_pos / static_cast<double>(qmax);
      scale = at::where(smin > smax, smin, smax);
    }
    zero_point = at::full_like(scale, static_cast<int64_t>(static_cast<double>(qmax + qmin + 1) / 2));
    scale = at::clamp(scale, epsilon);
  } else {
    scale = (max_pos - min_neg) / static_cast<double>(qmax - qmin);
    scale = at::clamp(scale, epsilon);
    zero_point = at::rsub(at::round(min_neg / scale), qmin);  // Python's quant_min - tensor
    zero_point = at::clamp(zero_point, qmin, qmax);
    if (!zero_point_dtype) zero_point_dtype = at::kInt;
  }
  if (keepdim) {
    std::vector<int64_t> shape;
    for (size_t i = 0; i < block.size(); ++i) shape.push_back(input.size(static_cast<int64_t>(i)) / block[i]);
    scale = scale.reshape(shape);
    zero_point = zero_point.reshape(shape);
  }
  return {scale.to(sdtype), zero_point_dtype ? zero_point.to(*zero_point_dtype) : zero_point};
}

}  // namespace

at::Tensor torchao_unrounded(const at::Tensor& input, const std::vector<int64_t>& block_size, const at::Tensor& scale) {
  const Reduction r = reduction_params(block_size, input.sizes());
  const at::Tensor x = input.to(at::kDouble).view(r.shape);
  return (x * scale.to(at::kDouble).view(after_reduction(r)).reciprocal()).view(input.sizes());
}

void register_torchao_ops() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (c10::Dispatcher::singleton().findSchema({"torchao::quantize_affine", ""})) return;
    static auto* lib = new torch::Library(torch::Library::FRAGMENT, "torchao", std::nullopt, __FILE__, __LINE__);
    // The schemas torchao 0.18 registers (torch.ops.torchao.<op>.default._schema).
    lib->def(
        "quantize_affine(Tensor input, SymInt[] block_size, Tensor scale, Tensor? zero_point, "
        "ScalarType output_dtype, Scalar? quant_min=None, Scalar? quant_max=None) -> Tensor",
        &quantize_affine);
    lib->def(
        "dequantize_affine(Tensor input, SymInt[] block_size, Tensor scale, Tensor? zero_point, "
        "ScalarType input_dtype, Scalar? quant_min=None, Scalar? quant_max=None, ScalarType output_dtype=6) "
        "-> Tensor",
        &dequantize_affine);
    lib->def(
        "choose_qparams_affine(Tensor? input, str mapping_type, SymInt[] block_size, ScalarType target_dtype, "
        "Scalar? quant_min=None, Scalar? quant_max=None, float? eps=None, ScalarType? scale_dtype=None, "
        "ScalarType? zero_point_dtype=None, bool keepdim=False) -> (Tensor, Tensor)",
        &choose_qparams_affine);
  });
}

}  // namespace parity::verify
