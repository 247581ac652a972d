// The int8-activation weight-only kernel (refrt/kernels/weight_only_q8.h) names the path that ran: under whatever
// caps the process has (ctest runs this at every PARITY_REFRT_ISA level and with AVX-VNNI masked), the profile label
// names the path the CPU features imply (computed here from cpu_isa.h's facts, not by the kernel's chooser) and the
// only path whose tile kernel counted calls. The values are checked against numpy in
// tests/python/test_weight_only_q8.py.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../../refrt/kernels/weight_only_q8.h"
#include "model_builder.h"
#include "parity/refrt/cpu_isa.h"
#include "parity/refrt/session.h"

namespace parity::refrt {
namespace {

using testing::make;
using testing::ModelBuilder;
using testing::ramp;

std::string weight_only_model() {
  ModelBuilder mb(21);
  mb.input("x", DType::kFloat32, {-1, 64});
  std::vector<int8_t> q(64 * 48);
  for (size_t i = 0; i < q.size(); ++i) q[i] = static_cast<int8_t>(static_cast<int>(i * 7 % 16) - 8);
  mb.initializer("w", make<int8_t>(DType::kInt8, {64, 48}, q));
  std::vector<float> s = ramp(2 * 48, 3);
  for (float& v : s) v = 0.01f + 0.005f * v;
  mb.initializer("ws", make<float>(DType::kFloat32, {2, 48}, s));
  auto* dq = mb.node("DequantizeLinear", {"w", "ws"}, {"wd"}, "dq");
  ModelBuilder::attr(dq, "axis", 0);
  ModelBuilder::attr(dq, "block_size", 32);
  mb.node("MatMul", {"x", "wd"}, {"y"}, "product");
  mb.output("y");
  return mb.bytes();
}

// The path the caps imply: AMX tiles at refrt's amx level for 16 rows and more; VNNI at the avx512_vnni level and up;
// at the avx2 / avx512 levels AVX-VNNI when the (masked) features have it, else AVX2; scalar below.
std::string expected_path(int64_t rows) {
  const IsaLevel level = isa_info().level;
  if (level >= IsaLevel::kAmx && rows >= 16) return "amx";
  if (level >= IsaLevel::kAvx512Vnni) return "avx512_vnni";
  if (level < IsaLevel::kAvx2) return "scalar";
  return cpu_has(CpuFeature::kAvxVnni) ? "avx_vnni" : "avx2";
}

std::string label(const Session& s, int64_t rows) {
  std::vector<float> x = ramp(rows * 64, 11);
  const RunResult r = s.run({make<float>(DType::kFloat32, {rows, 64}, x)}, {.profile = true});
  for (const NodeTiming& t : r.timings)
    if (t.node == "product") return t.impl;
  return "";
}

TEST(WeightOnlyQ8, LabelNamesThePathThatRan) {
  SessionOptions o;
  o.threads = 2;
  o.weight_only_accuracy = 4;
  const auto session = Session::load_bytes(weight_only_model(), "weight_only_q8", o);
  for (int64_t rows : {1, 5, 32, 37}) {
    const std::string want = expected_path(rows);
    q8::probe_reset();
    EXPECT_EQ(label(*session, rows), "refrt weight-only int4 x int8 block 32 (" + want + ")") << rows << " rows";
    const auto counts = q8::probe_counts();
    for (size_t p = 0; p < q8::kPathCount; ++p) {
      const std::string name = q8::path_name(static_cast<q8::Path>(p));
      // amx runs the rows past the last 16 on avx512_vnni
      const bool ran = name == want || (want == "amx" && name == "avx512_vnni" && rows % 16 != 0);
      EXPECT_EQ(counts[p] > 0, ran) << name << " counted " << counts[p] << " calls, " << rows << " rows";
    }
  }
  o.weight_only_accuracy = 0;  // the exact mode: another kernel, another label
  const auto exact = Session::load_bytes(weight_only_model(), "weight_only_q8", o);
  EXPECT_EQ(label(*exact, 1).find(" x int8 "), std::string::npos);
}

}  // namespace
}  // namespace parity::refrt
