// The CPU features refrt reads (cpu_isa.h): CPUID's answer against /proc/cpuinfo (the kernel's reading, an
// independent oracle), the level each feature set reaches, and the test-only mask PARITY_REFRT_MASK_FEATURES:
// with a feature masked, every path that depends on it is not taken (ctest runs this file once per mask,
// tests/refrt/CMakeLists.txt; without a mask the same checks see the paths taken where the CPU has them).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "../../refrt/kernels/dnnl_common.h"
#include "../../refrt/src/dispatch.h"
#include "../../refrt/src/vmath.h"
#include "parity/float16.h"
#include "parity/refrt/cpu_isa.h"

namespace parity::refrt {
namespace {

std::set<std::string> cpuinfo_flags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("flags", 0) == 0) {
      std::istringstream words(line.substr(line.find(':') + 1));
      std::set<std::string> flags;
      for (std::string w; words >> w;) flags.insert(w);
      return flags;
    }
  return {};
}

std::set<std::string> masked_names() {
  std::set<std::string> out;
  const char* v = std::getenv("PARITY_REFRT_MASK_FEATURES");
  std::stringstream ss(v ? v : "");
  for (std::string name; std::getline(ss, name, ',');)
    if (!name.empty()) out.insert(name);
  return out;
}

CpuFeatures all_but(std::initializer_list<CpuFeature> absent) {
  CpuFeatures f;
  f.bits.fill(true);
  for (CpuFeature x : absent) f.set(x, false);
  return f;
}

TEST(CpuFeatures, CpuidAgreesWithProcCpuinfo) {
  const std::set<std::string> flags = cpuinfo_flags();
  if (flags.empty()) GTEST_SKIP() << "no /proc/cpuinfo flags line (not Linux x86-64)";
  const CpuFeatures f = read_cpu_features();
  for (size_t i = 0; i < kCpuFeatureCount; ++i) {
    const auto feature = static_cast<CpuFeature>(i);
    std::string flag = feature_name(feature);
    if (flag == "lzcnt") flag = "abm";  // the kernel's name for LZCNT
    EXPECT_EQ(f.has(feature), flags.count(flag) == 1) << flag;
  }
}

TEST(CpuFeatures, NamesRoundTrip) {
  for (size_t i = 0; i < kCpuFeatureCount; ++i)
    EXPECT_EQ(parse_feature(feature_name(static_cast<CpuFeature>(i))), static_cast<CpuFeature>(i));
  EXPECT_FALSE(parse_feature("AVX2"));
}

TEST(CpuFeatures, EachLevelNeedsEveryExtensionItsKernelsUse) {
  using F = CpuFeature;
  EXPECT_EQ(isa_of(all_but({}), true), IsaLevel::kAmx);
  EXPECT_EQ(isa_of(all_but({}), false), IsaLevel::kAvx512Bf16);  // AMX without the kernel's grant
  EXPECT_EQ(isa_of(all_but({F::kAmxInt8}), true), IsaLevel::kAvx512Bf16);
  EXPECT_EQ(isa_of(all_but({F::kAvx512Bf16}), true), IsaLevel::kAvx512Vnni);
  EXPECT_EQ(isa_of(all_but({F::kAvx512Vnni}), true), IsaLevel::kAvx512);
  EXPECT_EQ(isa_of(all_but({F::kAvx512dq}), true), IsaLevel::kAvx2);
  EXPECT_EQ(isa_of(all_but({F::kAvx512vl}), true), IsaLevel::kAvx2);
  EXPECT_EQ(isa_of(all_but({F::kFma}), true), IsaLevel::kScalar);
  EXPECT_EQ(isa_of(all_but({F::kAvx}), true), IsaLevel::kScalar);
  EXPECT_EQ(isa_of(all_but({F::kPopcnt}), true), IsaLevel::kScalar);
  // F16C, BMI and AVX-VNNI are not part of a level: the paths that use them check them apart.
  EXPECT_EQ(isa_of(all_but({F::kF16c, F::kBmi2, F::kAvxVnni}), true), IsaLevel::kAmx);
}

TEST(CpuFeatures, MaskRemovesNamedFeaturesAndRefusesUnknownNames) {
  std::string error;
  const CpuFeatures f = mask_features(all_but({}), "f16c,,avx_vnni", &error);
  EXPECT_TRUE(error.empty()) << error;
  EXPECT_FALSE(f.has(CpuFeature::kF16c));
  EXPECT_FALSE(f.has(CpuFeature::kAvxVnni));
  EXPECT_TRUE(f.has(CpuFeature::kAvx2));
  mask_features(all_but({}), "f16c,sse5", &error);
  EXPECT_NE(error.find("'sse5', which is not a feature"), std::string::npos) << error;
}

