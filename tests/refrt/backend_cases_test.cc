// Runs the cases written by gen_backend_cases.py (ONNX backend-test layout, numpy as the oracle)
// on refrt. The cases are generated into the build tree before this binary is built.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "parity/error.h"
#include "parity/refrt/cpu_isa.h"
#include "parity/refrt/session.h"
#include "parity/refrt/value.h"
#include "parity/tensor_io.h"
#include "tensor_expect.h"

namespace parity {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(REFRT_CASES_DIR, ec))
    if (entry.is_directory()) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  if (names.empty()) names.push_back("no_cases_generated");  // fails below with a clear message
  return names;
}

// Under a PARITY_REFRT_ISA cap above this CPU's level the cases would run the lower path and pass:
// the binary says so and exits with kExitNotTested (5), which the per-cap ctest entries report as skipped.
class IsaCapCheck : public ::testing::Environment {
 public:
  void SetUp() override {
    const refrt::IsaInfo& isa = refrt::isa_info();
    if (isa.error.empty() && isa.cap && *isa.cap > isa.cpu) {
      std::cout << "NOT TESTED: " << isa.note << std::endl;
      std::exit(kExitNotTested);
    }
  }
};
[[maybe_unused]] ::testing::Environment* const kIsaCapCheck = ::testing::AddGlobalTestEnvironment(new IsaCapCheck);

class BackendCase : public ::testing::TestWithParam<std::string> {};

// Runs the case with `threads` intra-op threads (0: serial).
void run_case(const std::string& name, int threads) {
  const fs::path dir = fs::path(REFRT_CASES_DIR) / name;
  ASSERT_TRUE(fs::exists(dir / "model.onnx")) << "missing " << dir << ": run tests/refrt/gen_backend_cases.py";
  double rtol = 1e-5, atol = 1e-6;
  if (std::ifstream tol(dir / "tolerance.txt"); tol) tol >> rtol >> atol;
  refrt::SessionOptions options;
  options.threads = threads;
  auto session = refrt::Session::load_file((dir / "model.onnx").string(), options);
  const auto sets = list_test_data_sets(dir.string());
  ASSERT_FALSE(sets.empty());
  for (const auto& set : sets) {
    std::vector<Tensor> inputs;
    refrt::ValueList values;  // sequence inputs (Python lists in the case tables)
    for (auto& named : refrt::read_value_dir(set, "input", session->inputs())) {
      inputs.push_back(named.tensor);
      values.push_back(named.value);
    }
    const auto expected = refrt::read_value_dir(set, "output", session->outputs());
    const auto result = session->run_values(inputs, values);
    ASSERT_EQ(result.outputs.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      const std::string what = "output " + std::to_string(i) + " ('" + expected[i].name + "') of " + set;
      if (!expected[i].value) {
        EXPECT_TRUE(testing::tensors_close(result.outputs[i], expected[i].tensor, rtol, atol)) << what;
        continue;
      }
      const refrt::Value* got = i < result.values.size() ? result.values[i].get() : nullptr;
      ASSERT_TRUE(got) << what << " is not a sequence or optional";
      ASSERT_EQ(got->tensors.size(), expected[i].value->tensors.size()) << what;
      for (size_t k = 0; k < got->tensors.size(); ++k)
        EXPECT_TRUE(testing::tensors_close(got->tensors[k], expected[i].value->tensors[k], rtol, atol))
            << what << ", element " << k;
    }
  }
}

TEST_P(BackendCase, MatchesNumpy) { run_case(GetParam(), 0); }
// Same case on a 3-thread pool: kernels that split work with parallel_for must agree. A case may list more
// thread counts (threads.txt: the one-row products at 1 and 2, the counts their column split is written for).
TEST_P(BackendCase, MatchesNumpyOnThreadPool) {
  run_case(GetParam(), 3);
  std::ifstream listed(fs::path(REFRT_CASES_DIR) / GetParam() / "threads.txt");
  for (int threads = 0; listed >> threads;) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    run_case(GetParam(), threads);
  }
}

INSTANTIATE_TEST_SUITE_P(Numpy, BackendCase, ::testing::ValuesIn(case_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace parity
