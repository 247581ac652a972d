// The fp64 rule (compare.h), against hand-worked numbers: every value is a power of two away from an
// exactly representable centre, so each rmse below is exact and was computed on paper, not by the code.
#include <gtest/gtest.h>
#include <stdlib.h>  // mkdtemp

#include <cmath>
#include <cstring>
#include <filesystem>

#include "parity/tensor_io.h"
#include "parity/verify/compare.h"
#include "parity/verify/report.h"

namespace parity {
namespace {

using json = nlohmann::json;

constexpr double kStep = 1.0 / 65536;  // 2^-16 = 1.53e-5: twice it misses float32's fixed rule (1e-5 + ...)
Tensor constant64(int64_t n, double v) {
  Tensor t(DType::kFloat64, {n});
  for (int64_t i = 0; i < n; ++i) t.data<double>()[i] = v;
  return t;
}

// n float32 values +-amplitude, the sign alternating from + (or from - when `flip`): near zero, where the
// fixed rule has only its atol. Against a float64 reference of 0, the rmse is `amplitude` exactly.
Tensor around_zero(int64_t n, double amplitude, bool flip = false) {
  Tensor t(DType::kFloat32, {n});
  for (int64_t i = 0; i < n; ++i) t.data<float>()[i] = static_cast<float>(((i % 2 == 0) != flip ? 1 : -1) * amplitude);
  return t;
}

TEST(Fp64Rule, NearZeroFixedFailsAndRmseRulePasses) {
  const Tensor eager = around_zero(1000, kStep), actual = around_zero(1000, kStep, true);
  const auto fixed = verify::compare_tensors(eager, actual);
  ASSERT_FALSE(fixed.passed);  // 2^-15 = 3.05e-5 > 1e-5 + 1e-4 * 1.5e-5
  const auto c = verify::compare_with_eager(eager, actual, constant64(1000, 0.0));
  ASSERT_TRUE(c.fp64_rule);
  EXPECT_TRUE(c.passed);
  EXPECT_EQ(c.mismatches, 1000);  // still the fixed rule's count
  EXPECT_FALSE(c.detail);
  EXPECT_EQ(c.fp64_rule->ref_error, kStep);
  EXPECT_EQ(c.fp64_rule->res_error, kStep);
  EXPECT_EQ(c.fp64_rule->multiplier, 2.0);
  EXPECT_DOUBLE_EQ(c.fp64_rule->additive, 1e-6);  // float32 atol / 10
  EXPECT_EQ(verify::fp64_rule_text(*c.fp64_rule),
            "fp64 rule: rmse vs float64 1.53e-05 <= 2 x eager's 1.53e-05 + 1.00e-06");
}

TEST(Fp64Rule, AnErrorFarAboveEagersFailsBothRules) {
  const Tensor eager = around_zero(1000, kStep), actual = around_zero(1000, 8 * kStep, true);
  const auto c = verify::compare_with_eager(eager, actual, constant64(1000, 0.0));
  ASSERT_TRUE(c.fp64_rule);
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.fp64_rule->res_error, 8 * kStep);  // 1.22e-4 > 2 * 1.53e-5 + 1e-6
  EXPECT_FALSE(c.fp64_rule->passed);
  EXPECT_TRUE(c.detail);
  EXPECT_NE(verify::fp64_rule_text(*c.fp64_rule).find(" > 2 x eager's"), std::string::npos);
}

TEST(Fp64Rule, ExactEagerLeavesOnlyTheAdditiveTerm) {
  // Eager equals the float64 run: ref_error 0, so actual may be off by atol / 10 in rmse, no more.
  const Tensor eager = around_zero(1000, 0.0), reference = constant64(1000, 0.0);
  EXPECT_FALSE(verify::compare_with_eager(eager, around_zero(1000, 2 * kStep), reference).passed);  // 3.05e-5 > 1e-6
  EXPECT_FALSE(
      verify::compare_with_eager(eager, around_zero(1000, 2e-6), reference).fp64_rule.has_value());  // fixed passes
}

TEST(Fp64Rule, AReferenceFarFromEagerIsNoOracle) {
  // Eager 1 off its float64 run (a stale or edited file): rmse(reference, eager) = 1 would excuse anything.
  Tensor eager = around_zero(1000, 0.0);
  for (int64_t i = 0; i < 1000; ++i) eager.data<float>()[i] = 1.f;
  const auto c = verify::compare_with_eager(eager, around_zero(1000, 0.0), constant64(1000, 0.0));
  ASSERT_TRUE(c.fp64_rule);
  EXPECT_FALSE(c.passed);
  EXPECT_NE(c.fp64_rule->problem.find("differs from eager"), std::string::npos);
}

TEST(Fp64Rule, SmallTensorsGetMultiplierThree) {
  // res 2.5 * 2^-16 = 3.81e-5: <= 3 * 1.53e-5 + 1e-6 = 4.68e-5, but > 2 * 1.53e-5 + 1e-6 = 3.15e-5.
  const auto small =
      verify::compare_with_eager(around_zero(999, kStep), around_zero(999, 2.5 * kStep, true), constant64(999, 0.0));
  ASSERT_TRUE(small.fp64_rule);
  EXPECT_EQ(small.fp64_rule->multiplier, 3.0);
  EXPECT_TRUE(small.passed);
  const auto large =
      verify::compare_with_eager(around_zero(1000, kStep), around_zero(1000, 2.5 * kStep, true), constant64(1000, 0.0));
  EXPECT_FALSE(large.passed);
}

TEST(Fp64Rule, NanPlacementMustMatch) {
  Tensor eager = around_zero(1000, kStep), actual = around_zero(1000, kStep, true);
  Tensor reference = constant64(1000, 0.0);
  eager.data<float>()[0] = NAN;  // actual has a number there
  const auto c = verify::compare_with_eager(eager, actual, reference);
  ASSERT_TRUE(c.fp64_rule);
  EXPECT_FALSE(c.passed);
  EXPECT_NE(c.fp64_rule->problem.find("NaN"), std::string::npos);
  // NaN on both sides at the same place (the reference too) is left out of the rmse: the rest passes.
  actual.data<float>()[0] = NAN, reference.data<double>()[0] = NAN;
  EXPECT_TRUE(verify::compare_with_eager(eager, actual, reference).passed);
  // Eager finite where the float64 run is not: no oracle there, the rule fails.
  eager.data<float>()[0] = actual.data<float>()[0] = 0.f;
  EXPECT_FALSE(verify::compare_with_eager(eager, actual, reference).passed);
}

TEST(Fp64Rule, ShapeMismatchAndMissingReferenceKeepTheFixedVerdict) {
  const auto shape =
      verify::compare_with_eager(around_zero(1000, kStep), around_zero(999, kStep, true), constant64(1000, 0.0));
  EXPECT_FALSE(shape.passed);
  EXPECT_FALSE(shape.fp64_rule);
  EXPECT_NE(shape.problem.find("shape"), std::string::npos);
  const auto none = verify::compare_with_eager(around_zero(1000, kStep), around_zero(1000, kStep, true), Tensor());
  EXPECT_FALSE(none.passed);
  EXPECT_FALSE(none.fp64_rule);
  const auto wrong_reference =
      verify::compare_with_eager(around_zero(1000, kStep), around_zero(1000, kStep, true), constant64(999, 0.0));
  EXPECT_FALSE(wrong_reference.passed);
  Tensor ints(DType::kInt64, {2}), other(DType::kInt64, {2});
  ints.data<int64_t>()[0] = ints.data<int64_t>()[1] = 1, other.data<int64_t>()[0] = other.data<int64_t>()[1] = 2;
  EXPECT_FALSE(verify::compare_with_eager(ints, other, constant64(2, 1.0)).passed);  // integers: exact only
}

TEST(Fp64Rule, ReadsTheSetsFp64FolderAndRoundTripsInJson) {
  char pattern[] = "/tmp/parity_fp64_XXXXXX";
  const std::filesystem::path dir = mkdtemp(pattern);
  std::filesystem::create_directories(dir / "fp64");
  write_tensor_file((dir / "fp64" / "output_1.pb").string(), constant64(3, 0.5), "y");
  const auto refs = verify::read_fp64_outputs(dir.string(), 3);
  ASSERT_EQ(refs.size(), 3u);
  EXPECT_FALSE(refs[0].defined());
  ASSERT_TRUE(refs[1].defined());
  EXPECT_EQ(refs[1].data<double>()[2], 0.5);
  EXPECT_FALSE(refs[2].defined());
  std::filesystem::remove_all(dir);

  const auto c =
      verify::compare_with_eager(around_zero(1000, kStep), around_zero(1000, kStep, true), constant64(1000, 0.0));
  const json j = c;
  EXPECT_EQ(j["fp64_rule"]["res_error"], kStep);
  EXPECT_EQ(j["fp64_rule"]["passed"], true);
  const auto back = j.get<verify::Comparison>();
  ASSERT_TRUE(back.fp64_rule);
  EXPECT_EQ(json(back), j);
}

TEST(Fp64Rule, ReportCountsAndNamesThePairsThatNeededIt) {
  const json rule = {
      {"passed", true}, {"res_error", 3e-6}, {"ref_error", 2e-6}, {"multiplier", 2.0}, {"additive", 1e-6}};
  const json by_rule = {{"passed", true}, {"mismatches", 2}, {"fp64_rule", rule}};
  const json plain = {{"passed", true}, {"mismatches", 0}};
  json fp64_case = {{"case", "deep"},
                    {"mode", "strict"},
                    {"status", "pass"},
                    {"input_sets",
                     {{{"name", "test_data_set_0"},
                       {"outputs", {{{"index", 0}, {"refrt_vs_eager", by_rule}, {"libtorch_vs_eager", plain}}}}}}}};
  fp64_case["peers"] = {{"ours",
                         {{"refrt", "pass"},
                          {"ort", "pass"},
                          {"ort_detail", {{"status", "pass"}, {"fp64_outputs", 1}, {"fp64_rule", rule}}}}},
                        {"official", {{"export", "ok"}, {"refrt", "pass"}, {"ort", "fail"}}}};
  json other = fp64_case;
  other["case"] = "shallow", other.erase("peers");
  other["input_sets"][0]["outputs"][0]["refrt_vs_eager"] = plain;
  const json report = verify::make_report("t", json::array({fp64_case, other}));
  EXPECT_EQ(report["summary"]["fp64_rule"]["cases"], 1);
  EXPECT_EQ(report["summary"]["fp64_rule"]["ours_refrt"], 1);
  EXPECT_EQ(report["summary"]["fp64_rule"]["ours_ort"], 1);
  EXPECT_EQ(report["summary"]["fp64_rule"]["official_ort"], 0);
  const std::string md = verify::render_markdown(report);
  EXPECT_NE(md.find("1 passed only by the fp64 rule"), std::string::npos) << md;
  EXPECT_NE(md.find("| pass (fp64 rule) |"), std::string::npos) << md;
  EXPECT_NE(md.find("## The fp64 rule"), std::string::npos) << md;
  EXPECT_NE(md.find("rmse vs float64 3.00e-06 <= 2 x eager's 2.00e-06 + 1.00e-06 (test_data_set_0 output 0)"),
            std::string::npos)
      << md;
  // No pair needed it: no count, no section.
  const json plain_report = verify::make_report("t", json::array({other}));
  EXPECT_FALSE(plain_report["summary"].contains("fp64_rule"));
  EXPECT_EQ(verify::render_markdown(plain_report).find("fp64"), std::string::npos);
}

}  // namespace
}  // namespace parity
