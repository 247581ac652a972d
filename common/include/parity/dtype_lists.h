// The dtype lists, in one place (refrt's registrations and dispatch, the comparison, the tests).
#pragma once
#include <vector>

#include "parity/dtype.h"

namespace parity {

// Floating (float16/bfloat16 included), every numeric dtype, and every
// dtype stored as raw bytes (numeric + bool).
inline const std::vector<DType> kFloatingDTypes = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16};
inline const std::vector<DType> kIntegerDTypes = {DType::kInt8,  DType::kInt16,  DType::kInt32,  DType::kInt64,
                                                  DType::kUInt8, DType::kUInt16, DType::kUInt32, DType::kUInt64};
inline const std::vector<DType> kNumericDTypes = {
    DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt8,  DType::kInt16,
    DType::kInt32,   DType::kInt64,   DType::kUInt8,   DType::kUInt16,   DType::kUInt32, DType::kUInt64};
inline const std::vector<DType> kStorableDTypes = {
    DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt8,   DType::kInt16, DType::kInt32,
    DType::kInt64,   DType::kUInt8,   DType::kUInt16,  DType::kUInt32,   DType::kUInt64, DType::kBool};

}  // namespace parity
