// Session behaviour beyond single kernels: ordering, immutability across runs, intermediates and
// timings, the kernel registry, and edge values that numpy does not pin down portably.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <cmath>
#include <limits>
#include <atomic>
#include <set>
#include <thread>

#include "model_builder.h"
#include "parity/error.h"
#include "parity/refrt/session.h"

namespace parity {
namespace {

using testing::make;
using testing::ModelBuilder;

TEST(Session, NodesOutOfFileOrderAreSorted) {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {2});
  b.node("Neg", {"a"}, {"y"}, "second");
  b.node("Relu", {"x"}, {"a"}, "first");
  b.output("y");
  auto s = refrt::Session::load_bytes(b.bytes(), "order.onnx");
  const Tensor y = s->run({make<float>(DType::kFloat32, {2}, {-3, 5})}).outputs[0];
  EXPECT_EQ(y.data<float>()[0], -0.f);
  EXPECT_EQ(y.data<float>()[1], -5.f);
}

TEST(Session, ResultsDoNotAliasTheSessionsConstants) {
  // y = Identity(w) and z = Constant: a caller writing into them must not change the next run.
  ModelBuilder b;
  b.initializer("w", make<float>(DType::kFloat32, {2}, {1, 2}));
  b.node("Identity", {"w"}, {"y"});
  auto* c = b.node("Constant", {}, {"z"}, "const_z");
  ModelBuilder::attr(c, "value_ints", std::vector<int64_t>{7, 8});
  b.output("y");
  b.output("z");
  auto s = refrt::Session::load_bytes(b.bytes(), "alias.onnx");
  auto first = s->run({}).outputs;
  first[0].data<float>()[0] = 100;
  first[1].data<int64_t>()[0] = 100;
  const auto second = s->run({}).outputs;
  EXPECT_EQ(second[0].data<float>()[0], 1.f);
  EXPECT_EQ(second[1].data<int64_t>()[0], 7);
  EXPECT_EQ(first[0].data<float>()[0], 100.f);  // the caller's copy kept its write
}

TEST(Session, IntermediatesAndTimingsOnRequest) {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {3});
  b.node("Relu", {"x"}, {"r"}, "relu_0");
  b.node("Exp", {"r"}, {"y"}, "exp_0");
  b.output("y");
  auto s = refrt::Session::load_bytes(b.bytes(), "steps.onnx");
  const Tensor x = make<float>(DType::kFloat32, {3}, {-1, 0, 1});
  const auto plain = s->run({x});
  EXPECT_TRUE(plain.intermediates.empty());
  EXPECT_TRUE(plain.timings.empty());
  const auto wall_start = std::chrono::steady_clock::now();
  const auto full = s->run({x}, {.keep_intermediates = true, .profile = true});
  const double wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall_start).count();
  ASSERT_EQ(full.intermediates.count("r"), 1u);
  EXPECT_EQ(full.intermediates.at("r").data<float>()[0], 0.f);
  ASSERT_EQ(full.timings.size(), 2u);
  EXPECT_EQ(full.timings[0].node, "relu_0");
  EXPECT_EQ(full.timings[1].op_type, "Exp");
  // The profile is a timeline of the run: nodes in execution order, each starting after the previous one
  // ended, all inside the wall time the caller measured around run(). No duration is compared with a
  // fixed number (timings belong in benchmarks), only with the clock that bounds them.
  for (size_t i = 0; i < full.timings.size(); ++i) {
    const auto& t = full.timings[i];
    EXPECT_EQ(t.node_index, i);
    EXPECT_TRUE(std::isfinite(t.ms) && std::isfinite(t.start_ms)) << t.node;
    EXPECT_GE(t.start_ms, 0.0) << t.node;
    EXPECT_GE(t.ms, 0.0) << t.node;
    EXPECT_LE(t.start_ms + t.ms, wall_ms) << t.node;
  }
  EXPECT_GE(full.timings[1].start_ms, full.timings[0].start_ms + full.timings[0].ms);
  // Building the records after the last node is the profiler's own time, reported apart.
  EXPECT_EQ(plain.profiler_ms, 0.0);
  EXPECT_GE(full.profiler_ms, 0.0);
  EXPECT_LE(full.profiler_ms, wall_ms);
  // What each kernel read and wrote: float32 [3] in and out, 12 + 12 bytes; neither declares FLOPs.
  for (const auto& t : full.timings) {
    ASSERT_EQ(t.inputs.size(), 1u) << t.node;
    ASSERT_EQ(t.outputs.size(), 1u) << t.node;
    EXPECT_EQ(t.inputs[0].dtype, DType::kFloat32) << t.node;
    EXPECT_EQ(t.outputs[0].shape, Shape({3})) << t.node;
    EXPECT_EQ(t.bytes, 24.0) << t.node;
    EXPECT_EQ(t.flops, 0.0) << t.node;
  }
}

