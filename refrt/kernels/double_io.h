// Internal to refrt/kernels: whole float tensors read as double and written back from double, for
// the reference kernels that compute in double and round once (signal, losses, geometry, ROI ops).
#pragma once
#include <vector>

#include "../src/dispatch.h"

namespace parity::refrt {

inline bool is_float_dtype(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat64 || t == DType::kFloat16 || t == DType::kBFloat16;
}

// Every element of a float tensor (float32/64, float16, bfloat16) as double.
inline std::vector<double> float_values(const Tensor& t) {
  std::vector<double> out(static_cast<size_t>(t.numel()));
  const int64_t n = t.numel();
  switch (t.dtype()) {
    case DType::kFloat32:
      for (int64_t i = 0; i < n; ++i) out[i] = t.data<float>()[i];
      break;
    case DType::kFloat64:
      for (int64_t i = 0; i < n; ++i) out[i] = t.data<double>()[i];
      break;
    case DType::kFloat16:
      for (int64_t i = 0; i < n; ++i) out[i] = half_to_float(t.data<uint16_t>()[i]);
      break;
    case DType::kBFloat16:
      for (int64_t i = 0; i < n; ++i) out[i] = bf16_to_float(t.data<uint16_t>()[i]);
      break;
    default:
      throw Error({"refrt"}, "expected a float tensor, got " + dtype_name(t.dtype()));
  }
  return out;
}

// A zeroed double buffer for an output of `shape`. Refused like the output tensor itself when its
// doubles would pass the allocation limit, so a hostile size fails before this buffer is allocated.
inline std::vector<double> output_buffer(const Shape& shape, const std::string& what = "output") {
  const int64_t n = checked_numel(shape, what);
  if (static_cast<uint64_t>(n) > allocation_limit() / sizeof(double))
    throw Error({"refrt"}, what + " of shape " + shape_str(shape) + " exceeds the allocation limit of " +
                               std::to_string(allocation_limit()) + " bytes (PARITY_MAX_TENSOR_BYTES)");
  return std::vector<double>(static_cast<size_t>(n), 0.0);
}

// A tensor of float dtype `dtype` and `shape` holding `values` (rounded once to the dtype).
inline Tensor float_tensor(DType dtype, Shape shape, const std::vector<double>& values) {
  Tensor out(dtype, std::move(shape));
  const int64_t n = out.numel();
  switch (dtype) {
    case DType::kFloat32:
      for (int64_t i = 0; i < n; ++i) out.data<float>()[i] = static_cast<float>(values[i]);
      break;
    case DType::kFloat64:
      for (int64_t i = 0; i < n; ++i) out.data<double>()[i] = values[i];
      break;
    case DType::kFloat16:
      for (int64_t i = 0; i < n; ++i) out.data<uint16_t>()[i] = float_to_half(static_cast<float>(values[i]));
      break;
    case DType::kBFloat16:
      for (int64_t i = 0; i < n; ++i) out.data<uint16_t>()[i] = float_to_bf16(static_cast<float>(values[i]));
      break;
    default:
      throw Error({"refrt"}, "expected a float dtype, got " + dtype_name(dtype));
  }
  return out;
}

// The one value of a scalar (or one-element) integer tensor.
inline int64_t scalar_int(const NodeDef& node, const Tensor& t, const std::string& what) {
  if (t.numel() != 1) node.fail(what + " must hold one value, got shape " + shape_str(t.shape()));
  if (t.dtype() != DType::kInt32 && t.dtype() != DType::kInt64)
    node.fail(what + " must be int32 or int64, got " + dtype_name(t.dtype()));
  return int64_values(t, what)[0];
}

}  // namespace parity::refrt
