// Element types. Numbering = ONNX TensorProto.DataType, so values cross the ONNX boundary unchanged.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace parity {

enum class DType : int32_t {
  kUndefined = 0,
  kFloat32 = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kFloat64 = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kBFloat16 = 16,
};

// Size of one element in bytes; 0 for kUndefined/kString (not storable as raw bytes).
size_t dtype_size(DType t);
// "float32", "int64", ...; "dtype(<n>)" for unknown values.
std::string dtype_name(DType t);
// Whether `v` is one of the enum values above that Parity stores as raw bytes.
bool dtype_is_supported(int32_t v);
bool dtype_is_floating(DType t);

}  // namespace parity
