#include "parity/dtype_lists.h"

namespace parity {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::kFloat32:
    case DType::kInt32:
    case DType::kUInt32:
      return 4;
    case DType::kFloat64:
    case DType::kInt64:
    case DType::kUInt64:
      return 8;
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kInt16:
    case DType::kUInt16:
      return 2;
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kBool:
      return 1;
    default:
      return 0;
  }
}

std::string dtype_name(DType t) {
  switch (t) {
    case DType::kFloat32:
      return "float32";
    case DType::kFloat64:
      return "float64";
    case DType::kFloat16:
      return "float16";
    case DType::kBFloat16:
      return "bfloat16";
    case DType::kInt8:
      return "int8";
    case DType::kInt16:
      return "int16";
    case DType::kInt32:
      return "int32";
    case DType::kInt64:
      return "int64";
    case DType::kUInt8:
      return "uint8";
    case DType::kUInt16:
      return "uint16";
    case DType::kUInt32:
      return "uint32";
    case DType::kUInt64:
      return "uint64";
    case DType::kBool:
      return "bool";
    case DType::kString:
      return "string";
    default:
      return "dtype(" + std::to_string(static_cast<int>(t)) + ")";
  }
}

bool dtype_is_supported(int32_t v) { return dtype_size(static_cast<DType>(v)) != 0; }

bool dtype_is_floating(DType t) {
  for (DType f : kFloatingDTypes)
    if (f == t) return true;
  return false;
}

}  // namespace parity