// The process's features are CPUID's minus the mask, and each dependent path follows them: run plain and
// with PARITY_REFRT_MASK_FEATURES=f16c / =avx_vnni (with PARITY_REFRT_ISA=avx2) / =fma by ctest.
TEST(CpuFeatureMask, DependentPathsFollowTheMask) {
  const std::set<std::string> masked = masked_names();
  const CpuFeatures raw = read_cpu_features();
  for (size_t i = 0; i < kCpuFeatureCount; ++i) {
    const auto f = static_cast<CpuFeature>(i);
    EXPECT_EQ(cpu_has(f), raw.has(f) && masked.count(feature_name(f)) == 0) << feature_name(f);
  }
  if (masked.count("fma")) {
    EXPECT_EQ(isa_level(), IsaLevel::kScalar);
  }
  const bool avx2 = isa_allows(IsaLevel::kAvx2);
  // float16 conversions: F16C only where CPUID says so.
  EXPECT_STREQ(half_conversion_path(), avx2 && cpu_has(CpuFeature::kF16c) ? "f16c" : "portable");
  if (masked.count("f16c")) {
    EXPECT_STREQ(half_conversion_path(), "portable");
  } else if (avx2 && raw.has(CpuFeature::kF16c)) {
    EXPECT_STREQ(half_conversion_path(), "f16c");
  }
  // vmath's Haswell build: F16C, BMI1/2, LZCNT and MOVBE too; its AVX-512 build on top of that at refrt's AVX-512
  // level.
  const bool haswell = avx2 && cpu_has(CpuFeature::kF16c) && cpu_has(CpuFeature::kBmi1) && cpu_has(CpuFeature::kBmi2) &&
                       cpu_has(CpuFeature::kLzcnt) && cpu_has(CpuFeature::kMovbe);
  const bool avx512 = haswell && isa_allows(IsaLevel::kAvx512);
  EXPECT_STREQ(vmath::path(), avx512 ? "avx512" : haswell ? "haswell" : "portable");
  EXPECT_EQ(vmath::variants().size(), avx512 ? 3u : haswell ? 2u : 1u);
  // AVX-VNNI counts for int8 only at the avx2 level, and only when CPUID (and oneDNN's cap) has it.
  if (isa_info().level == IsaLevel::kAvx2) {
    EXPECT_EQ(dnnl_common::has_vnni(),
              cpu_has(CpuFeature::kAvxVnni) && dnnl_common::onednn_allows(dnnl::cpu_isa::avx2_vnni));
    if (masked.count("avx_vnni")) {
      EXPECT_FALSE(dnnl_common::has_vnni());
    }
  }
  // Whichever path converts, the values are Eigen's (parity/float16.h): every float16 bit pattern widens
  // exactly, and a sweep of floats (ties, subnormals, overflow, NaN) narrows to nearest-even.
  std::vector<uint16_t> bits(65536);
  for (size_t i = 0; i < bits.size(); ++i) bits[i] = static_cast<uint16_t>(i);
  std::vector<float> wide(bits.size());
  widen_span(DType::kFloat16, bits.data(), wide.data(), static_cast<int64_t>(bits.size()));
  for (size_t i = 0; i < bits.size(); ++i) {
    const float want = half_to_float(bits[i]);
    if (std::isnan(want))
      EXPECT_TRUE(std::isnan(wide[i])) << i;
    else
      EXPECT_EQ(wide[i], want) << i;
  }
  std::vector<float> floats;
  for (float x = 1e-8f; x < 1e5f; x *= 1.0009765625f) floats.insert(floats.end(), {x, -x, x * 0.5f + 0.25f});
  floats.insert(floats.end(), {0.0f, -0.0f, 65504.0f, 65520.0f, 1e9f, std::nanf(""), -INFINITY, 2049.0f, 2051.0f});
  std::vector<uint16_t> narrow(floats.size());
  narrow_span(DType::kFloat16, floats.data(), narrow.data(), static_cast<int64_t>(floats.size()));
  for (size_t i = 0; i < floats.size(); ++i) {
    if (std::isnan(floats[i])) {
      EXPECT_TRUE(std::isnan(half_to_float(narrow[i]))) << i;
    } else {
      EXPECT_EQ(narrow[i], float_to_half(floats[i])) << floats[i];
    }
  }
}

