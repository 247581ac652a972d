// Hostile inputs to the sequence and optional operators: positions out of range or of the wrong type,
// mixed dtypes inside a sequence, reading an empty optional, a sequence handed to a tensor op, run
// inputs that contradict the declared sequence type. Each must be a parity::Error naming the node and
// the op (or the input); nothing may crash.
#include <gtest/gtest.h>

#include "model_builder.h"
#include "parity/error.h"
#include "parity/refrt/session.h"
#include "parity/refrt/value.h"

namespace parity {
namespace {

using testing::make;
using testing::ModelBuilder;

Tensor f32(Shape shape, std::vector<float> v) { return make<float>(DType::kFloat32, std::move(shape), v); }
Tensor i64(Shape shape, std::vector<int64_t> v) { return make<int64_t>(DType::kInt64, std::move(shape), v); }

void seq_input(ModelBuilder& b, const std::string& name, DType elem) {
  auto* vi = b.g().add_input();
  vi->set_name(name);
  vi->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(
      static_cast<int>(elem));
}

// Loads `b`, runs it and expects a parity::Error whose message holds every needle.
void expect_error(const ModelBuilder& b, const std::vector<Tensor>& inputs, const refrt::ValueList& values,
                  const std::vector<std::string>& needles) {
  try {
    auto session = refrt::Session::load_bytes(b.bytes(), "sequences.onnx");
    session->run_values(inputs, values);
    ADD_FAILURE() << "no error; expected one mentioning " << needles.front();
  } catch (const Error& e) {
    const std::string what = e.what();
    for (const auto& n : needles) EXPECT_NE(what.find(n), std::string::npos) << "missing '" << n << "' in: " << what;
  }
}

// x, y (float) -> SequenceConstruct(x, y) -> `op`(s, extra...) -> out
ModelBuilder pair_then(const std::string& op, const std::vector<std::string>& extra, const std::string& out = "out") {
  ModelBuilder b(18);
  b.input("x", DType::kFloat32, {2});
  b.input("y", DType::kFloat32, {3});
  b.node("SequenceConstruct", {"x", "y"}, {"s"}, "make_seq");
  std::vector<std::string> in{"s"};
  in.insert(in.end(), extra.begin(), extra.end());
  b.node(op, in, {out}, "the_" + op);
  b.output(out);
  return b;
}

const std::vector<Tensor> kXY = {Tensor(DType::kFloat32, {2}, true), Tensor(DType::kFloat32, {3}, true)};

TEST(SequenceErrors, SequenceAtPositionOutOfRange) {
  for (int64_t p : std::vector<int64_t>{2, -3, INT64_MAX, INT64_MIN}) {
    ModelBuilder b = pair_then("SequenceAt", {"p"});
    b.initializer("p", i64({}, {p}));
    expect_error(b, kXY, {}, {"the_SequenceAt", "SequenceAt", "out of range [-2, 1]"});
  }
}

TEST(SequenceErrors, PositionMustBeAnIntegerScalar) {
  ModelBuilder b = pair_then("SequenceAt", {"p"});
  b.initializer("p", f32({}, {0}));
  expect_error(b, kXY, {}, {"the_SequenceAt", "position must be int32 or int64"});
  ModelBuilder c = pair_then("SequenceAt", {"p"});
  c.initializer("p", i64({2}, {0, 1}));
  expect_error(c, kXY, {}, {"the_SequenceAt", "position must be a scalar"});
}

TEST(SequenceErrors, InsertAndErasePositions) {
  ModelBuilder b = pair_then("SequenceInsert", {"x", "p"});
  b.initializer("p", i64({}, {3}));
  expect_error(b, kXY, {}, {"the_SequenceInsert", "out of range [-2, 2]"});
  ModelBuilder c = pair_then("SequenceErase", {"p"});
  c.initializer("p", i64({}, {-3}));
  expect_error(c, kXY, {}, {"the_SequenceErase", "out of range [-2, 1]"});
}

TEST(SequenceErrors, EraseFromEmptySequence) {
  ModelBuilder b(18);
  b.node("SequenceEmpty", {}, {"e"}, "empty");
  b.node("SequenceErase", {"e"}, {"out"}, "erase_it");
  b.output("out");
  expect_error(b, {}, {}, {"erase_it", "SequenceErase", "empty sequence"});
}

TEST(SequenceErrors, DtypeMismatchInsideASequence) {
  ModelBuilder b = pair_then("SequenceInsert", {"k"});
  b.input("k", DType::kInt64, {1});
  expect_error(b, {kXY[0], kXY[1], i64({1}, {7})}, {}, {"the_SequenceInsert", "int64", "the sequence holds float32"});
  ModelBuilder c(18);
  c.input("x", DType::kFloat32, {2});
  c.input("k", DType::kInt64, {1});
  c.node("SequenceConstruct", {"x", "k"}, {"out"}, "mixed");
  c.output("out");
  expect_error(c, {kXY[0], i64({1}, {7})}, {}, {"mixed", "SequenceConstruct", "one element type"});
}

TEST(SequenceErrors, EmptyOptionalReadByOptionalGetElement) {
  ModelBuilder b(18);
  auto* n = b.node("Optional", {}, {"none"}, "make_none");
  auto* a = n->add_attribute();
  a->set_name("type");
  a->set_type(onnx::AttributeProto::TYPE_PROTO);
  a->mutable_tp()->mutable_tensor_type()->set_elem_type(static_cast<int>(DType::kFloat32));
  b.node("OptionalGetElement", {"none"}, {"out"}, "get_it");
  b.output("out");
  expect_error(b, {}, {}, {"get_it", "OptionalGetElement", "'none' is empty"});
}

TEST(SequenceErrors, OptionalWithoutInputNeedsAType) {
  ModelBuilder b(18);
  b.node("Optional", {}, {"out"}, "untyped");
  b.output("out");
  expect_error(b, {}, {}, {"untyped", "Optional", "needs the attribute 'type'"});
}

TEST(SequenceErrors, SequenceHandedToATensorOp) {
  ModelBuilder b = pair_then("Add", {"x"});
  expect_error(b, kXY, {}, {"the_Add", "Add takes tensors only", "a sequence of 2 float32 tensors"});
}

TEST(SequenceErrors, TensorHandedToASequenceOp) {
  ModelBuilder b(18);
  b.input("x", DType::kFloat32, {2});
  b.node("SequenceLength", {"x"}, {"out"}, "length_of_tensor");
  b.output("out");
  expect_error(b, {kXY[0]}, {}, {"length_of_tensor", "must be a sequence, got a float32 tensor"});
}

TEST(SequenceErrors, SplitAndConcatShapes) {
  ModelBuilder b(18);
  b.input("x", DType::kFloat32, {2, 3});
  b.node("SplitToSequence", {"x", "k"}, {"out"}, "split_zero");
  b.initializer("k", i64({}, {0}));
  b.output("out");
  expect_error(b, {Tensor(DType::kFloat32, {2, 3}, true)}, {}, {"split_zero", "must be positive"});
  ModelBuilder c(18);
  c.input("x", DType::kFloat32, {2, 3});
  c.node("SplitToSequence", {"x", "k"}, {"out"}, "split_sum");
  c.initializer("k", i64({2}, {1, 2}));
  c.output("out");
  expect_error(c, {Tensor(DType::kFloat32, {2, 3}, true)}, {}, {"split_sum", "sum to 3, the axis has 2"});
  ModelBuilder d = pair_then("ConcatFromSequence", {});
  ModelBuilder::attr(d.g().mutable_node(1), "axis", int64_t{0});
  ModelBuilder::attr(d.g().mutable_node(1), "new_axis", int64_t{1});
  expect_error(d, kXY, {}, {"the_ConcatFromSequence", "element #1 has shape [3]"});
}

// A zero-element input may have an axis of any length: splitting it must not allocate a piece per entry.
TEST(SequenceErrors, SplitOfAHugeEmptyAxisIsRefused) {
  for (bool with_split : {false, true}) {
    ModelBuilder b(18);
    b.input("x", DType::kFloat32, {int64_t{1} << 40, 0});
    b.node("SplitToSequence", with_split ? std::vector<std::string>{"x", "k"} : std::vector<std::string>{"x"}, {"out"},
           "split_huge");
    b.initializer("k", i64({}, {1}));
    b.output("out");
    expect_error(b, {Tensor(DType::kFloat32, {int64_t{1} << 40, 0})}, {}, {"split_huge", "more than refrt's limit"});
  }
}

TEST(SequenceErrors, RunInputsAgainstTheDeclaredSequence) {
  ModelBuilder b(18);
  seq_input(b, "s", DType::kFloat32);
  b.node("SequenceLength", {"s"}, {"n"});
  b.output("n");
  auto session = refrt::Session::load_bytes(b.bytes(), "sequences.onnx");
  auto fails = [&](const refrt::ValueList& values, const std::string& needle) {
    try {
      session->run_values({Tensor()}, values);
      ADD_FAILURE() << "no error; expected " << needle;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  fails({}, "input 's' (#0) is a sequence: pass it in the run's values");
  fails({refrt::Value::sequence({kXY[0], i64({1}, {1})}, DType::kFloat32)}, "element #1 is int64");
  fails({refrt::Value::optional_tensor(kXY[0])}, "is declared a sequence, got an optional holding");
  const auto ok = session->run_values({Tensor()}, {refrt::Value::sequence({kXY[0], kXY[1], kXY[0]}, DType::kFloat32)});
  ASSERT_EQ(ok.outputs.size(), 1u);
  EXPECT_EQ(ok.outputs[0].data<int64_t>()[0], 3);
  EXPECT_TRUE(ok.values.empty());  // the only output is a tensor
}

TEST(SequenceErrors, SequenceMapLengthsDiffer) {
  ModelBuilder b(18);
  seq_input(b, "s", DType::kFloat32);
  seq_input(b, "t", DType::kFloat32);
  auto* n = b.node("SequenceMap", {"s", "t"}, {"out"}, "map_two");
  auto* a = n->add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto::GRAPH);
  auto* g = a->mutable_g();
  g->set_name("body");
  for (const char* name : {"e", "f"}) g->add_input()->set_name(name);
  g->add_output()->set_name("o");
  auto* add = g->add_node();
  add->set_op_type("Add");
  add->add_input("e");
  add->add_input("f");
  add->add_output("o");
  b.output("out");
  const auto two = refrt::Value::sequence({kXY[0], kXY[0]}, DType::kFloat32);
  const auto one = refrt::Value::sequence({kXY[0]}, DType::kFloat32);
  expect_error(b, {Tensor(), Tensor()}, {two, one}, {"map_two", "SequenceMap", "input #1 is a sequence of 1 tensors"});
}

}  // namespace
}  // namespace parity
