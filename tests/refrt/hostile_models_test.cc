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

// An If whose then-branch reads `missing`, defined nowhere: the error names the If node.
ModelBuilder if_model(const std::string& outer_name) {
  ModelBuilder b;
  b.input("c", DType::kBool, {});
  b.input("x", DType::kFloat32, {2});
  auto* n = b.node("If", {"c"}, {"y"}, "if_0");
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* a = n->add_attribute();
    a->set_name(branch);
    a->set_type(onnx::AttributeProto::GRAPH);
    auto* g = a->mutable_g();
    g->set_name(branch);
    auto* relu = g->add_node();
    relu->set_op_type("Relu");
    relu->add_input(std::string(branch) == "then_branch" ? outer_name : "x");
    relu->add_output(std::string(branch) + "_out");
    g->add_output()->set_name(std::string(branch) + "_out");
  }
  b.output("y");
  return b;
}

TEST(HostileModels, SubgraphReadsAnUndefinedOuterValue) {
  expect_load_error(if_model("missing").bytes(), {"if_0", "If", "'missing'"});
}

TEST(HostileModels, IfConditionMustBeABoolScalar) {
  auto s = refrt::Session::load_bytes(if_model("x").bytes(), "hostile.onnx");
  const Tensor x = make<float>(DType::kFloat32, {2}, {-1, 2});
  EXPECT_EQ(s->run({make<uint8_t>(DType::kBool, {}, {1}), x}).outputs[0].data<float>()[1], 2.f);
  try {
    s->run({make<uint8_t>(DType::kBool, {2}, {1, 0}), x});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("if_0"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("one element"), std::string::npos) << e.what();
  }
}

TEST(HostileModels, Cycle) {
  ModelBuilder b;
  b.input("x", DType::kFloat32);
  b.node("Add", {"x", "b"}, {"a"}, "n1");
  b.node("Relu", {"a"}, {"b"}, "n2");
  b.output("b");
  expect_load_error(b.bytes(), {"cycle"});
}

TEST(HostileModels, NodeWithoutOutputs) {  // the fuzzer's NonMaxSuppression with no outputs
  ModelBuilder b;
  b.input("x", DType::kFloat32);
  b.node("Relu", {"x"}, {"y"}, "relu_0");
  b.node("NonMaxSuppression", {"x", "x"}, {}, "nms_0");
  b.output("y");
  expect_load_error(b.bytes(), {"nms_0", "NonMaxSuppression", "no outputs"});
}

TEST(HostileModels, UnknownOp) {
  ModelBuilder b;
  b.input("x", DType::kFloat32);
  b.node("Frobnicate", {"x"}, {"y"}, "frob_0");
  b.output("y");
  expect_load_error(b.bytes(), {"frob_0", "Frobnicate", "no refrt kernel"});
}

TEST(HostileModels, OpsetNewerThanImplemented) {
  expect_load_error(relu_model(99).bytes(), {"opset 99", "newer than implemented"});
  // Relu before 6 carried consumed_inputs: an old opset is accepted, the op's old version named and refused.
  expect_load_error(relu_model(5).bytes(), {"no refrt kernel for Relu", "opset 5", "from opset 6"});
}

TEST(HostileModels, UnsupportedIsItsOwnErrorKind) {
  ModelBuilder b;
  b.input("x", DType::kFloat32);
  b.node("Frobnicate", {"x"}, {"y"}, "frob_0");
  b.output("y");
  try {
    refrt::Session::load_bytes(b.bytes(), "hostile.onnx");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_EQ(e.context().stage, "refrt");
    EXPECT_EQ(e.context().node, "frob_0");
    EXPECT_EQ(e.context().op, "Frobnicate");
    EXPECT_NE(e.message().find("domain ai.onnx, opset 18"), std::string::npos) << e.what();
  }
}

TEST(HostileModels, OpOlderThanItsFirstVersion) {
  ModelBuilder b(8);
  b.input("c", DType::kBool);
  b.input("x", DType::kFloat32);
  b.node("Where", {"c", "x", "x"}, {"y"}, "where_0");
  b.output("y");
  expect_load_error(b.bytes(), {"where_0", "opset 8", "from opset 9"});
}

TEST(HostileModels, DomainNotImported) {
  ModelBuilder b;
  b.input("x", DType::kFloat32);
  b.node("Relu", {"x"}, {"y"}, "custom_0")->set_domain("com.example");
  b.output("y");
  expect_load_error(b.bytes(), {"custom_0", "com.example", "opset_import"});
}

TEST(HostileModels, AttributeOfTheWrongType) {
  ModelBuilder b;
  b.input("x", DType::kFloat32);
  auto* n = b.node("Concat", {"x", "x"}, {"y"}, "concat_float_axis");
  auto* a = n->add_attribute();
  a->set_name("axis");
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(1.5f);
  b.output("y");
  expect_load_error(b.bytes(), {"concat_float_axis", "'axis'", "must be of type int"});
}

TEST(HostileModels, GraphInputListedTwice) {
  ModelBuilder b = relu_model();
  b.input("x", DType::kFloat32, {2});
  expect_load_error(b.bytes(), {"'x'", "listed twice"});
}

