#include "dispatch.h"

namespace parity::refrt {

Tensor widen_to_float32(const Tensor& t) {
  if (!is_float16_like(t.dtype())) return t;
  Tensor out(DType::kFloat32, t.shape());
  const uint16_t* src = static_cast<const uint16_t*>(t.raw());
  float* dst = out.data<float>();
  const bool half = t.dtype() == DType::kFloat16;
  for (int64_t i = 0; i < t.numel(); ++i) dst[i] = half ? half_to_float(src[i]) : bf16_to_float(src[i]);
  return out;
}

Tensor narrow_from_float32(const Tensor& t, DType to) {
  Tensor out(to, t.shape());
  const float* src = t.data<float>();
  uint16_t* dst = static_cast<uint16_t*>(out.mutable_raw());
  const bool half = to == DType::kFloat16;
  for (int64_t i = 0; i < t.numel(); ++i) dst[i] = half ? float_to_half(src[i]) : float_to_bf16(src[i]);
  return out;
}

}  // namespace parity::refrt
