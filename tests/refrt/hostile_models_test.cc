// Malformed models: each gives a parity::Error naming the file, node or op; nothing crashes.
#include <gtest/gtest.h>

#include "model_builder.h"
#include "parity/error.h"
#include "parity/refrt/session.h"

namespace parity {
namespace {

using testing::make;
using testing::ModelBuilder;

void expect_load_error(const std::string& bytes, const std::vector<std::string>& needles) {
  try {
    refrt::Session::load_bytes(bytes, "hostile.onnx");
    FAIL() << "expected a load error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("hostile.onnx"), std::string::npos) << what;
    for (const auto& n : needles) EXPECT_NE(what.find(n), std::string::npos) << "missing '" << n << "' in: " << what;
  }
}

ModelBuilder relu_model(int opset = 18) {
  ModelBuilder b(opset);
  b.input("x", DType::kFloat32, {2});
  b.node("Relu", {"x"}, {"y"}, "relu_0");
  b.output("y");
  return b;
}

TEST(HostileModels, NotProtobuf) { expect_load_error("\xff\xff\xff not a model", {"not a valid ONNX model"}); }

TEST(HostileModels, TruncatedProtobuf) {
  ModelBuilder b = relu_model();
  b.initializer("w", make<float>(DType::kFloat32, {4}, {1, 2, 3, 4}));
  const std::string full = b.bytes();
  for (size_t keep : {full.size() - 1, full.size() / 2, size_t{3}}) {
    try {
      refrt::Session::load_bytes(full.substr(0, keep), "hostile.onnx");
      ADD_FAILURE() << "loaded a model truncated to " << keep << " bytes";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("hostile.onnx"), std::string::npos) << e.what();
    }
  }
}

TEST(HostileModels, RawDataLengthMismatch) {
  ModelBuilder b = relu_model();
  auto* init = b.g().add_initializer();
  init->set_name("w");
  init->set_data_type(onnx::TensorProto::FLOAT);
  init->add_dims(1000);
  init->set_raw_data(std::string(16, '\0'));
  expect_load_error(b.bytes(), {"'w'", "raw_data has 16 bytes"});
}

TEST(HostileModels, NegativeAndAbsurdDims) {
  ModelBuilder b = relu_model();
  auto* init = b.g().add_initializer();
  init->set_name("w");
  init->set_data_type(onnx::TensorProto::FLOAT);
  init->add_dims(-5);
  expect_load_error(b.bytes(), {"negative"});
  init->clear_dims();
  init->add_dims(int64_t{1} << 62);
  expect_load_error(b.bytes(), {"allocation limit"});
}

TEST(HostileModels, UndefinedInput) {
  ModelBuilder b = relu_model();
  b.node("Add", {"y", "nowhere"}, {"z"}, "add_0");
  expect_load_error(b.bytes(), {"add_0", "Add", "'nowhere'"});
}

TEST(HostileModels, Cycle) {
  ModelBuilder b;
  b.input("x", DType::kFloat32);
  b.node("Add", {"x", "b"}, {"a"}, "n1");
  b.node("Relu", {"a"}, {"b"}, "n2");
  b.output("b");
  expect_load_error(b.bytes(), {"cycle"});
}

TEST(HostileModels, UnknownOp) {
  ModelBuilder b;
  b.input("x", DType::kFloat32);
  b.node("Frobnicate", {"x"}, {"y"}, "frob_0");
  b.output("y");
  expect_load_error(b.bytes(), {"frob_0", "Frobnicate", "no refrt kernel"});
}

TEST(HostileModels, OpsetNewerThanImplemented) { expect_load_error(relu_model(99).bytes(), {"opset 99"}); }

TEST(HostileModels, ValueDefinedTwice) {
  ModelBuilder b = relu_model();
  b.node("Relu", {"x"}, {"y"}, "relu_1");
  expect_load_error(b.bytes(), {"defined twice"});
}

TEST(HostileModels, OutputNeverProduced) {
  ModelBuilder b = relu_model();
  b.output("ghost");
  expect_load_error(b.bytes(), {"'ghost'"});
}

TEST(HostileInputs, WrongCountDtypeAndShapeAreErrors) {
  auto s = refrt::Session::load_bytes(relu_model().bytes(), "ok.onnx");
  EXPECT_THROW(s->run({}), Error);
  EXPECT_THROW(s->run({make<int64_t>(DType::kInt64, {2}, {1, 2})}), Error);
  EXPECT_THROW(s->run({make<float>(DType::kFloat32, {3}, {1, 2, 3})}), Error);
  const auto y = s->run({make<float>(DType::kFloat32, {2}, {-1, 2})}).outputs[0];
  EXPECT_EQ(y.data<float>()[0], 0.f);
  EXPECT_EQ(y.data<float>()[1], 2.f);
}

TEST(HostileInputs, BadAttributeIsAnErrorAtLoad) {
  ModelBuilder b;
  b.input("x", DType::kFloat32);
  b.node("Concat", {"x", "x"}, {"y"}, "concat_no_axis");
  b.output("y");
  expect_load_error(b.bytes(), {"concat_no_axis", "axis"});
}

}  // namespace
}  // namespace parity
