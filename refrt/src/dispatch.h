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

namespace parity::refrt {

inline float bf16_to_float(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t float_to_bf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);  // quiet NaN
  bits += 0x7fffu + ((bits >> 16) & 1u);  // round to nearest even
  return static_cast<uint16_t>(bits >> 16);
}

inline float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu, bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);  // inf / NaN
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {  // subnormal: normalise
    int e = -1;
    do { ++e; mant <<= 1; } while ((mant & 0x400u) == 0);
    bits = sign | (static_cast<uint32_t>(112 - e) << 23) | ((mant & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t float_to_half(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs = bits & 0x7fffffffu;
  if (abs > 0x7f800000u) return sign | 0x7e00u;          // NaN
  if (abs >= 0x477ff000u) return sign | 0x7c00u;         // rounds to >= 65520: inf
  if (abs >= 0x38800000u) {                              // normal half
    const uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u);
    return sign | static_cast<uint16_t>((rounded - 0x38000000u) >> 13);
  }
  if (abs < 0x33000000u) return sign;                    // below half the smallest subnormal: 0
  // Subnormal half: shift the full mantissa into place with round to nearest even.
  const uint32_t exp = abs >> 23, mant = (abs & 0x7fffffu) | 0x800000u;
  const uint32_t shift = 126 - exp;  // 14..24
  const uint32_t half_mant = mant >> shift, rest = mant & ((1u << shift) - 1), halfway = 1u << (shift - 1);
  uint32_t out = half_mant;
  if (rest > halfway || (rest == halfway && (half_mant & 1u))) ++out;
  return sign | static_cast<uint16_t>(out);
}

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
    io.outputs[i] = f.outputs[i].dtype() == DType::kFloat32 ? narrow_from_float32(f.outputs[i], dtype) : std::move(f.outputs[i]);
}

// Calls `fn(T{})` with the C++ type of `t` for the raw-storage numeric dtypes (bool as uint8_t is
// NOT included: kernels that accept bool handle it explicitly). Returns false for other dtypes.
template <typename Fn>
bool dispatch_numeric(DType t, Fn&& fn) {
  switch (t) {
    case DType::kFloat32: fn(float{}); return true;
    case DType::kFloat64: fn(double{}); return true;
    case DType::kInt8: fn(int8_t{}); return true;
    case DType::kInt16: fn(int16_t{}); return true;
    case DType::kInt32: fn(int32_t{}); return true;
    case DType::kInt64: fn(int64_t{}); return true;
    case DType::kUInt8: fn(uint8_t{}); return true;
    case DType::kUInt16: fn(uint16_t{}); return true;
    case DType::kUInt32: fn(uint32_t{}); return true;
    case DType::kUInt64: fn(uint64_t{}); return true;
    default: return false;
  }
}

// Same for float32/float64 only.
template <typename Fn>
bool dispatch_float(DType t, Fn&& fn) {
  switch (t) {
    case DType::kFloat32: fn(float{}); return true;
    case DType::kFloat64: fn(double{}); return true;
    default: return false;
  }
}

inline const std::vector<DType> kFloatTypes16 = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16};
inline const std::vector<DType> kAllNumericTypes = {
    DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt8,  DType::kInt16,
    DType::kInt32,   DType::kInt64,   DType::kUInt8,   DType::kUInt16,   DType::kUInt32, DType::kUInt64};

}  // namespace parity::refrt
