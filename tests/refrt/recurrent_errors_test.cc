// Bad inputs to LSTM / GRU / RNN: each is a parity::Error naming the node and what was wrong
// (shape mismatches, out-of-range sequence_lens, unknown activations), never an out-of-bounds read.
#include <gtest/gtest.h>

#include <string>

#include "model_builder.h"
#include "parity/error.h"
#include "parity/refrt/session.h"

namespace parity {
namespace {

using testing::make;
using testing::ModelBuilder;
using testing::ramp;

void strings_attr(onnx::NodeProto* n, const std::string& name, const std::vector<std::string>& values) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRINGS);
  for (const auto& v : values) a->add_strings(v);
}

void expect_error(ModelBuilder& b, const std::vector<Tensor>& inputs, const std::vector<std::string>& needles,
                  ErrorKind kind = ErrorKind::kInput) {
  try {
    auto session = refrt::Session::load_bytes(b.bytes(), "recurrent.onnx");
    session->run(inputs);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    for (const auto& n : needles) EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what();
  }
}

Tensor floats(Shape shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return make<float>(DType::kFloat32, shape, ramp(n));
}

// An LSTM node `my_lstm` over graph inputs x, w, r [, b, lens]; hidden_size 3.
ModelBuilder lstm(bool with_lens, onnx::NodeProto** node = nullptr) {
  ModelBuilder m;
  for (const char* n : {"x", "w", "r", "b"}) m.input(n, DType::kFloat32);
  std::vector<std::string> ins = {"x", "w", "r", "b"};
  if (with_lens) {
    m.input("lens", DType::kInt32);
    ins.push_back("lens");
  }
  auto* n = m.node("LSTM", ins, {"y"}, "my_lstm");
  ModelBuilder::attr(n, "hidden_size", int64_t{3});
  if (node) *node = n;
  m.output("y");
  return m;
}

TEST(RecurrentErrors, WeightShapeMismatchNamesNodeAndInput) {
  auto m = lstm(false);
  expect_error(m, {floats({2, 1, 4}), floats({1, 12, 5}), floats({1, 12, 3}), floats({1, 24})},
               {"my_lstm", "LSTM", "W must be [1, 12, 4]"});
  auto m2 = lstm(false);
  expect_error(m2, {floats({2, 1, 4}), floats({1, 12, 4}), floats({1, 12, 3}), floats({1, 12})},
               {"my_lstm", "B must be"});
}

TEST(RecurrentErrors, HiddenSizeDisagreeingWithR) {
  auto m = lstm(false);
  expect_error(m, {floats({2, 1, 4}), floats({1, 16, 4}), floats({1, 16, 4}), floats({1, 32})},
               {"my_lstm", "hidden_size is 3"});
}

TEST(RecurrentErrors, SequenceLengthOutOfRange) {
  auto m = lstm(true);
  expect_error(m,
               {floats({2, 2, 4}), floats({1, 12, 4}), floats({1, 12, 3}), floats({1, 24}),
                make<int32_t>(DType::kInt32, {2}, {2, 3})},
               {"my_lstm", "sequence_lens value 3"});
}

TEST(RecurrentErrors, UnknownActivationIsUnsupported) {
  onnx::NodeProto* node = nullptr;
  auto m = lstm(false, &node);
  strings_attr(node, "activations", {"Sigmoid", "HardSigmoid", "Tanh"});
  expect_error(m, {floats({2, 1, 4}), floats({1, 12, 4}), floats({1, 12, 3}), floats({1, 24})},
               {"my_lstm", "HardSigmoid"}, ErrorKind::kUnsupported);
}

TEST(RecurrentErrors, GruInputRank) {
  ModelBuilder m;
  for (const char* n : {"x", "w", "r"}) m.input(n, DType::kFloat32);
  m.node("GRU", {"x", "w", "r"}, {"y"}, "my_gru");
  m.output("y");
  expect_error(m, {floats({2, 4}), floats({1, 9, 4}), floats({1, 9, 3})}, {"my_gru", "X must have rank 3"});
}

}  // namespace
}  // namespace parity
