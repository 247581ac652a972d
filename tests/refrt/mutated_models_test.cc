// Robustness: thousands of corrupted variants of a valid model (bytes flipped, truncated) either
// load or fail with a parity::Error; running what loads either works or fails with a parity::Error.
// Nothing may crash (run this binary under ASan/UBSan too: build-asan).
#include <gtest/gtest.h>

#include "model_builder.h"
#include "parity/error.h"
#include "parity/refrt/session.h"

namespace parity {
namespace {

using testing::make;
using testing::ModelBuilder;

std::string small_model() {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {2, 3});
  b.initializer("w", make<float>(DType::kFloat32, {3, 2}, {1, 2, 3, 4, 5, 6}));
  b.initializer("axes", make<int64_t>(DType::kInt64, {1}, {0}));
  b.initializer("idx", make<int64_t>(DType::kInt64, {2}, {1, 0}));
  b.node("MatMul", {"x", "w"}, {"m"});
  b.node("Gather", {"m", "idx"}, {"g"});
  b.node("Unsqueeze", {"g", "axes"}, {"u"});
  ModelBuilder::attr(b.node("Softmax", {"u"}, {"y"}), "axis", int64_t{-1});
  b.output("y");
  return b.bytes();
}

int g_runs = 0;  // variants that loaded and ran to the end (the mutation must not make all fail)

// Loads and runs; returns false only if something other than parity::Error escaped.
bool load_and_run(const std::string& bytes) {
  try {
    auto s = refrt::Session::load_bytes(bytes, "mutated.onnx");
    std::vector<Tensor> inputs;
    for (const auto& in : s->inputs()) {
      Shape shape;
      for (const auto& d : in.dims) shape.push_back(d.value >= 0 && d.value < 16 ? d.value : 2);
      inputs.emplace_back(in.dtype == DType::kUndefined ? DType::kFloat32 : in.dtype, shape, true);
    }
    s->run(inputs);
    ++g_runs;
  } catch (const Error&) {
  } catch (const std::exception& e) {
    ADD_FAILURE() << "non-parity exception: " << e.what();
    return false;
  }
  return true;
}

TEST(MutatedModels, TruncationsNeverCrash) {
  const std::string model = small_model();
  ASSERT_TRUE(load_and_run(model));
  for (size_t keep = 0; keep < model.size(); ++keep) ASSERT_TRUE(load_and_run(model.substr(0, keep))) << keep;
}

TEST(MutatedModels, ByteFlipsNeverCrash) {
  const std::string model = small_model();
  uint32_t seed = 12345;
  auto next = [&] { return seed = seed * 1664525u + 1013904223u; };
  for (int trial = 0; trial < 3000; ++trial) {
    std::string bytes = model;
    const int flips = 1 + static_cast<int>(next() % 3);
    for (int f = 0; f < flips; ++f) bytes[next() % bytes.size()] = static_cast<char>(next() >> 24);
    ASSERT_TRUE(load_and_run(bytes)) << "trial " << trial;
  }
  EXPECT_GT(g_runs, 300) << "too few mutated models ran: the corpus tests little beyond parsing";
}

}  // namespace
}  // namespace parity