// Sequences and optionals of tensors are read (sequence_errors_test.cc); maps and nested sequences are not.
TEST(HostileModels, MapOrNestedSequenceInput) {
  ModelBuilder b = relu_model();
  auto* vi = b.g().add_input();
  vi->set_name("map");
  vi->mutable_type()->mutable_map_type()->set_key_type(7);
  vi->mutable_type()->mutable_map_type()->mutable_value_type()->mutable_tensor_type()->set_elem_type(1);
  expect_load_error(b.bytes(), {"'map'", "maps, sparse tensors and nested sequences are not implemented"});
  ModelBuilder c = relu_model();
  vi = c.g().add_input();
  vi->set_name("seqseq");
  vi->mutable_type()
      ->mutable_sequence_type()
      ->mutable_elem_type()
      ->mutable_sequence_type()
      ->mutable_elem_type()
      ->mutable_tensor_type()
      ->set_elem_type(1);
  expect_load_error(c.bytes(), {"'seqseq'", "nested sequences are not implemented"});
}

TEST(HostileModels, ConstantWithoutValue) {
  ModelBuilder b;
  b.node("Constant", {}, {"c"}, "const_0");
  b.output("c");
  expect_load_error(b.bytes(), {"const_0", "Constant", "exactly one value attribute"});
}

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

void expect_run_error(const refrt::Session& s, const std::vector<Tensor>& inputs,
                      const std::vector<std::string>& needles) {
  try {
    s.run(inputs);
    ADD_FAILURE() << "expected a run error";
  } catch (const Error& e) {
    for (const auto& n : needles) EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what();
  }
}

TEST(HostileInputs, WrongCountDtypeAndShapeAreNamedErrors) {
  auto s = refrt::Session::load_bytes(relu_model().bytes(), "ok.onnx");
  expect_run_error(*s, {}, {"ok.onnx", "takes 1 inputs, 0 were given"});
  expect_run_error(*s, {Tensor()}, {"input 'x'", "undefined"});
  expect_run_error(*s, {make<int64_t>(DType::kInt64, {2}, {1, 2})}, {"input 'x'", "must be float32, got int64"});
  expect_run_error(*s, {make<float>(DType::kFloat32, {3}, {1, 2, 3})}, {"input 'x'", "[3]", "declares [2]"});
  expect_run_error(*s, {make<float>(DType::kFloat32, {1, 2}, {1, 2})}, {"input 'x'", "rank 2", "rank 1"});
  const auto y = s->run({make<float>(DType::kFloat32, {2}, {-1, 2})}).outputs[0];
  EXPECT_EQ(y.data<float>()[0], 0.f);
  EXPECT_EQ(y.data<float>()[1], 2.f);
}

TEST(HostileInputs, SymbolicDimMustAgreeAcrossInputs) {
  ModelBuilder b;
  b.input("a", DType::kFloat32, {-1, 2});  // dim_param "n"
  b.input("b", DType::kFloat32, {-1, 2});
  b.node("Add", {"a", "b"}, {"y"});
  b.output("y");
  auto s = refrt::Session::load_bytes(b.bytes(), "sym.onnx");
  EXPECT_EQ(s->inputs()[0].dims[0].param, "n");
  EXPECT_EQ(s->inputs()[0].dims[1].value, 2);
  expect_run_error(*s, {Tensor(DType::kFloat32, {3, 2}), Tensor(DType::kFloat32, {1, 2})},
                   {"dim 'n' is 3 in input 'a'", "but 1 in input 'b'"});
  EXPECT_EQ(s->run({Tensor(DType::kFloat32, {4, 2}, true), Tensor(DType::kFloat32, {4, 2}, true)}).outputs[0].shape(),
            (Shape{4, 2}));
}

TEST(HostileInputs, IntegerDivisionByZeroIsAnError) {
  ModelBuilder b;
  b.input("a", DType::kInt32);
  b.input("b", DType::kInt32);
  b.node("Div", {"a", "b"}, {"y"}, "div_0");
  b.output("y");
  auto s = refrt::Session::load_bytes(b.bytes(), "div.onnx");
  expect_run_error(*s, {make<int32_t>(DType::kInt32, {2}, {1, 2}), make<int32_t>(DType::kInt32, {2}, {1, 0})},
                   {"div.onnx", "div_0", "division by zero"});
}

TEST(HostileInputs, AbsurdReshapeIsAnError) {
  ModelBuilder b;
  b.input("x", DType::kFloat32);
  b.input("s", DType::kInt64);
  b.node("Reshape", {"x", "s"}, {"y"}, "reshape_0");
  b.output("y");
  auto s = refrt::Session::load_bytes(b.bytes(), "reshape.onnx");
  const Tensor x(DType::kFloat32, {4}, true);
  const int64_t huge = int64_t{1} << 40;
  expect_run_error(*s, {x, make<int64_t>(DType::kInt64, {3}, {huge, huge, huge})}, {"reshape_0", "cannot reshape"});
  expect_run_error(*s, {x, make<int64_t>(DType::kInt64, {2}, {-1, -1})}, {"reshape_0", "more than one -1"});
  expect_run_error(*s, {x, make<int64_t>(DType::kInt64, {1}, {-7})}, {"reshape_0", "-7"});
  expect_run_error(*s, {x, make<int64_t>(DType::kInt64, {1}, {3})}, {"reshape_0", "cannot reshape [4] to [3]"});
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
