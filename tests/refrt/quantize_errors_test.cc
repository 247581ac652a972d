// Hostile QuantizeLinear / DequantizeLinear nodes: each is a parity::Error naming the node and what was
// wrong (scale shape against axis, zero point dtype, axis range, blocked shapes); types refrt cannot
// store (int4, float8) are ErrorKind::kUnsupported naming the op and the dtype.
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "model_builder.h"
#include "parity/error.h"
#include "parity/refrt/session.h"

namespace parity {
namespace {

using testing::make;
using testing::ModelBuilder;

void expect_error(ModelBuilder& b, const std::vector<Tensor>& inputs, std::initializer_list<std::string> needles,
                  ErrorKind kind = ErrorKind::kInput) {
  try {
    auto session = refrt::Session::load_bytes(b.bytes(), "quantize_errors.onnx");
    session->run(inputs);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    for (const auto& n : needles) EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what();
  }
}

// op(x, s[, z]) with every input a graph input.
ModelBuilder qnode(const std::string& op, int opset, bool with_zp, onnx::NodeProto** n = nullptr) {
  ModelBuilder m(opset);
  m.input("x", DType::kUndefined);
  m.input("s", DType::kFloat32);
  if (with_zp) m.input("z", DType::kUndefined);
  auto* node = m.node(op, with_zp ? std::vector<std::string>{"x", "s", "z"} : std::vector<std::string>{"x", "s"}, {"y"},
                      "my_" + op);
  if (n) *n = node;
  m.output("y");
  return m;
}

// The inputs' declared types matter only to the loader; set them from the tensors passed.
void typed(ModelBuilder& m, const std::vector<Tensor>& inputs) {
  for (int i = 0; i < m.g().input_size() && i < static_cast<int>(inputs.size()); ++i)
    m.g().mutable_input(i)->mutable_type()->mutable_tensor_type()->set_elem_type(
        static_cast<int>(inputs[static_cast<size_t>(i)].dtype()));
}

const Tensor kX = make<float>(DType::kFloat32, {2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
const Tensor kXq = make<int8_t>(DType::kInt8, {2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});

TEST(QuantizeErrors, PerAxisScaleMustMatchTheAxisDim) {
  onnx::NodeProto* n = nullptr;
  auto m = qnode("QuantizeLinear", 13, false, &n);
  ModelBuilder::attr(n, "axis", int64_t{1});
  std::vector<Tensor> in = {kX, make<float>(DType::kFloat32, {3}, {1, 1, 1})};
  typed(m, in);
  expect_error(m, in, {"my_QuantizeLinear", "per-axis scale must be 1-D of size 4", "[3]"});
}

TEST(QuantizeErrors, ZeroPointDtypeMustMatchTheInput) {
  auto m = qnode("DequantizeLinear", 13, true);
  std::vector<Tensor> in = {kXq, make<float>(DType::kFloat32, {}, {0.5f}), make<uint8_t>(DType::kUInt8, {}, {3})};
  typed(m, in);
  expect_error(m, in, {"my_DequantizeLinear", "zero point dtype uint8 differs from input dtype int8"});
}

TEST(QuantizeErrors, ZeroPointShapeMustMatchTheScale) {
  onnx::NodeProto* n = nullptr;
  auto m = qnode("QuantizeLinear", 13, true, &n);
  std::vector<Tensor> in = {kX, make<float>(DType::kFloat32, {4}, {1, 1, 1, 1}),
                            make<int8_t>(DType::kInt8, {2}, {0, 0})};
  typed(m, in);
  expect_error(m, in, {"my_QuantizeLinear", "zero point shape [2] differs from scale shape [4]"});
}

TEST(QuantizeErrors, AxisOutOfRange) {
  for (int64_t axis : {2, -3, 100}) {
    onnx::NodeProto* n = nullptr;
    auto m = qnode("DequantizeLinear", 13, false, &n);
    ModelBuilder::attr(n, "axis", axis);
    std::vector<Tensor> in = {kXq, make<float>(DType::kFloat32, {4}, {1, 1, 1, 1})};
    typed(m, in);
    expect_error(m, in,
                 {"my_DequantizeLinear", "axis " + std::to_string(axis) + " is out of range for input of rank 2"});
  }
}

TEST(QuantizeErrors, PerAxisScaleNeedsOpset13) {
  auto m = qnode("QuantizeLinear", 10, false);
  std::vector<Tensor> in = {kX, make<float>(DType::kFloat32, {4}, {1, 1, 1, 1})};
  typed(m, in);
  expect_error(m, in, {"my_QuantizeLinear", "scale must be a scalar before opset 13"});
}

TEST(QuantizeErrors, BlockedScaleShape) {
  onnx::NodeProto* n = nullptr;
  auto m = qnode("DequantizeLinear", 21, false, &n);
  ModelBuilder::attr(n, "axis", int64_t{1});
  ModelBuilder::attr(n, "block_size", int64_t{3});
  std::vector<Tensor> in = {kXq, make<float>(DType::kFloat32, {2, 1}, {1, 1})};  // needs [2, 2]: ceil(4 / 3)
  typed(m, in);
  expect_error(m, in, {"my_DequantizeLinear", "blocked scale must have shape [2, 2]", "got [2, 1]"});
}

TEST(QuantizeErrors, UnstorableOutputTypesAreUnsupported) {
  for (auto [type, name] : {std::pair<int64_t, const char*>{22, "int4"}, {21, "uint4"}, {17, "float8e4m3fn"}}) {
    onnx::NodeProto* n = nullptr;
    auto m = qnode("QuantizeLinear", 21, false, &n);
    ModelBuilder::attr(n, "output_dtype", type);
    std::vector<Tensor> in = {kX, make<float>(DType::kFloat32, {}, {1})};
    typed(m, in);
    expect_error(m, in, {"my_QuantizeLinear", std::string("output_dtype ") + name + " is not supported"},
                 ErrorKind::kUnsupported);
  }
}

TEST(QuantizeErrors, WrongInputTypesAreUnsupported) {
  auto dq = qnode("DequantizeLinear", 13, false);
  std::vector<Tensor> in = {kX, make<float>(DType::kFloat32, {}, {1})};
  typed(dq, in);
  expect_error(dq, in, {"my_DequantizeLinear", "input dtype float32 is not supported"}, ErrorKind::kUnsupported);
  auto q = qnode("QuantizeLinear", 13, true);
  std::vector<Tensor> qin = {kX, make<float>(DType::kFloat32, {}, {1}), make<int32_t>(DType::kInt32, {}, {0})};
  typed(q, qin);
  expect_error(q, qin, {"my_QuantizeLinear", "zero point dtype int32 is not supported"}, ErrorKind::kUnsupported);
}

}  // namespace
}  // namespace parity
