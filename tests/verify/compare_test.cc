// Comparator: tolerance rule, NaN/Inf handling, shape/dtype problems, float16 decoding.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "parity/verify/compare.h"

namespace parity {
namespace {

Tensor floats(std::vector<float> v) {
  Tensor t(DType::kFloat32, {static_cast<int64_t>(v.size())});
  std::memcpy(t.mutable_raw(), v.data(), v.size() * sizeof(float));
  return t;
}

TEST(Compare, ToleranceIsAtolPlusRtolTimesExpected) {
  const verify::Tolerance tol{1e-3, 1e-2};
  // |a - e| <= 1e-3 + 1e-2 * |e|: 100 -> 101 allowed (1.0 <= 1.001), 101.2 not.
  EXPECT_TRUE(verify::compare_tensors(floats({100.f}), floats({101.f}), tol).passed);
  const auto c = verify::compare_tensors(floats({100.f, 0.f}), floats({101.2f, 0.0005f}), tol);
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.mismatches, 1);
  EXPECT_NEAR(c.max_abs_error, 1.2, 1e-4);
  EXPECT_NEAR(c.max_rel_error, 0.012, 1e-6);
}

TEST(Compare, NanMatchesNanOnly) {
  EXPECT_TRUE(verify::compare_tensors(floats({NAN, 1.f}), floats({NAN, 1.f})).passed);
  EXPECT_FALSE(verify::compare_tensors(floats({NAN}), floats({0.f})).passed);
  EXPECT_FALSE(verify::compare_tensors(floats({INFINITY}), floats({-INFINITY})).passed);
}

TEST(Compare, ShapeOrDtypeMismatchIsAProblem) {
  const auto c = verify::compare_tensors(floats({1.f, 2.f}), floats({1.f}));
  EXPECT_FALSE(c.passed);
  EXPECT_NE(c.problem.find("shape"), std::string::npos);
  Tensor d(DType::kFloat64, {1});
  d.data<double>()[0] = 1;
  EXPECT_NE(verify::compare_tensors(floats({1.f}), d).problem.find("dtype"), std::string::npos);
}

TEST(Compare, HistogramHasFixedDecadeBins) {
  // Errors: 0, 0.5, 3, NaN vs 0, 0.25.
  const auto c = verify::compare_tensors(floats({1.f, 1.f, 1.f, NAN, 0.f}), floats({1.f, 1.5f, 4.f, 0.f, 0.25f}));
  const auto& edges = verify::histogram_edges();
  ASSERT_EQ(edges.size(), 11u);
  ASSERT_EQ(c.histogram.size(), 12u);
  EXPECT_EQ(c.histogram[0], 1);   // exact
  EXPECT_EQ(c.histogram[9], 0);   // (1e-2, 1e-1]
  EXPECT_EQ(c.histogram[10], 2);  // (1e-1, 1]: 0.5 and 0.25
  EXPECT_EQ(c.histogram[11], 2);  // > 1 and the NaN disagreement
  int64_t total = 0;
  for (auto n : c.histogram) total += n;
  EXPECT_EQ(total, c.numel);
  EXPECT_EQ(verify::histogram_bin(1e-9), 1u);
  EXPECT_EQ(verify::histogram_bin(1.5e-9), 2u);
  EXPECT_EQ(verify::histogram_bin(INFINITY), 11u);
}

TEST(Compare, IntegersAreExact) {
  Tensor a(DType::kInt64, {2}), b(DType::kInt64, {2});
  a.data<int64_t>()[0] = b.data<int64_t>()[0] = 5;
  a.data<int64_t>()[1] = 6;
  b.data<int64_t>()[1] = 7;
  EXPECT_EQ(verify::compare_tensors(a, b).mismatches, 1);
}

TEST(Compare, Float16AndBFloat16Decode) {
  Tensor h(DType::kFloat16, {3}), bf(DType::kBFloat16, {1});
  const uint16_t hv[3] = {0x3C00, 0xC000, 0x0001};  // 1.0, -2.0, smallest subnormal
  std::memcpy(h.mutable_raw(), hv, sizeof hv);
  EXPECT_EQ(verify::element_as_double(h, 0), 1.0);
  EXPECT_EQ(verify::element_as_double(h, 1), -2.0);
  EXPECT_EQ(verify::element_as_double(h, 2), std::ldexp(1.0, -24));
  bf.data<uint16_t>()[0] = 0x3FC0;  // 1.5
  EXPECT_EQ(verify::element_as_double(bf, 0), 1.5);
}

}  // namespace
}  // namespace parity
