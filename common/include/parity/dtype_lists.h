// The dtype lists and the dispatch over them, in one place (refrt's registrations and kernels, the
// element conversions, the comparison, the tests).
#pragma once
#include <cstdint>
#include <vector>

#include "parity/dtype.h"

namespace parity {

// Floating (float16/bfloat16 included), every numeric dtype, and every
// dtype stored as raw bytes (numeric + bool).
inline const std::vector<DType> kFloatingDTypes = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16};
inline const std::vector<DType> kIntegerDTypes = {DType::kInt8,  DType::kInt16,  DType::kInt32,  DType::kInt64,
                                                  DType::kUInt8, DType::kUInt16, DType::kUInt32, DType::kUInt64};
inline const std::vector<DType> kNumericDTypes = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                                                  DType::kInt8,    DType::kInt16,   DType::kInt32,   DType::kInt64,
                                                  DType::kUInt8,   DType::kUInt16,  DType::kUInt32,  DType::kUInt64};
inline const std::vector<DType> kStorableDTypes = {
    DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt8,   DType::kInt16, DType::kInt32,
    DType::kInt64,   DType::kUInt8,   DType::kUInt16,  DType::kUInt32,   DType::kUInt64, DType::kBool};

// Calls `fn(T{})` with the C++ type of `t` for the raw-storage numeric dtypes (bool as uint8_t is
// NOT included: kernels that accept bool handle it explicitly). Returns false for other dtypes.
template <typename Fn>
bool dispatch_numeric(DType t, Fn&& fn) {
  switch (t) {
    case DType::kFloat32:
      fn(float{});
      return true;
    case DType::kFloat64:
      fn(double{});
      return true;
    case DType::kInt8:
      fn(int8_t{});
      return true;
    case DType::kInt16:
      fn(int16_t{});
      return true;
    case DType::kInt32:
      fn(int32_t{});
      return true;
    case DType::kInt64:
      fn(int64_t{});
      return true;
    case DType::kUInt8:
      fn(uint8_t{});
      return true;
    case DType::kUInt16:
      fn(uint16_t{});
      return true;
    case DType::kUInt32:
      fn(uint32_t{});
      return true;
    case DType::kUInt64:
      fn(uint64_t{});
      return true;
    default:
      return false;
  }
}

}  // namespace parity
