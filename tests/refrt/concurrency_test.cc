// One Session's run() called from several threads at once (issue 13): every concurrent result must
// match the numpy oracle of the case (tests/refrt/cases/*.py) and be bit-identical to a sequential run
// of the same session, with and without the intra-op pool, profiled or not (the profiler's
// bookkeeping is per run). scripts/tsan.sh builds this test with -fsanitize=thread and runs it.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "parity/refrt/session.h"
#include "parity/tensor_io.h"
#include "tensor_expect.h"

namespace parity {
namespace {

namespace fs = std::filesystem;

struct Case {
  std::vector<Tensor> inputs, expected;
  double rtol = 1e-5, atol = 1e-6;
};

Case load_case(const std::string& name) {
  const fs::path dir = fs::path(REFRT_CASES_DIR) / name;
  Case c;
  if (std::ifstream tol(dir / "tolerance.txt"); tol) tol >> c.rtol >> c.atol;
  const auto sets = list_test_data_sets(dir.string());
  for (auto& named : read_tensor_dir(sets.at(0), "input")) c.inputs.push_back(named.tensor);
  for (auto& named : read_tensor_dir(sets.at(0), "output")) c.expected.push_back(named.tensor);
  return c;
}

// Iterations per thread: enough interleavings to catch a shared buffer, few enough for TSan.
constexpr int kThreads = 4;
constexpr int kIterations = 12;

void run_concurrently(const std::string& name, int pool_threads, bool optimize) {
  SCOPED_TRACE(name + ", pool " + std::to_string(pool_threads) + (optimize ? "" : ", --no-optimize"));
  const Case c = load_case(name);
  refrt::SessionOptions options;
  options.threads = pool_threads;
  options.optimize = optimize;
  const auto session = refrt::Session::load_file((fs::path(REFRT_CASES_DIR) / name / "model.onnx").string(), options);
  // The sequential reference, itself checked against the oracle.
  const std::vector<Tensor> sequential = session->run(c.inputs).outputs;
  ASSERT_EQ(sequential.size(), c.expected.size());
  for (size_t i = 0; i < sequential.size(); ++i)
    ASSERT_TRUE(testing::tensors_close(sequential[i], c.expected[i], c.rtol, c.atol)) << "output " << i;

  std::vector<std::vector<std::vector<Tensor>>> got(kThreads);
  std::vector<std::string> errors(kThreads);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();  // start together
      try {
        for (int it = 0; it < kIterations; ++it) {
          refrt::RunOptions run;
          run.profile = (t + it) % 2 == 1;  // half the runs profiled, interleaved with plain ones
          refrt::RunResult r = session->run(c.inputs, run);
          if (run.profile && r.timings.empty()) throw std::runtime_error("profiled run without timings");
          got[static_cast<size_t>(t)].push_back(std::move(r.outputs));
        }
      } catch (const std::exception& e) {
        errors[static_cast<size_t>(t)] = e.what();
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(errors[static_cast<size_t>(t)], "") << "thread " << t;
    ASSERT_EQ(got[static_cast<size_t>(t)].size(), static_cast<size_t>(kIterations));
    for (const auto& outputs : got[static_cast<size_t>(t)]) {
      ASSERT_EQ(outputs.size(), sequential.size());
      for (size_t i = 0; i < outputs.size(); ++i) {
        EXPECT_TRUE(outputs[i].bitwise_equal(sequential[i])) << "thread " << t << " output " << i;
        EXPECT_TRUE(testing::tensors_close(outputs[i], c.expected[i], c.rtol, c.atol))
            << "thread " << t << " output " << i;
      }
    }
  }
  // The caller may write into a result (copy on write): the next run must not see it.
  std::vector<Tensor> first = session->run(c.inputs).outputs;
  for (auto& out : first)
    if (out.nbytes()) static_cast<unsigned char*>(out.mutable_raw())[0] ^= 0xff;
  const std::vector<Tensor> again = session->run(c.inputs).outputs;
  for (size_t i = 0; i < again.size(); ++i) EXPECT_TRUE(again[i].bitwise_equal(sequential[i])) << "output " << i;
}

// A conv net, a transformer block with attention, a decode step over a KV cache, control flow.
const char* const kCases[] = {"block_conv_net", "block_transformer", "block_decode_kv_cache",
                              "loop_trip_count_outer_scope", "scan_reverse_axis1_outer_scope"};

TEST(Concurrency, RunsFromFourThreadsMatchSequentialAndOracleWithoutPool) {
  for (const char* name : kCases) run_concurrently(name, 0, true);
}

TEST(Concurrency, RunsFromFourThreadsShareOnePool) {
  for (const char* name : kCases) run_concurrently(name, 2, true);
}

TEST(Concurrency, UnoptimisedPlanToo) {
  for (const char* name : kCases) run_concurrently(name, 3, false);
}

// Intermediates use a second plan built on first use (once, under concurrent first calls).
TEST(Concurrency, FirstRunsKeepingIntermediatesBuildTheFullPlanOnce) {
  const Case c = load_case("block_transformer");
  const auto session = refrt::Session::load_file(
      (fs::path(REFRT_CASES_DIR) / "block_transformer" / "model.onnx").string(), refrt::SessionOptions{.threads = 2});
  std::vector<refrt::RunResult> results(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back(
        [&, t] { results[static_cast<size_t>(t)] = session->run(c.inputs, {.keep_intermediates = true}); });
  for (auto& th : threads) th.join();
  for (const auto& r : results) {
    ASSERT_EQ(r.outputs.size(), 1u);
    EXPECT_TRUE(testing::tensors_close(r.outputs[0], c.expected[0], c.rtol, c.atol));
    // softmax rows of the attention (an unfused value) sum to 1
    const Tensor& p = r.intermediates.at("att_p");
    const int64_t row = p.shape().back();
    for (int64_t i = 0; i < p.numel() / row; ++i) {
      double sum = 0;
      for (int64_t j = 0; j < row; ++j) sum += p.data<float>()[i * row + j];
      EXPECT_NEAR(sum, 1.0, 1e-5);
    }
  }
}

}  // namespace
}  // namespace parity
