#include "element_values.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "dispatch.h"

namespace parity::refrt {

double element_as_double(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kBool: return t.data<uint8_t>()[i] != 0 ? 1.0 : 0.0;
    case DType::kFloat16: return half_to_float(t.data<uint16_t>()[i]);
    case DType::kBFloat16: return bf16_to_float(t.data<uint16_t>()[i]);
    default: break;
  }
  double v = 0;
  if (!dispatch_numeric(t.dtype(), [&](auto tag) { v = static_cast<double>(t.data<decltype(tag)>()[i]); }))
    throw Error({"refrt"}, "dtype " + dtype_name(t.dtype()) + " has no numeric value");
  return v;
}

int64_t element_as_int64(const Tensor& t, int64_t i, const std::string& what) {
  switch (t.dtype()) {
    case DType::kInt64: return t.data<int64_t>()[i];
    case DType::kInt32: return t.data<int32_t>()[i];
    case DType::kInt16: return t.data<int16_t>()[i];
    case DType::kInt8: return t.data<int8_t>()[i];
    case DType::kUInt8: return t.data<uint8_t>()[i];
    case DType::kUInt16: return t.data<uint16_t>()[i];
    case DType::kUInt32: return t.data<uint32_t>()[i];
    case DType::kBool: return t.data<uint8_t>()[i] != 0;
    case DType::kUInt64: {
      const uint64_t u = t.data<uint64_t>()[i];
      if (u > static_cast<uint64_t>(INT64_MAX)) throw Error({"refrt"}, what + " " + std::to_string(u) + " exceeds int64");
      return static_cast<int64_t>(u);
    }
    default: break;
  }
  const double d = std::trunc(element_as_double(t, i));
  // 2^63 is exactly representable; anything >= it (or NaN) does not fit.
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
    throw Error({"refrt"}, what + " " + std::to_string(element_as_double(t, i)) + " is not a representable integer");
  return static_cast<int64_t>(d);
}

std::vector<unsigned char> element_bytes(DType t, double v) {
  std::vector<unsigned char> out(dtype_size(t));
  auto put = [&](auto x) { std::memcpy(out.data(), &x, sizeof(x)); };
  switch (t) {
    case DType::kBool: put(static_cast<uint8_t>(v != 0)); return out;
    case DType::kFloat16: put(float_to_half(static_cast<float>(v))); return out;
    case DType::kBFloat16: put(float_to_bf16(static_cast<float>(v))); return out;
    default: break;
  }
  if (!dispatch_numeric(t, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_floating_point_v<T>) {
          put(static_cast<T>(v));
        } else {  // out-of-range float to int is undefined in C++: saturate NaN to 0 and clamp
          const double lo = static_cast<double>(std::numeric_limits<T>::min());
          const double hi = static_cast<double>(std::numeric_limits<T>::max());
          put(std::isnan(v) ? T(0) : v <= lo ? std::numeric_limits<T>::min()
                                             : v >= hi ? std::numeric_limits<T>::max() : static_cast<T>(v));
        }
      }))
    throw Error({"refrt"}, "dtype " + dtype_name(t) + " has no numeric value");
  return out;
}

void fill_elements(void* dst, int64_t count, const void* value, size_t elem_size) {
  auto* d = static_cast<unsigned char*>(dst);
  bool all_zero = true;
  for (size_t b = 0; b < elem_size; ++b) all_zero = all_zero && static_cast<const unsigned char*>(value)[b] == 0;
  if (all_zero) {
    std::memset(d, 0, static_cast<size_t>(count) * elem_size);
    return;
  }
  for (int64_t i = 0; i < count; ++i) std::memcpy(d + static_cast<size_t>(i) * elem_size, value, elem_size);
}

}  // namespace parity::refrt