// vmath's AVX-512 build is the Haswell build's per-element formulas on wider vectors: both must give the same bits for
// every function (a NaN may come out with the other sign: x * sigmoid(x) of a NaN is a product of two NaNs, and x86
// returns the first operand's, which the compiler may order either way), on values across exp's range and past it,
// specials (NaN, infinities, -0, subnormals), and lengths that leave every tail size of both vector widths. (Each
// build's accuracy against the exact values is the case tables' job, run at every refrt level.) Runs where the CPU has
// both builds.
TEST(CpuFeatures, VmathAvx512AndHaswellBuildsAgreeBitForBit) {
  const std::vector<vmath::Variant>& all = vmath::variants();
  if (all.size() < 3) GTEST_SKIP() << "vmath runs " << vmath::path() << " here: no AVX-512 build to compare";
  const vmath::Variant &wide = all[2], &narrow = all[1];
  ASSERT_STREQ(wide.name, "avx512");
  ASSERT_STREQ(narrow.name, "haswell");
  std::vector<float> x;
  for (float v = -120.0f; v <= 120.0f; v += 0.01171875f) x.push_back(v);
  const float inf = std::numeric_limits<float>::infinity();
  for (float v : {std::numeric_limits<float>::quiet_NaN(), inf, -inf, -0.0f, 0.0f, 1e-40f, -1e-40f, 88.72f, -103.9f,
                  3e38f, -3e38f})
    x.insert(x.begin() + static_cast<std::ptrdiff_t>(x.size() / 2), v);
  auto same = [](const std::vector<float>& a, const std::vector<float>& b, const char* what, size_t n) {
    for (size_t i = 0; i < a.size(); ++i)
      ASSERT_TRUE(std::memcmp(&a[i], &b[i], sizeof(float)) == 0 || (std::isnan(a[i]) && std::isnan(b[i])))
          << what << " differs at " << i << " of " << n << ": " << a[i] << " (avx512) vs " << b[i] << " (haswell)";
  };
  for (size_t n : {size_t{1}, size_t{7}, size_t{8}, size_t{15}, size_t{17}, size_t{31}, size_t{33}, x.size()}) {
    const std::vector<float> in(x.end() - static_cast<std::ptrdiff_t>(n), x.end());
    std::vector<float> a(n), b(n);
    wide.exp(in.data(), a.data(), static_cast<int64_t>(n));
    narrow.exp(in.data(), b.data(), static_cast<int64_t>(n));
    same(a, b, "exp", n);
    wide.erf(in.data(), a.data(), static_cast<int64_t>(n));
    narrow.erf(in.data(), b.data(), static_cast<int64_t>(n));
    same(a, b, "erf", n);
    wide.softmax_row(in.data(), a.data(), static_cast<int64_t>(n));
    narrow.softmax_row(in.data(), b.data(), static_cast<int64_t>(n));
    same(a, b, "softmax_row", n);
    for (auto [fn_wide, fn_narrow, what] :
         {std::tuple{wide.sigmoid, narrow.sigmoid, "sigmoid"}, std::tuple{wide.silu, narrow.silu, "silu"}}) {
      a = in, b = in;
      fn_wide(a.data(), static_cast<int64_t>(n));
      fn_narrow(b.data(), static_cast<int64_t>(n));
      same(a, b, what, n);
    }
    a = in, b = in;
    wide.gelu_erf(a.data(), static_cast<int64_t>(n), 0.70710678f, 0.5f, 1.0f);
    narrow.gelu_erf(b.data(), static_cast<int64_t>(n), 0.70710678f, 0.5f, 1.0f);
    same(a, b, "gelu_erf", n);
    // exp_sum_shifted takes a row at or below its max: the values above 0 lowered to 0 (NaN kept), max 0.
    for (size_t i = 0; i < n; ++i) a[i] = b[i] = in[i] > 0.0f ? 0.0f : in[i];
    const float sum_wide = wide.exp_sum_shifted(a.data(), static_cast<int64_t>(n), 0.0f);
    const float sum_narrow = narrow.exp_sum_shifted(b.data(), static_cast<int64_t>(n), 0.0f);
    same(a, b, "exp_sum_shifted", n);
    same({sum_wide}, {sum_narrow}, "exp_sum_shifted's sum", n);
  }
}

}  // namespace
}  // namespace parity::refrt