// Each node's shapes, recorded during the run in flat buffers, come back as its own: two inputs of
// different ranks, then a node whose input is the first one's output.
TEST(Session, TimingsKeepEachNodesShapes) {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {2, 3});
  b.input("y", DType::kFloat32, {3});
  b.node("Add", {"x", "y"}, {"s"}, "add_0");
  ModelBuilder::attr(b.node("ReduceSum", {"s"}, {"r"}, "sum_0"), "keepdims", 0);
  b.output("r");
  auto s = refrt::Session::load_bytes(b.bytes(), "shapes.onnx");
  const auto r =
      s->run({make<float>(DType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6}), make<float>(DType::kFloat32, {3}, {1, 1, 1})},
             {.profile = true});
  ASSERT_EQ(r.timings.size(), 2u);
  const auto& add = r.timings[0];
  ASSERT_EQ(add.inputs.size(), 2u);
  EXPECT_EQ(add.inputs[0].shape, Shape({2, 3}));
  EXPECT_EQ(add.inputs[1].shape, Shape({3}));
  ASSERT_EQ(add.outputs.size(), 1u);
  EXPECT_EQ(add.outputs[0].shape, Shape({2, 3}));
  EXPECT_EQ(add.bytes, 24.0 + 12.0 + 24.0);
  const auto& sum = r.timings[1];
  ASSERT_EQ(sum.inputs.size(), 1u);
  EXPECT_EQ(sum.inputs[0].shape, Shape({2, 3}));
  ASSERT_EQ(sum.outputs.size(), 1u);
  EXPECT_EQ(sum.outputs[0].shape, Shape({}));
  EXPECT_EQ(sum.outputs[0].dtype, DType::kFloat32);
}

// Nodes computing only from initializers run once at load: they leave the profile, their values stay
// visible as intermediates, and results are those of the unfolded graph (oracle: by hand).
TEST(Session, ConstantNodesAreFoldedAtLoad) {
  auto model = [](bool with_bad_gather) {
    ModelBuilder b;
    b.input("x", DType::kFloat32, {2, 3});
    b.initializer("shape", make<int64_t>(DType::kInt64, {2}, {2, 3}));
    b.initializer("steps", make<float>(DType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6}));
    b.node("ConstantOfShape", {"shape"}, {"zeros"}, "zeros_node");
    b.node("Add", {"zeros", "steps"}, {"d"}, "add_node");
    b.node("Mul", {"x", "d"}, {"y"}, "mul_node");
    b.node("Neg", {"x"}, {"z"}, "neg_node");
    b.output("y");
    b.output("z");
    if (with_bad_gather) {  // constant inputs, but the kernel fails: the node stays in the graph
      b.initializer("bad_index", make<int64_t>(DType::kInt64, {1}, {5}));
      b.node("Gather", {"steps", "bad_index"}, {"g"}, "gather_node");
      b.output("g");
    }
    return b.bytes();
  };
  const Tensor x = make<float>(DType::kFloat32, {2, 3}, {1, 1, 1, -1, -1, -1});
  for (bool fold : {true, false}) {
    auto bad = refrt::Session::load_bytes(model(true), "fold.onnx", {.fold_constants = fold});
    try {
      bad->run({x});
      ADD_FAILURE() << "the bad Gather ran";
    } catch (const Error& e) {  // the error surfaces at run time, naming the node, as without folding
      EXPECT_NE(std::string(e.what()).find("gather_node"), std::string::npos) << e.what();
    }
    auto s = refrt::Session::load_bytes(model(false), "fold.onnx", {.fold_constants = fold});
    const auto r = s->run({x}, {.keep_intermediates = true, .profile = true});
    const float* y = r.outputs[0].data<float>();
    EXPECT_EQ(std::vector<float>(y, y + 6), (std::vector<float>{1, 2, 3, -4, -5, -6}));
    EXPECT_EQ(r.outputs[1].data<float>()[3], 1.f);
    ASSERT_EQ(r.intermediates.count("d"), 1u);
    EXPECT_EQ(r.intermediates.at("d").data<float>()[5], 6.f);
    std::set<std::string> timed;
    for (const auto& t : r.timings) timed.insert(t.node);
    const std::set<std::string> expected =
        fold ? std::set<std::string>{"mul_node", "neg_node"}
             : std::set<std::string>{"zeros_node", "add_node", "mul_node", "neg_node"};
    EXPECT_EQ(timed, expected) << "fold=" << fold;
  }
}

