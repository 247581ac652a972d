// The one comparison and the element conversions of common/: integers exact (int64 beyond 2^53,
// where doubles cannot tell neighbours apart), float16/bfloat16 round to nearest even (values worked
// out by hand from the IEEE formats), and the tolerance table as common/tolerances.json states it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "parity/compare.h"
#include "parity/dtype_lists.h"
#include "parity/element.h"
#include "parity/error.h"
#include "parity/float16.h"

namespace parity {
namespace {

template <typename T>
Tensor tensor_of(DType dtype, std::vector<T> v) {
  Tensor t(dtype, {static_cast<int64_t>(v.size())});
  std::memcpy(t.mutable_raw(), v.data(), v.size() * sizeof(T));
  return t;
}

TEST(CommonCompare, Int64BeyondTwoTo53DifferingByOneIsUnequal) {
  const int64_t big = (int64_t{1} << 53) + 1;  // as double it rounds to 2^53, its neighbour's value
  ASSERT_EQ(static_cast<double>(big), static_cast<double>(big - 1));
  const auto c = compare_elementwise(tensor_of<int64_t>(DType::kInt64, {big, 7}),
                                     tensor_of<int64_t>(DType::kInt64, {big - 1, 7}), default_tolerance(DType::kInt64));
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.mismatches, 1);
  EXPECT_EQ(c.first_mismatch, 0);
  EXPECT_EQ(c.max_abs_error, 1.0);
  EXPECT_EQ(element_text(tensor_of<int64_t>(DType::kInt64, {big}), 0), "9007199254740993");
  EXPECT_TRUE(
      compare_elementwise(tensor_of<int64_t>(DType::kInt64, {big}), tensor_of<int64_t>(DType::kInt64, {big}), {})
          .passed);
}

TEST(CommonCompare, IntegersIgnoreAnyTolerance) {
  const uint64_t top = ~uint64_t{0};
  const auto c = compare_elementwise(tensor_of<uint64_t>(DType::kUInt64, {top}),
                                     tensor_of<uint64_t>(DType::kUInt64, {top - 1}), Tolerance{10, 10});
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.max_abs_error, 1.0);
}

TEST(CommonCompare, FloatRuleAndNaN) {
  const Tolerance tol{1e-3, 1e-2};
  EXPECT_TRUE(compare_elementwise(tensor_of<float>(DType::kFloat32, {100.f, NAN, INFINITY}),
                                  tensor_of<float>(DType::kFloat32, {101.f, NAN, INFINITY}), tol)
                  .passed);
  const auto c = compare_elementwise(tensor_of<float>(DType::kFloat32, {1.f, NAN, INFINITY, 100.f}),
                                     tensor_of<float>(DType::kFloat32, {1.f, 0.f, -INFINITY, 101.2f}), tol);
  EXPECT_EQ(c.mismatches, 3);
  EXPECT_EQ(c.first_mismatch, 1);
  EXPECT_TRUE(std::isinf(c.max_abs_error));
}

TEST(CommonFloat16, RoundsToNearestEven) {
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(65504.0f), 0x7bff);               // largest finite half
  EXPECT_EQ(float_to_half(65520.0f), 0x7c00);               // halfway to 2^16: rounds to even = inf
  EXPECT_EQ(float_to_half(1.0f + 1.0f / 2048), 0x3c00);     // exactly halfway: ties to the even 1.0
  EXPECT_EQ(float_to_half(1.0f + 3.0f / 2048), 0x3c02);     // halfway above an odd mantissa: up
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(half_to_float(0xfbff), -65504.0f);
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(NAN))));
}

TEST(CommonBFloat16, RoundsToNearestEven) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(float_to_bf16(1.0f + 1.0f / 256), 0x3f80);  // halfway: ties to even
  EXPECT_EQ(float_to_bf16(1.0f + 3.0f / 256), 0x3f82);  // halfway above odd: up
  EXPECT_EQ(bf16_to_float(0xc0a0), -5.0f);
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(NAN))));
}

TEST(CommonElement, ConvertsEveryDtype) {
  EXPECT_EQ(element_as_double(tensor_of<uint16_t>(DType::kFloat16, {0x3e00}), 0), 1.5);
  EXPECT_EQ(element_as_double(tensor_of<uint8_t>(DType::kBool, {2}), 0), 1.0);
  EXPECT_EQ(element_as_int64(tensor_of<int64_t>(DType::kInt64, {INT64_MAX}), 0), INT64_MAX);
  EXPECT_EQ(element_as_int64(tensor_of<float>(DType::kFloat32, {-2.7f}), 0), -2);
  EXPECT_THROW(element_as_int64(tensor_of<float>(DType::kFloat32, {NAN}), 0), Error);
  EXPECT_THROW(element_as_int64(tensor_of<uint64_t>(DType::kUInt64, {~uint64_t{0}}), 0), Error);
  const auto b = element_bytes(DType::kInt8, 300.0);  // saturates
  EXPECT_EQ(static_cast<int8_t>(b[0]), 127);
}

// The table the binary uses is common/tolerances.json, which scenarios/peers.py reads too.
TEST(CommonTolerances, TableIsTheCheckedInJson) {
  std::ifstream in(PARITY_SOURCE_DIR "/common/tolerances.json");
  std::stringstream text;
  text << in.rdbuf();
  const auto file = nlohmann::json::parse(text.str());
  EXPECT_EQ(nlohmann::json::parse(tolerance_table_json()), file);
  for (DType d : kFloatingDTypes) {
    ASSERT_TRUE(file.contains(dtype_name(d))) << dtype_name(d);
    EXPECT_EQ(default_tolerance(d).atol, file[dtype_name(d)]["atol"].get<double>());
    EXPECT_EQ(default_tolerance(d).rtol, file[dtype_name(d)]["rtol"].get<double>());
  }
  EXPECT_EQ(default_tolerance(DType::kBFloat16).rtol, 2e-2);
  for (DType d : kIntegerDTypes) EXPECT_EQ(default_tolerance(d).atol + default_tolerance(d).rtol, 0.0);
}

}  // namespace
}  // namespace parity
