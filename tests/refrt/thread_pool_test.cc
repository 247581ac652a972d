// The intra-op pool: every index exactly once, errors reach the caller, concurrent callers, and a
// session with a pool computes what a session without one computes.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>

#include "../../refrt/src/thread_pool.h"
#include "model_builder.h"
#include "parity/refrt/session.h"

namespace parity {
namespace {

TEST(ThreadPool, EveryIndexExactlyOnce) {
  for (int threads : {1, 2, 3, 8}) {
    refrt::ThreadPool pool(threads);
    for (int64_t n : {0, 1, 2, 7, 1000}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      pool.parallel_for(n, 1, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
      });
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << threads << " threads, n=" << n;
    }
  }
}

// More chunks than threads (parallel_each's form): still every index once, and exactly max_chunks
// calls (capped by n / grain), each chunk contiguous.
TEST(ThreadPool, MoreChunksThanThreads) {
  for (int threads : {1, 2, 3}) {
    refrt::ThreadPool pool(threads);
    for (int64_t n : {1, 5, 8, 100}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      std::atomic<int64_t> calls{0};
      pool.parallel_for(n, 1, 8, [&](int64_t b, int64_t e) {
        ASSERT_LT(b, e);
        ++calls;
        for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
      });
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << threads << " threads, n=" << n;
      EXPECT_EQ(calls.load(), std::min<int64_t>(n, 8)) << threads << " threads, n=" << n;
    }
  }
}

TEST(ThreadPool, ExceptionsReachTheCaller) {
  refrt::ThreadPool pool(4);
  EXPECT_THROW(pool.parallel_for(100, 1,
                                 [](int64_t b, int64_t) {
                                   if (b > 0) throw std::runtime_error("chunk failed");
                                 }),
               std::runtime_error);
  std::atomic<int64_t> sum{0};  // and the pool still works afterwards
  pool.parallel_for(100, 1, [&](int64_t b, int64_t e) { sum += e - b; });
  EXPECT_EQ(sum.load(), 100);
}

TEST(ThreadPool, ConcurrentCallers) {
  refrt::ThreadPool pool(3);
  std::atomic<int64_t> total{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t)
    callers.emplace_back([&] {
      for (int rep = 0; rep < 50; ++rep) pool.parallel_for(64, 1, [&](int64_t b, int64_t e) { total += e - b; });
    });
  for (auto& c : callers) c.join();
  EXPECT_EQ(total.load(), 4 * 50 * 64);
}

TEST(ThreadPool, SessionWithPoolMatchesSerial) {
  // Batched small MatMul: the batch is spread over the pool when there is one.
  testing::ModelBuilder b;
  b.input("a", DType::kFloat32, {16, 5, 7});
  b.input("w", DType::kFloat32, {16, 7, 3});
  b.node("MatMul", {"a", "w"}, {"y"});
  b.output("y");
  Tensor a(DType::kFloat32, {16, 5, 7}), w(DType::kFloat32, {16, 7, 3});
  for (int64_t i = 0; i < a.numel(); ++i) a.data<float>()[i] = static_cast<float>((i * 37) % 11) - 5.f;
  for (int64_t i = 0; i < w.numel(); ++i) w.data<float>()[i] = static_cast<float>((i * 13) % 7) - 3.f;
  auto serial = refrt::Session::load_bytes(b.bytes(), "serial.onnx");
  refrt::SessionOptions options;
  options.threads = 2;
  auto pooled = refrt::Session::load_bytes(b.bytes(), "pooled.onnx", options);
  EXPECT_TRUE(serial->run({a, w}).outputs[0].bitwise_equal(pooled->run({a, w}).outputs[0]));
  // Independent check of one element: y[3, 4, 2] = sum_k a[3, 4, k] * w[3, k, 2] (small integers: exact).
  float want = 0;
  for (int k = 0; k < 7; ++k) want += a.data<float>()[3 * 35 + 4 * 7 + k] * w.data<float>()[3 * 21 + k * 3 + 2];
  EXPECT_EQ(pooled->run({a, w}).outputs[0].data<float>()[3 * 15 + 4 * 3 + 2], want);
}

}  // namespace
}  // namespace parity