TEST(Session, RepeatedShapesAllocateNoNewBuffers) {
  // A chain of nodes whose intermediates are freed as the run goes: after one run has filled the
  // buffer pool, later runs with the same shapes take every buffer from it.
  ModelBuilder b;
  b.input("x", DType::kFloat32, {64, 33});
  b.node("Relu", {"x"}, {"a"});
  b.node("Neg", {"a"}, {"b"});
  b.node("Exp", {"b"}, {"c"});
  b.node("Add", {"c", "a"}, {"y"});
  b.output("y");
  auto s = refrt::Session::load_bytes(b.bytes(), "reuse.onnx");
  const Tensor x(DType::kFloat32, {64, 33}, /*zero=*/true);
  s->run({x});
  const uint64_t fresh_before = buffer_stats().fresh;
  for (int i = 0; i < 5; ++i) s->run({x});
  EXPECT_EQ(buffer_stats().fresh, fresh_before);
  EXPECT_GT(buffer_stats().reused, 0u);
}

TEST(Session, UnnamedNodesGetANameInErrors) {
  ModelBuilder b;
  b.input("x", DType::kFloat32);
  b.initializer("i", make<int64_t>(DType::kInt64, {1}, {5}));
  b.node("Gather", {"x", "i"}, {"y"})->clear_name();
  b.output("y");
  auto s = refrt::Session::load_bytes(b.bytes(), "unnamed.onnx");
  try {
    s->run({make<float>(DType::kFloat32, {2}, {1, 2})});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.context().node, "Gather_0") << e.what();
    EXPECT_NE(e.message().find("index 5 is out of range for axis 0 of size 2"), std::string::npos) << e.what();
  }
}

TEST(Session, RegistryCoversTheFoundationOps) {
  std::set<std::string> ops;
  for (const auto& k : refrt::registered_kernels()) {
    ops.insert(k.op_type);
    EXPECT_EQ(k.domain, "");
    EXPECT_FALSE(k.dtypes.empty()) << k.op_type;
    EXPECT_LE(k.since_version, 23) << k.op_type;
  }
  for (const char* op : {"Add",     "Sub",     "Mul",     "Div",       "Neg",    "Abs",    "Sqrt",     "Exp",
                         "Log",     "Relu",    "Sigmoid", "Tanh",      "MatMul", "Gemm",   "Concat",   "Transpose",
                         "Reshape", "Slice",   "Squeeze", "Unsqueeze", "Shape",  "Gather", "Identity", "Constant",
                         "Cast",    "Softmax", "Flatten", "Where",     "Equal",  "Less",   "Greater"})
    EXPECT_EQ(ops.count(op), 1u) << op;
}

