// Test helper: element-wise comparison of a refrt result with an expected tensor (numpy oracle).
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "parity/tensor.h"

namespace parity::testing {

template <typename T>
::testing::AssertionResult close_values(const Tensor& got, const Tensor& want, double rtol, double atol) {
  const T* g = got.data<T>();
  const T* w = want.data<T>();
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double a = static_cast<double>(g[i]), b = static_cast<double>(w[i]);
    const bool ok = (std::isnan(a) && std::isnan(b)) || a == b || std::fabs(a - b) <= atol + rtol * std::fabs(b);
    if (!ok) return ::testing::AssertionFailure() << "element " << i << ": got " << a << ", want " << b;
  }
  return ::testing::AssertionSuccess();
}

// A float16 / bfloat16 bit pattern as double (exact; written here, independent of refrt's helpers).
inline double float16_bits_to_double(uint16_t h, bool bfloat) {
  if (bfloat) {
    const uint32_t bits = uint32_t(h) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  const int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (exp == 0x1f) return mant ? std::nan("") : sign * INFINITY;
  return sign * (exp ? std::ldexp(1024 + mant, exp - 25) : std::ldexp(mant, -24));
}

inline ::testing::AssertionResult close_float16(const Tensor& got, const Tensor& want, double rtol, double atol) {
  const bool bfloat = want.dtype() == DType::kBFloat16;
  const uint16_t* g = got.data<uint16_t>();
  const uint16_t* w = want.data<uint16_t>();
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double a = float16_bits_to_double(g[i], bfloat), b = float16_bits_to_double(w[i], bfloat);
    const bool ok = (std::isnan(a) && std::isnan(b)) || a == b || std::fabs(a - b) <= atol + rtol * std::fabs(b);
    if (!ok) return ::testing::AssertionFailure() << "element " << i << ": got " << a << ", want " << b;
  }
  return ::testing::AssertionSuccess();
}

// Same dtype and shape; floats (float16 and bfloat16 too) within atol + rtol * |want|, everything
// else bit-exact (bools compared as truthiness).
inline ::testing::AssertionResult tensors_close(const Tensor& got, const Tensor& want, double rtol, double atol) {
  if (got.dtype() != want.dtype())
    return ::testing::AssertionFailure() << "dtype " << dtype_name(got.dtype()) << ", want "
                                         << dtype_name(want.dtype());
  if (got.shape() != want.shape())
    return ::testing::AssertionFailure() << "shape " << shape_str(got.shape()) << ", want " << shape_str(want.shape());
  switch (want.dtype()) {
    case DType::kFloat32:
      return close_values<float>(got, want, rtol, atol);
    case DType::kFloat64:
      return close_values<double>(got, want, rtol, atol);
    case DType::kFloat16:
    case DType::kBFloat16:
      return close_float16(got, want, rtol, atol);
    case DType::kBool:
      for (int64_t i = 0; i < want.numel(); ++i)
        if ((got.data<uint8_t>()[i] != 0) != (want.data<uint8_t>()[i] != 0))
          return ::testing::AssertionFailure() << "bool element " << i << " differs";
      return ::testing::AssertionSuccess();
    default:
      if (got.bitwise_equal(want)) return ::testing::AssertionSuccess();
      return ::testing::AssertionFailure() << dtype_name(want.dtype()) << " values differ";
  }
}

}  // namespace parity::testing
