// Internal: dtype dispatch and the 16-bit float types shared by kernels.
//
// float16 and bfloat16 are stored as uint16 bit patterns; kernels compute them in float32 and round
// back (round to nearest even), which is what "accumulate in float32" means for every op here:
// `with_float32(...)` widens the inputs, runs the float32 body and narrows the outputs.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "kernel.h"
#include "parity/dtype_lists.h"
#include "parity/float16.h"

namespace parity::refrt {

// The 16-bit float conversions are common's (parity/float16.h, Eigen::half / Eigen::bfloat16).
using parity::bf16_to_float;
using parity::float_to_bf16;
using parity::float_to_half;
using parity::half_to_float;

inline bool is_float16_like(DType t) { return t == DType::kFloat16 || t == DType::kBFloat16; }

// A float32 copy of a float16/bfloat16 tensor (other dtypes: returned as is).
Tensor widen_to_float32(const Tensor& t);
// `t` (float32) rounded to float16 or bfloat16.
Tensor narrow_from_float32(const Tensor& t, DType to);

// Runs `body(inputs_as_float32) -> outputs` for a node whose float16/bfloat16 inputs are widened
// and whose float32 outputs are narrowed back to `dtype`. Used by kernels as:
//   if (is_float16_like(x.dtype())) return with_float32(io, x.dtype(), [&](KernelIO& f) { compute(f); });
template <typename Body>
void with_float32(KernelIO& io, DType dtype, Body&& body) {
  std::vector<Tensor> widened;
  widened.reserve(io.inputs.size());
  KernelIO f;
  f.pool = io.pool;
  for (const Tensor* in : io.inputs) {
    if (in && in->dtype() == dtype) {
      widened.push_back(widen_to_float32(*in));
      f.inputs.push_back(&widened.back());
    } else {
      f.inputs.push_back(in);
    }
  }
  f.outputs.resize(io.outputs.size());
  body(f);
  for (size_t i = 0; i < f.outputs.size(); ++i)
    io.outputs[i] =
        f.outputs[i].dtype() == DType::kFloat32 ? narrow_from_float32(f.outputs[i], dtype) : std::move(f.outputs[i]);
}

// dispatch_numeric(dtype, fn) is common's (parity/dtype_lists.h).
using parity::dispatch_numeric;

// Same for float32/float64 only.
template <typename Fn>
bool dispatch_float(DType t, Fn&& fn) {
  switch (t) {
    case DType::kFloat32:
      fn(float{});
      return true;
    case DType::kFloat64:
      fn(double{});
      return true;
    default:
      return false;
  }
}

// The dtype lists are common's (parity/dtype.h).
inline const std::vector<DType>& kFloatTypes16 = kFloatingDTypes;
inline const std::vector<DType>& kAllNumericTypes = kNumericDTypes;

}  // namespace parity::refrt
