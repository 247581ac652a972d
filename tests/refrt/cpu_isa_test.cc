// The ISA decision (cpu_isa.h): cap parsing, a cap above the CPU, a misspelt cap; and that the
// process's level is the cap the ctest entry asked for (PARITY_REFRT_ISA), with the kernels following it.
#include <gtest/gtest.h>

#include <cstdlib>

#include "../../refrt/kernels/conv_gemm.h"
#include "parity/error.h"
#include "parity/refrt/cpu_isa.h"

namespace parity::refrt {
namespace {

TEST(CpuIsa, NamesRoundTrip) {
  for (IsaLevel level : isa_levels()) EXPECT_EQ(parse_isa_level(isa_name(level)), level);
  EXPECT_FALSE(parse_isa_level("AVX2"));
  EXPECT_FALSE(parse_isa_level("sse4"));
  EXPECT_STREQ(isa_name(IsaLevel::kAvx512Vnni), "avx512_vnni");
}

TEST(CpuIsa, UnsetOrNativeIsTheCpusLevel) {
  for (const char* value : {static_cast<const char*>(nullptr), "", "native"}) {
    const IsaInfo info = decide_isa(IsaLevel::kAvx512, value);
    EXPECT_EQ(info.level, IsaLevel::kAvx512);
    EXPECT_FALSE(info.cap);
    EXPECT_TRUE(info.note.empty());
    EXPECT_TRUE(info.error.empty());
  }
}

TEST(CpuIsa, CapBelowTheCpuLowersTheLevel) {
  const IsaInfo info = decide_isa(IsaLevel::kAvx512Vnni, "avx2");
  EXPECT_EQ(info.level, IsaLevel::kAvx2);
  EXPECT_EQ(info.cap, IsaLevel::kAvx2);
  EXPECT_TRUE(info.note.empty());
  EXPECT_EQ(decide_isa(IsaLevel::kAvx2, "scalar").level, IsaLevel::kScalar);
}

TEST(CpuIsa, CapAboveTheCpuRunsAtTheCpusLevelWithANote) {
  const IsaInfo info = decide_isa(IsaLevel::kAvx2, "avx512_bf16");
  EXPECT_EQ(info.level, IsaLevel::kAvx2);
  EXPECT_EQ(info.cap, IsaLevel::kAvx512Bf16);
  EXPECT_NE(info.note.find("above this CPU's level (avx2)"), std::string::npos) << info.note;
  EXPECT_NE(info.note.find("not tested"), std::string::npos) << info.note;
}

TEST(CpuIsa, UnknownCapIsAnErrorNamingTheLevels) {
  const IsaInfo info = decide_isa(IsaLevel::kAvx2, "avx3");
  EXPECT_NE(info.error.find("'avx3' is not an ISA level"), std::string::npos) << info.error;
  EXPECT_NE(info.error.find("avx512_vnni"), std::string::npos) << info.error;
}

// Run by the per-cap ctest entries (refrt_cases_isa_<level>) and by the plain run (no cap).
TEST(CpuIsa, ProcessLevelIsTheRequestedCap) {
  const char* value = std::getenv("PARITY_REFRT_ISA");
  const IsaInfo& info = isa_info();
  EXPECT_EQ(info.cpu, detect_cpu_isa());
  if (value == nullptr || *value == '\0' || std::string(value) == "native") {
    EXPECT_EQ(isa_level(), info.cpu);
  } else {
    const auto cap = parse_isa_level(value);
    ASSERT_TRUE(cap) << "the test runs with a misspelt PARITY_REFRT_ISA=" << value;
    EXPECT_EQ(isa_level(), std::min(*cap, info.cpu));
  }
  // The kernels follow the decision: the AVX2 conv GEMM is off below avx2.
  EXPECT_EQ(conv_gemm::available(), isa_level() >= IsaLevel::kAvx2);
  EXPECT_EQ(isa_allows(IsaLevel::kScalar), true);
}

}  // namespace
}  // namespace parity::refrt
