#include "parity/element.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "parity/dtype_lists.h"
#include "parity/error.h"
#include "parity/float16.h"

namespace parity {
namespace {

[[noreturn]] void not_numeric(DType t) { throw Error({"element"}, "dtype " + dtype_name(t) + " has no numeric value"); }

}  // namespace

double element_as_double(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kBool:
      return static_cast<const uint8_t*>(t.raw())[i] != 0 ? 1.0 : 0.0;
    case DType::kFloat16:
      return half_to_float(static_cast<const uint16_t*>(t.raw())[i]);
    case DType::kBFloat16:
      return bf16_to_float(static_cast<const uint16_t*>(t.raw())[i]);
    default:
      break;
  }
  double v = 0;
  if (!dispatch_numeric(t.dtype(),
                        [&](auto tag) { v = static_cast<double>(static_cast<const decltype(tag)*>(t.raw())[i]); }))
    not_numeric(t.dtype());
  return v;
}

int64_t element_as_int64(const Tensor& t, int64_t i, const std::string& what) {
  switch (t.dtype()) {
    case DType::kInt64:
      return static_cast<const int64_t*>(t.raw())[i];
    case DType::kUInt64: {
      const uint64_t u = static_cast<const uint64_t*>(t.raw())[i];
      if (u > static_cast<uint64_t>(INT64_MAX))
        throw Error({"element"}, what + " " + std::to_string(u) + " exceeds int64");
      return static_cast<int64_t>(u);
    }
    default:
      break;
  }
  // bool and integers up to 32 bits are exact as double.
  if (!dtype_is_floating(t.dtype())) return static_cast<int64_t>(element_as_double(t, i));
  const double d = std::trunc(element_as_double(t, i));
  // 2^63 is exactly representable; anything >= it (or NaN) does not fit.
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
    throw Error({"element"}, what + " " + std::to_string(element_as_double(t, i)) + " is not a representable integer");
  return static_cast<int64_t>(d);
}

std::vector<unsigned char> element_bytes(DType t, double v) {
  std::vector<unsigned char> out(dtype_size(t));
  auto put = [&](auto x) { std::memcpy(out.data(), &x, sizeof(x)); };
  switch (t) {
    case DType::kBool:
      put(static_cast<uint8_t>(v != 0));
      return out;
    case DType::kFloat16:
      put(float_to_half(static_cast<float>(v)));
      return out;
    case DType::kBFloat16:
      put(float_to_bf16(static_cast<float>(v)));
      return out;
    default:
      break;
  }
  if (!dispatch_numeric(t, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_floating_point_v<T>) {
          put(static_cast<T>(v));
        } else {  // out-of-range float to int is undefined in C++: saturate NaN to 0 and clamp
          const double lo = static_cast<double>(std::numeric_limits<T>::min());
          const double hi = static_cast<double>(std::numeric_limits<T>::max());
          put(std::isnan(v) ? T(0)
              : v <= lo     ? std::numeric_limits<T>::min()
              : v >= hi     ? std::numeric_limits<T>::max()
                            : static_cast<T>(v));
        }
      }))
    not_numeric(t);
  return out;
}

}  // namespace parity
