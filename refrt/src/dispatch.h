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
#include <utility>
#include <vector>

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

// n float16/bfloat16 values (`from`) as float32, and back (`to`, rounded to nearest even): vectorised,
// the values of parity/float16.h's conversions.
void widen_span(DType from, const uint16_t* src, float* dst, int64_t n);
void narrow_span(DType to, const float* src, uint16_t* dst, int64_t n);
// Each of n float32 values rounded to the nearest `to` (float16 / bfloat16) value and kept as float32, in place: what
// narrow_span then widen_span give, without the 16-bit copy (a value handed widened to its readers, keep_widened).
void round_through(DType to, float* data, int64_t n);
// Which float16 conversion those run: "f16c" (AVX2 level and CPUID's F16C) or "portable" (integer code).
const char* half_conversion_path();
// A float32 copy of a float16/bfloat16 tensor (other dtypes: returned as is); over io's pool when given.
Tensor widen_to_float32(const Tensor& t, const KernelIO* io = nullptr);
// `t` (float32) rounded to float16 or bfloat16.
Tensor narrow_from_float32(const Tensor& t, DType to, const KernelIO* io = nullptr);

// Float32 copies of a node's constant float16/bfloat16 inputs (its weights), made once at prepare() so
// that with_float32 does not widen them on every run.
class WidenedConstants {
 public:
  void add(const Tensor& constant) {
    if (is_float16_like(constant.dtype())) copies_.emplace_back(constant, widen_to_float32(constant));
  }
  // The float32 copy of `t` when `t` is a constant given to add() (the same buffer), else nullptr.
  const Tensor* find(const Tensor& t) const {
    for (const auto& [original, copy] : copies_)
      if (original.raw() == t.raw() && original.dtype() == t.dtype()) return &copy;
    return nullptr;
  }

 private:
  std::vector<std::pair<Tensor, Tensor>> copies_;  // the original is held so its buffer stays the same
};

// Runs `body(inputs_as_float32) -> outputs` for a node whose float16/bfloat16 inputs are widened
// and whose float32 outputs are narrowed back to `dtype`. Used by kernels as:
//   if (is_float16_like(x.dtype())) return with_float32(io, x.dtype(), [&](KernelIO& f) { compute(f); });
// The implementation the body names (a GEMM library) is reported as "float32 <name>".
template <typename Body>
void with_float32(KernelIO& io, DType dtype, Body&& body, const WidenedConstants* constants = nullptr) {
  std::vector<Tensor> widened;
  widened.reserve(io.inputs.size());
  KernelIO f;
  f.pool = io.pool;
  for (const Tensor* in : io.inputs) {
    const Tensor* copy = in && constants ? constants->find(*in) : nullptr;
    if (copy) {
      f.inputs.push_back(copy);
    } else if (in && in->dtype() == dtype) {
      widened.push_back(widen_to_float32(*in, &io));
      f.inputs.push_back(&widened.back());
    } else {
      f.inputs.push_back(in);
    }
  }
  f.outputs.resize(io.outputs.size());
  body(f);
  if (!f.impl.empty()) io.impl = intern_impl("float32 " + std::string(f.impl));
  for (size_t i = 0; i < f.outputs.size(); ++i)
    io.outputs[i] = f.outputs[i].dtype() == DType::kFloat32 ? narrow_from_float32(f.outputs[i], dtype, &io)
                                                            : std::move(f.outputs[i]);
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