// Float -> int casts of NaN and out-of-range values are undefined in C++ and unspecified in
// ONNX; refrt pins them to the integer minimum (x86 / ONNX Runtime behaviour).
TEST(Session, CastEdgeValues) {
  ModelBuilder b;
  b.input("x", DType::kFloat32);
  ModelBuilder::attr(b.node("Cast", {"x"}, {"i"}), "to", int64_t{6});  // int32
  ModelBuilder::attr(b.node("Cast", {"x"}, {"t"}, "to_bool"), "to", int64_t{9});
  b.output("i");
  b.output("t");
  auto s = refrt::Session::load_bytes(b.bytes(), "cast.onnx");
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const auto out = s->run({make<float>(DType::kFloat32, {6}, {nan, inf, -inf, 3e9f, -2147483648.f, -0.f})}).outputs;
  const int32_t lo = std::numeric_limits<int32_t>::min();
  EXPECT_EQ(std::vector<int32_t>(out[0].data<int32_t>(), out[0].data<int32_t>() + 6),
            (std::vector<int32_t>{lo, lo, lo, lo, lo, 0}));
  EXPECT_EQ(std::vector<uint8_t>(out[1].data<uint8_t>(), out[1].data<uint8_t>() + 6),
            (std::vector<uint8_t>{1, 1, 1, 1, 1, 0}));
}

TEST(Session, IntegerOverflowWraps) {
  ModelBuilder b;
  b.input("a", DType::kInt64);
  b.input("b", DType::kInt64);
  b.node("Add", {"a", "b"}, {"sum"});
  b.node("Div", {"a", "b"}, {"quot"});
  b.node("Neg", {"a"}, {"neg"});
  b.output("sum");
  b.output("quot");
  b.output("neg");
  auto s = refrt::Session::load_bytes(b.bytes(), "wrap.onnx");
  const int64_t lo = std::numeric_limits<int64_t>::min();
  const auto out = s->run({make<int64_t>(DType::kInt64, {1}, {lo}), make<int64_t>(DType::kInt64, {1}, {-1})}).outputs;
  EXPECT_EQ(out[0].data<int64_t>()[0], std::numeric_limits<int64_t>::max());
  EXPECT_EQ(out[1].data<int64_t>()[0], lo);
  EXPECT_EQ(out[2].data<int64_t>()[0], lo);
}

TEST(Session, ConcurrentRunsOnOneSession) {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {64});
  b.node("Sigmoid", {"x"}, {"y"});
  b.output("y");
  auto s = refrt::Session::load_bytes(b.bytes(), "threads.onnx");
  const Tensor x(DType::kFloat32, {64}, true);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) ok += s->run({x}).outputs[0].data<float>()[63] == 0.5f;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 200);
}

// load_file maps the model and parses it in 16 MiB chunks, handing pages back behind the parser: an inline
// initializer spanning several chunks, and the one after it, must come out exact, and the session must not
// depend on the file once loaded. Oracle: the sum computed here.
TEST(Session, LoadFileParsesAMappedModelAcrossChunks) {
  const int64_t n = 12'000'003;  // 48 MB of float32: three chunk boundaries inside one initializer
  std::vector<float> w(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) w[static_cast<size_t>(i)] = static_cast<float>(i % 1000) - 500.0f;
  ModelBuilder b;
  b.input("x", DType::kFloat32, {n});
  b.initializer("w", make<float>(DType::kFloat32, {n}, w));
  b.initializer("b", make<float>(DType::kFloat32, {1}, {0.25f}));
  b.node("Add", {"x", "w"}, {"s"}, "add_w");
  b.node("Add", {"s", "b"}, {"y"}, "add_b");
  b.output("y");
  const auto dir = std::filesystem::temp_directory_path() / ("refrt_load_file_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "model.onnx").string();
  const std::string bytes = b.bytes();
  std::ofstream(path, std::ios::binary) << bytes;

  auto session = refrt::Session::load_file(path);
  std::filesystem::remove(path);  // the weights now live in the session, not in the mapping
  std::vector<float> x(static_cast<size_t>(n), 1.0f);
  const Tensor y = session->run({make<float>(DType::kFloat32, {n}, x)}).outputs.at(0);
  int64_t wrong = 0;
  for (int64_t i = 0; i < n; ++i) wrong += y.data<float>()[i] != w[static_cast<size_t>(i)] + 1.25f;
  EXPECT_EQ(wrong, 0);

  // Cut inside the large initializer: a parse error naming the file, not a crash.
  std::ofstream(path, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  try {
    refrt::Session::load_file(path);
    ADD_FAILURE() << "a truncated model loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not a valid ONNX model"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace parity
