// Exporter optimisation passes on small hand-built graphs. Each pass is checked for its structural
// effect (nodes, initializers, names kept) and for numerical equivalence: the unoptimised model run on
// refrt (with refrt's own load-time folding off) is the oracle for the optimised one; folded constants
// are also compared with values computed by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "../../exporter/src/fold_eval.h"
#include "../../exporter/src/passes.h"
#include "../refrt/model_builder.h"
#include "onnx/onnx-ml.pb.h"
#include "parity/exporter/export.h"
#include "parity/internal/onnx_tensor.h"
#include "parity/refrt/session.h"
#include "pt2_fixture.h"

namespace parity {
namespace {

using exporter::OptimizeOptions;
using testing::make;
using testing::ModelBuilder;

// ---- helpers ----

void value_info(ModelBuilder& b, const std::string& name, DType dtype, const std::vector<int64_t>& dims) {
  auto* vi = b.g().add_value_info();
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(static_cast<int>(dtype));
  auto* shape = tt->mutable_shape();
  for (int64_t d : dims) d < 0 ? shape->add_dim()->set_dim_param("n") : shape->add_dim()->set_dim_value(d);
}

void graph_attr(onnx::NodeProto* n, const std::string& name, const onnx::GraphProto& g) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g() = g;
}

std::vector<Tensor> run(const onnx::ModelProto& m, const std::vector<Tensor>& inputs) {
  auto s = refrt::Session::load_bytes(m.SerializeAsString(), "passes.onnx", {.fold_constants = false});
  return s->run(inputs).outputs;
}

// The optimised model computes exactly what the original does, on every input set given.
void expect_same_results(const onnx::ModelProto& before, const onnx::ModelProto& after,
                         const std::vector<std::vector<Tensor>>& input_sets) {
  for (const auto& inputs : input_sets) {
    const auto want = run(before, inputs), got = run(after, inputs);
    ASSERT_EQ(want.size(), got.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got[i].dtype(), want[i].dtype()) << "output " << i;
      EXPECT_EQ(got[i].shape(), want[i].shape()) << "output " << i;
      EXPECT_TRUE(got[i].bitwise_equal(want[i])) << "output " << i;
    }
  }
}

int count_op(const onnx::GraphProto& g, const std::string& op) {
  return static_cast<int>(
      std::count_if(g.node().begin(), g.node().end(), [&](const auto& n) { return n.op_type() == op; }));
}

const onnx::NodeProto* producer_of(const onnx::GraphProto& g, const std::string& value) {
  for (const auto& n : g.node())
    for (const auto& o : n.output())
      if (o == value) return &n;
  return nullptr;
}

const onnx::TensorProto* initializer(const onnx::GraphProto& g, const std::string& name) {
  for (const auto& t : g.initializer())
    if (t.name() == name) return &t;
  return nullptr;
}

std::vector<int64_t> int64_initializer(const onnx::GraphProto& g, const std::string& name) {
  const auto* t = initializer(g, name);
  if (!t) return {-999};
  const Tensor v = tensor_from_proto(*t, name);
  return *exporter::int_values(v);
}

Tensor floats(Shape shape, uint32_t seed = 1) {
  const int64_t n = checked_numel(shape);
  return make<float>(DType::kFloat32, std::move(shape), testing::ramp(n, seed));
}

std::vector<int64_t> ints_attribute(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return {a.ints().begin(), a.ints().end()};
  return {};
}

Tensor i64(Shape shape, const std::vector<int64_t>& v) { return make<int64_t>(DType::kInt64, std::move(shape), v); }

// ---- remove_dead_nodes ----

TEST(PassesDeadCode, RemovesUnreachableNodesAndUnusedInitializers) {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {2, 3});
  b.input("unused_input", DType::kFloat32, {1});
  b.initializer("w", floats({3}));
  b.initializer("never_read", floats({4}));
  b.node("Add", {"x", "w"}, {"y"}, "add");
  b.node("Exp", {"x"}, {"dead"}, "exp");
  b.node("Mul", {"dead", "w"}, {"dead2"}, "mul");
  value_info(b, "dead", DType::kFloat32, {2, 3});
  b.output("y");
  onnx::ModelProto m = b.model;
  EXPECT_EQ(exporter::remove_dead_nodes(*m.mutable_graph()), 3);  // exp, mul, never_read
  const auto& g = m.graph();
  ASSERT_EQ(g.node_size(), 1);
  EXPECT_EQ(g.node(0).name(), "add");
  ASSERT_EQ(g.initializer_size(), 1);
  EXPECT_EQ(g.initializer(0).name(), "w");
  EXPECT_EQ(g.input_size(), 2);       // the signature stays
  EXPECT_EQ(g.value_info_size(), 0);  // no type for a value that no longer exists
  expect_same_results(b.model, m, {{floats({2, 3}), floats({1})}});
  EXPECT_EQ(exporter::remove_dead_nodes(*m.mutable_graph()), 0);
}

// If(c) whose then-branch reads `a`, computed outside and read nowhere else: `a` stays alive.
ModelBuilder if_reading_outer_value() {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {3});
  b.input("c", DType::kBool, {});
  b.node("Neg", {"x"}, {"a"}, "neg_outer");
  b.node("Exp", {"x"}, {"outer_dead"}, "exp_outer");
  ModelBuilder then_b, else_b;
  then_b.node("Add", {"a", "x"}, {"then_sum"}, "then_add");
  then_b.node("Relu", {"a"}, {"then_dead"}, "then_relu");  // dead inside the branch
  then_b.node("Identity", {"then_sum"}, {"then_out"}, "then_id");
  then_b.output("then_out");
  else_b.node("Identity", {"x"}, {"else_out"}, "else_id");
  else_b.output("else_out");
  auto* n = b.node("If", {"c"}, {"y"}, "if");
  graph_attr(n, "then_branch", then_b.g());
  graph_attr(n, "else_branch", else_b.g());
  b.output("y");
  return b;
}

TEST(PassesDeadCode, OuterValueReadOnlyInsideASubgraphStaysAlive) {
  const ModelBuilder b = if_reading_outer_value();
  onnx::ModelProto m = b.model;
  EXPECT_EQ(exporter::remove_dead_nodes(*m.mutable_graph()), 2);  // exp_outer, then_relu
  const auto& g = m.graph();
  ASSERT_EQ(g.node_size(), 2);
  EXPECT_EQ(g.node(0).name(), "neg_outer");
  EXPECT_EQ(g.node(1).op_type(), "If");
  EXPECT_EQ(g.node(1).attribute(0).g().node_size(), 2);
  const Tensor x = floats({3});
  expect_same_results(b.model, m,
                      {{x, Tensor::scalar<uint8_t>(DType::kBool, 1)}, {x, Tensor::scalar<uint8_t>(DType::kBool, 0)}});
}

// ---- fold_constants ----

TEST(PassesFold, ShapeArithmeticOfAStaticInputBecomesOneInitializer) {
  // Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 1)), [-1])): the target [3, -1] is known at export.
  ModelBuilder b;
  b.input("x", DType::kFloat32, {2, 3, 4});
  b.initializer("one", i64({}, {1}));
  b.initializer("axes0", i64({1}, {0}));
  b.initializer("minus_one", i64({1}, {-1}));
  b.node("Shape", {"x"}, {"shape"});
  b.node("Gather", {"shape", "one"}, {"dim1"});
  b.node("Unsqueeze", {"dim1", "axes0"}, {"dim1_1d"});
  b.node("Concat", {"dim1_1d", "minus_one"}, {"target"});
  ModelBuilder::attr(b.g().mutable_node(3), "axis", int64_t{0});
  b.node("Reshape", {"x", "target"}, {"y"});
  b.output("y");
  onnx::ModelProto m = b.model;
  EXPECT_EQ(exporter::fold_constants(*m.mutable_graph()), 4);
  ASSERT_EQ(m.graph().node_size(), 1);
  EXPECT_EQ(m.graph().node(0).op_type(), "Reshape");
  EXPECT_EQ(int64_initializer(m.graph(), "shape"), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(int64_initializer(m.graph(), "dim1"), (std::vector<int64_t>{3}));
  EXPECT_EQ(initializer(m.graph(), "dim1")->dims_size(), 0);  // a scalar index gathers a scalar
  EXPECT_EQ(int64_initializer(m.graph(), "target"), (std::vector<int64_t>{3, -1}));
  expect_same_results(b.model, m, {{floats({2, 3, 4})}});
  exporter::remove_dead_nodes(*m.mutable_graph());
  EXPECT_EQ(m.graph().initializer_size(), 1);  // only `target` is still read
}

// Each evaluated op against values worked out by hand; every folded value feeds an Identity output so
// the runtime comparison covers it too.
TEST(PassesFold, EachOpMatchesHandComputedValues) {
  ModelBuilder b;
  b.initializer("a", i64({2, 2}, {7, -7, 9, 10}));
  b.initializer("two", i64({}, {2}));
  b.initializer("row", i64({2}, {1, -3}));
  b.initializer("f", make<float>(DType::kFloat32, {3}, {1.5f, -2.75f, 3.0f}));
  b.initializer("ten", i64({1}, {10}));
  b.initializer("start", i64({}, {1}));
  b.initializer("limit", i64({}, {8}));
  b.initializer("step", i64({}, {3}));
  b.initializer("idx", i64({2}, {-1, 0}));
  b.initializer("s_start", i64({1}, {-1}));
  b.initializer("s_end", i64({1}, {-100}));
  b.initializer("s_step", i64({1}, {-2}));
  b.initializer("seq", i64({5}, {10, 11, 12, 13, 14}));
  b.initializer("shape23", i64({2}, {2, 3}));
  b.initializer("axes01", i64({2}, {0, 1}));
  b.initializer("col", i64({2, 1}, {5, 6}));
  b.node("Div", {"a", "two"}, {"div"});  // truncation toward zero: -7/2 = -3
  b.node("Sub", {"a", "row"}, {"sub"});  // broadcast of a row
  b.node("Mul", {"a", "col"}, {"mul"});  // broadcast of a column
  b.node("Add", {"two", "ten"}, {"add"});
  b.node("Neg", {"row"}, {"neg"});
  b.node("Cast", {"f"}, {"cast"});  // float -> int64 truncates
  ModelBuilder::attr(b.g().mutable_node(5), "to", int64_t{7});
  b.node("Range", {"start", "limit", "step"}, {"range"});
  b.node("Gather", {"seq", "idx"}, {"gather"});
  b.node("Slice", {"seq", "s_start", "s_end", "", "s_step"}, {"slice"});
  auto* cos = b.node("ConstantOfShape", {"shape23"}, {"filled"});
  auto* value = cos->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  tensor_to_proto(i64({1}, {4}), "", value->mutable_t());
  b.node("Unsqueeze", {"ten", "axes01"}, {"unsq"});
  b.node("Squeeze", {"unsq", "axes01"}, {"sq"});
  b.node("Size", {"a"}, {"size"});
  const std::vector<std::pair<std::string, std::vector<int64_t>>> expected = {{"div", {3, -3, 4, 5}},
                                                                              {"sub", {6, -4, 8, 13}},
                                                                              {"mul", {35, -35, 54, 60}},
                                                                              {"add", {12}},
                                                                              {"neg", {-1, 3}},
                                                                              {"cast", {1, -2, 3}},
                                                                              {"range", {1, 4, 7}},
                                                                              {"gather", {14, 10}},
                                                                              {"slice", {14, 12, 10}},
                                                                              {"filled", {4, 4, 4, 4, 4, 4}},
                                                                              {"unsq", {10}},
                                                                              {"sq", {10}},
                                                                              {"size", {4}}};
  for (const auto& [name, _] : expected) {
    b.node("Identity", {name}, {name + "_out"});
    b.output(name + "_out");
  }
  onnx::ModelProto m = b.model;
  EXPECT_EQ(exporter::fold_constants(*m.mutable_graph()), static_cast<int>(expected.size()));
  for (const auto& [name, values] : expected) EXPECT_EQ(int64_initializer(m.graph(), name), values) << name;
  EXPECT_EQ(initializer(m.graph(), "unsq")->dims_size(), 3);  // [1, 1, 1]
  EXPECT_EQ(initializer(m.graph(), "sq")->dims_size(), 1);
  EXPECT_EQ(initializer(m.graph(), "size")->dims_size(), 0);
  EXPECT_EQ(m.graph().node_size(), static_cast<int>(expected.size()));  // only the output Identities
  expect_same_results(b.model, m, {{}});
}

// Pow of float constants (bloom's ALiBi slopes) folds to what refrt's Pow computes: the refrt run of the
// unfolded model is the oracle, and the powers of two are checked by hand. Integer powers stay.
TEST(PassesFold, FloatPowFoldsIntegerPowStays) {
  ModelBuilder b;
  b.initializer("base", make<float>(DType::kFloat32, {}, {0.25f}));
  b.initializer("exps", make<float>(DType::kFloat32, {4}, {1.0f, 2.0f, 3.0f, 4.0f}));
  b.initializer("odd", make<float>(DType::kFloat32, {2}, {1.1f, 7.3f}));
  b.initializer("frac", make<float>(DType::kFloat32, {}, {0.37f}));
  b.initializer("ibase", i64({1}, {3}));
  b.node("Pow", {"base", "exps"}, {"slopes"});
  b.node("Pow", {"odd", "frac"}, {"roots"});
  b.node("Pow", {"ibase", "ibase"}, {"ipow"});
  for (const char* v : {"slopes", "roots", "ipow"}) {
    b.node("Identity", {v}, {std::string(v) + "_out"});
    b.output(std::string(v) + "_out");
  }
  onnx::ModelProto m = b.model;
  EXPECT_EQ(exporter::fold_constants(*m.mutable_graph()), 2);
  const auto slopes = tensor_from_proto(*initializer(m.graph(), "slopes"), "slopes");
  EXPECT_TRUE(slopes.bitwise_equal(make<float>(DType::kFloat32, {4}, {0.25f, 0.0625f, 0.015625f, 0.00390625f})));
  EXPECT_NE(initializer(m.graph(), "roots"), nullptr);
  EXPECT_EQ(producer_of(m.graph(), "ipow")->op_type(), "Pow");
  expect_same_results(b.model, m, {{}});
}

TEST(PassesFold, LeavesLargeDynamicInvalidAndOutputValuesAlone) {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {-1, 3});  // dynamic first dim: Shape(x) is not a constant
  b.initializer("big_shape", i64({1}, {2048}));
  b.initializer("weight", floats({40, 40}));
  b.initializer("zero", i64({}, {0}));
  b.initializer("nine", i64({}, {9}));
  b.node("Shape", {"x"}, {"shape"});
  b.node("Cast", {"shape"}, {"shape_f"});
  ModelBuilder::attr(b.g().mutable_node(1), "to", int64_t{1});
  b.node("ConstantOfShape", {"big_shape"}, {"big"});  // over the size limit
  b.node("Identity", {"weight"}, {"weight_copy"});    // never duplicate a weight
  b.node("Div", {"nine", "zero"}, {"bad"});           // the runtime reports it, not the exporter
  b.node("Neg", {"nine"}, {"out"});                   // a graph output keeps its node
  b.output("shape_f");
  b.output("big");
  b.output("weight_copy_sum");
  b.node("ReduceSum", {"weight_copy"}, {"weight_copy_sum"});
  b.output("out");
  b.node("Add", {"bad", "nine"}, {"bad_plus"});
  onnx::ModelProto m = b.model;
  EXPECT_EQ(exporter::fold_constants(*m.mutable_graph()), 0);
  EXPECT_EQ(m.graph().initializer_size(), b.model.graph().initializer_size());
}

TEST(PassesFold, ParametersAreNotFoldedAwayButTheirShapesAre) {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {4});
  b.initializer("bn.running_var", floats({4}));
  b.initializer("minus", make<float>(DType::kFloat32, {}, {-1.0f}));
  b.node("Mul", {"bn.running_var", "minus"}, {"scaled"});
  b.node("Add", {"x", "scaled"}, {"y"});
  b.node("Shape", {"bn.running_var"}, {"dims"});
  b.node("Identity", {"dims"}, {"dims_out"});
  b.output("y");
  b.output("dims_out");
  OptimizeOptions options;
  options.protected_names = {"bn.running_var"};
  onnx::ModelProto m = b.model;
  EXPECT_EQ(exporter::fold_constants(*m.mutable_graph(), options), 1);  // only the Shape
  EXPECT_EQ(int64_initializer(m.graph(), "dims"), (std::vector<int64_t>{4}));
  EXPECT_EQ(count_op(m.graph(), "Mul"), 1);
  expect_same_results(b.model, m, {{floats({4})}});
  onnx::ModelProto unprotected = b.model;  // without protection the Mul folds (hand check: -var)
  EXPECT_EQ(exporter::fold_constants(*unprotected.mutable_graph()), 2);
  const Tensor scaled = tensor_from_proto(*initializer(unprotected.graph(), "scaled"), "scaled");
  const Tensor var = tensor_from_proto(*initializer(b.model.graph(), "bn.running_var"), "var");
  for (int i = 0; i < 4; ++i) EXPECT_EQ(scaled.data<float>()[i], -var.data<float>()[i]);
}

TEST(PassesFold, ShapeOfAStaticIntermediateAndFoldingInsideASubgraph) {
  // value_info declares h static, so Shape(h) folds; inside the branch, Mul(outer constant, 2) folds.
  ModelBuilder b;
  b.input("x", DType::kFloat32, {2, 3});
  b.input("c", DType::kBool, {});
  b.initializer("three", i64({1}, {3}));
  b.node("Relu", {"x"}, {"h"});
  value_info(b, "h", DType::kFloat32, {2, 3});
  b.node("Shape", {"h"}, {"hs"});
  ModelBuilder then_b, else_b;
  then_b.initializer("two", i64({}, {2}));
  then_b.node("Mul", {"three", "two"}, {"six"});
  then_b.node("Concat", {"hs", "six"}, {"then_out"});
  ModelBuilder::attr(then_b.g().mutable_node(1), "axis", int64_t{0});
  then_b.output("then_out");
  else_b.node("Identity", {"hs"}, {"else_out"});
  else_b.output("else_out");
  auto* n = b.node("If", {"c"}, {"y"}, "if");
  graph_attr(n, "then_branch", then_b.g());
  graph_attr(n, "else_branch", else_b.g());
  b.output("y");
  b.output("h");
  onnx::ModelProto m = b.model;
  EXPECT_EQ(exporter::fold_constants(*m.mutable_graph()), 2);  // hs, six (then_out is an output)
  EXPECT_EQ(int64_initializer(m.graph(), "hs"), (std::vector<int64_t>{2, 3}));
  const auto& then_g = m.graph().node(1).attribute(0).g();
  EXPECT_EQ(int64_initializer(then_g, "six"), (std::vector<int64_t>{6}));
  EXPECT_EQ(then_g.node_size(), 1);
  const Tensor x = floats({2, 3});
  expect_same_results(b.model, m,
                      {{x, Tensor::scalar<uint8_t>(DType::kBool, 1)}, {x, Tensor::scalar<uint8_t>(DType::kBool, 0)}});
}

TEST(PassesFold, EvaluatorRefusesWhatTheRuntimeWouldReject) {
  onnx::NodeProto gather;
  gather.set_op_type("Gather");
  const Tensor data = i64({3}, {1, 2, 3}), out_of_range = i64({}, {3});
  EXPECT_FALSE(exporter::evaluate_constant(gather, {&data, &out_of_range}, 1024));
  onnx::NodeProto cast;
  cast.set_op_type("Cast");
  ModelBuilder::attr(&cast, "to", int64_t{6});  // int32
  const Tensor huge = make<float>(DType::kFloat32, {1}, {1e20f});
  EXPECT_FALSE(exporter::evaluate_constant(cast, {&huge}, 1024));
  onnx::NodeProto reshape;
  reshape.set_op_type("Reshape");
  const Tensor bad_target = i64({1}, {4});
  EXPECT_FALSE(exporter::evaluate_constant(reshape, {&data, &bad_target}, 1024));
  onnx::NodeProto add;
  add.set_op_type("Add");
  const Tensor mixed = make<int32_t>(DType::kInt32, {1}, {1});
  EXPECT_FALSE(exporter::evaluate_constant(add, {&data, &mixed}, 1024));
}

// ---- eliminate_common_subexpressions ----

TEST(PassesCse, DuplicateNodesAndAxisConstantsMerge) {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {2, 3});
  b.initializer("axes_a", i64({1}, {0}));
  b.initializer("axes_b", i64({1}, {0}));  // same bytes: merges into axes_a
  b.initializer("axes_c", i64({1}, {1}));  // different value: stays
  b.node("Unsqueeze", {"x", "axes_a"}, {"u1"}, "u1");
  b.node("Unsqueeze", {"x", "axes_b"}, {"u2"}, "u2");  // equal to u1 once axes_b reads axes_a
  b.node("Unsqueeze", {"x", "axes_c"}, {"u3"}, "u3");
  b.node("Softmax", {"x"}, {"s1"}, "s1");
  ModelBuilder::attr(b.g().mutable_node(3), "axis", int64_t{1});
  b.node("Softmax", {"x"}, {"s2"}, "s2");  // other attribute: stays
  ModelBuilder::attr(b.g().mutable_node(4), "axis", int64_t{0});
  b.node("Add", {"u1", "u2"}, {"y"});
  b.node("Sub", {"s1", "s2"}, {"z"});
  b.output("y");
  b.output("z");
  b.output("u3");
  onnx::ModelProto m = b.model;
  EXPECT_EQ(exporter::eliminate_common_subexpressions(*m.mutable_graph()), 2);
  const auto& g = m.graph();
  EXPECT_EQ(g.initializer_size(), 2);
  EXPECT_EQ(count_op(g, "Unsqueeze"), 2);
  EXPECT_EQ(count_op(g, "Softmax"), 2);
  const auto* add = producer_of(g, "y");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->input(0), "u1");
  EXPECT_EQ(add->input(1), "u1");
  expect_same_results(b.model, m, {{floats({2, 3})}});
}

TEST(PassesCse, ProtectedDuplicateBecomesAnIdentity) {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {4});
  b.node("Exp", {"x"}, {"e1"});
  b.node("Exp", {"x"}, {"e2"});  // an FX value (value_info): its name stays
  value_info(b, "e2", DType::kFloat32, {4});
  b.node("Add", {"e1", "e2"}, {"y"});
  b.output("y");
  onnx::ModelProto m = b.model;
  EXPECT_EQ(exporter::eliminate_common_subexpressions(*m.mutable_graph()), 1);
  const auto* e2 = producer_of(m.graph(), "e2");
  ASSERT_NE(e2, nullptr);
  EXPECT_EQ(e2->op_type(), "Identity");
  EXPECT_EQ(e2->input(0), "e1");
  expect_same_results(b.model, m, {{floats({4})}});
}

TEST(PassesCse, RandomOpsAreNeverMerged) {  // structural only: refrt has no random kernels
  ModelBuilder b;
  b.input("x", DType::kFloat32, {4});
  b.node("RandomUniformLike", {"x"}, {"r1"});
  b.node("RandomUniformLike", {"x"}, {"r2"});
  b.node("Dropout", {"x", "", "train"}, {"d1"});
  b.node("Dropout", {"x", "", "train"}, {"d2"});
  b.input("train", DType::kBool, {});
  b.node("Sub", {"r1", "r2"}, {"r"});
  b.node("Sub", {"d1", "d2"}, {"d"});
  b.output("r");
  b.output("d");
  onnx::ModelProto m = b.model;
  EXPECT_EQ(exporter::eliminate_common_subexpressions(*m.mutable_graph()), 0);
}

TEST(PassesCse, SubgraphsAreMergedWithinButNodesHoldingThemAreNot) {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {3});
  b.input("c", DType::kBool, {});
  ModelBuilder branch;
  branch.node("Neg", {"x"}, {"n1"});
  branch.node("Neg", {"x"}, {"n2"});
  branch.node("Add", {"n1", "n2"}, {"out"});
  branch.output("out");
  // The same branch under a prefix: value names stay unique across the whole model.
  auto prefixed = [&](const std::string& prefix) {
    onnx::GraphProto g = branch.g();
    for (auto& n : *g.mutable_node()) {
      for (auto& o : *n.mutable_output()) o = prefix + o;
      for (auto& in : *n.mutable_input())
        if (in != "x") in = prefix + in;
    }
    g.mutable_output(0)->set_name(prefix + "out");
    return g;
  };
  for (const std::string name : {"if1", "if2"}) {
    auto* n = b.node("If", {"c"}, {name}, name);
    graph_attr(n, "then_branch", prefixed(name + "_then_"));
    graph_attr(n, "else_branch", prefixed(name + "_else_"));
  }
  b.node("Add", {"if1", "if2"}, {"y"});
  b.output("y");
  onnx::ModelProto m = b.model;
  EXPECT_EQ(exporter::eliminate_common_subexpressions(*m.mutable_graph()), 4);  // one Neg per branch
  EXPECT_EQ(count_op(m.graph(), "If"), 2);
  EXPECT_EQ(m.graph().node(0).attribute(0).g().node_size(), 2);
  const Tensor x = floats({3});
  expect_same_results(b.model, m,
                      {{x, Tensor::scalar<uint8_t>(DType::kBool, 1)}, {x, Tensor::scalar<uint8_t>(DType::kBool, 0)}});
}

// ---- remove_identities ----

TEST(PassesIdentity, UnprotectedOutputIsReplacedByItsInput) {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {3});
  b.node("Relu", {"x"}, {"a"});
  value_info(b, "a", DType::kFloat32, {3});
  b.node("Identity", {"a"}, {"tmp"});
  b.node("Exp", {"tmp"}, {"y"});
  b.output("y");
  onnx::ModelProto m = b.model;
  EXPECT_EQ(exporter::remove_identities(*m.mutable_graph()), 1);
  ASSERT_EQ(m.graph().node_size(), 2);
  EXPECT_EQ(producer_of(m.graph(), "y")->input(0), "a");
  EXPECT_NE(producer_of(m.graph(), "a"), nullptr);  // the FX name stays
  expect_same_results(b.model, m, {{floats({3})}});
}

TEST(PassesIdentity, ProtectedOutputIsProducedDirectlyUnderItsName) {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {3});
  b.node("Relu", {"x"}, {"relu_tmp"}, "relu");
  b.node("Identity", {"relu_tmp"}, {"y"});
  b.output("y");
  onnx::ModelProto m = b.model;
  EXPECT_EQ(exporter::remove_identities(*m.mutable_graph()), 1);
  ASSERT_EQ(m.graph().node_size(), 1);
  EXPECT_EQ(m.graph().node(0).name(), "relu");
  EXPECT_EQ(m.graph().node(0).output(0), "y");
  EXPECT_EQ(m.graph().output(0).name(), "y");
  expect_same_results(b.model, m, {{floats({3})}});
}

TEST(PassesIdentity, NamesThatMustStayKeepTheirIdentity) {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {3});
  b.initializer("w", floats({3}));
  b.node("Identity", {"x"}, {"y_in"});  // graph input -> graph output
  b.node("Identity", {"w"}, {"y_w"});   // initializer -> graph output
  b.node("Relu", {"x"}, {"fx_a"});
  value_info(b, "fx_a", DType::kFloat32, {3});
  b.node("Identity", {"fx_a"}, {"y_a"});  // both names are protected
  b.node("Neg", {"x"}, {"shared"});
  b.node("Identity", {"shared"}, {"y_s"});  // `shared` has another reader
  b.node("Exp", {"shared"}, {"y_e"});
  for (const char* o : {"y_in", "y_w", "y_a", "y_s", "y_e"}) b.output(o);
  onnx::ModelProto m = b.model;
  // An output aliasing an input or an initializer keeps its Identity (ONNX needs a node there); y_a and
  // y_s are made by Relu and Neg directly (fx_a's value_info alone does not keep the alias; Exp reads y_s).
  EXPECT_EQ(exporter::remove_identities(*m.mutable_graph()), 2);
  EXPECT_EQ(count_op(m.graph(), "Identity"), 2);
  EXPECT_EQ(producer_of(m.graph(), "y_in")->op_type(), "Identity");
  EXPECT_EQ(producer_of(m.graph(), "y_w")->op_type(), "Identity");
  EXPECT_EQ(producer_of(m.graph(), "y_a")->op_type(), "Relu");
  EXPECT_EQ(producer_of(m.graph(), "y_s")->op_type(), "Neg");
  EXPECT_EQ(producer_of(m.graph(), "y_e")->input(0), "y_s");
  EXPECT_EQ(m.graph().value_info_size(), 0);  // fx_a no longer exists
  for (int i = 0; i < 5; ++i) EXPECT_EQ(m.graph().output(i).name(), b.model.graph().output(i).name());
  expect_same_results(b.model, m, {{floats({3})}});
}

TEST(PassesIdentity, AliasesOfIntermediatesGoAndOutputAliasesKeepOne) {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {3});
  b.node("Relu", {"x"}, {"a"});
  value_info(b, "a", DType::kFloat32, {3});
  b.node("Identity", {"a"}, {"to"});  // a same-dtype `to` after simplify_shape_chains: both FX values
  value_info(b, "to", DType::kFloat32, {3});
  b.node("Identity", {"to"}, {"dropout"});
  value_info(b, "dropout", DType::kFloat32, {3});
  b.node("Exp", {"dropout"}, {"e"});
  b.node("Identity", {"e"}, {"out1"});
  b.node("Identity", {"e"}, {"out2"});  // two outputs, one value: exactly one Identity stays
  b.output("out1");
  b.output("out2");
  onnx::ModelProto m = b.model;
  exporter::optimize(m);
  EXPECT_EQ(count_op(m.graph(), "Identity"), 1);
  EXPECT_EQ(producer_of(m.graph(), "out1")->op_type(), "Exp");
  EXPECT_EQ(producer_of(m.graph(), "out1")->input(0), "a");
  EXPECT_EQ(producer_of(m.graph(), "out2")->input(0), "out1");
  EXPECT_EQ(m.graph().value_info_size(), 1);  // only `a` is still a value
  EXPECT_EQ(m.graph().output(0).name(), "out1");
  EXPECT_EQ(m.graph().output(1).name(), "out2");
  expect_same_results(b.model, m, {{floats({3})}});
}

TEST(PassesIdentity, SubgraphOutputsStayDistinct) {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {3});
  b.input("c", DType::kBool, {});
  ModelBuilder then_b, else_b;
  then_b.node("Neg", {"x"}, {"t"});
  then_b.node("Identity", {"t"}, {"then_o1"});
  then_b.node("Identity", {"t"}, {"then_o2"});
  then_b.output("then_o1");
  then_b.output("then_o2");
  else_b.node("Exp", {"x"}, {"e"});
  else_b.node("Identity", {"e"}, {"else_o1"});
  else_b.node("Identity", {"x"}, {"else_o2"});
  else_b.output("else_o1");
  else_b.output("else_o2");
  auto* n = b.node("If", {"c"}, {"y1", "y2"}, "if");
  graph_attr(n, "then_branch", then_b.g());
  graph_attr(n, "else_branch", else_b.g());
  b.output("y1");
  b.output("y2");
  onnx::ModelProto m = b.model;
  // Neg produces then_o1 and Exp else_o1 directly; then_o2 stays an alias of then_o1 and else_o2 of x.
  EXPECT_EQ(exporter::remove_identities(*m.mutable_graph()), 2);
  const auto& then_g = m.graph().node(0).attribute(0).g();
  const auto& else_g = m.graph().node(0).attribute(1).g();
  EXPECT_EQ(then_g.node_size(), 2);
  EXPECT_EQ(producer_of(then_g, "then_o2")->input(0), "then_o1");
  EXPECT_EQ(else_g.node_size(), 2);
  EXPECT_EQ(producer_of(else_g, "else_o1")->op_type(), "Exp");
  const Tensor x = floats({3});
  expect_same_results(b.model, m,
                      {{x, Tensor::scalar<uint8_t>(DType::kBool, 1)}, {x, Tensor::scalar<uint8_t>(DType::kBool, 0)}});
}

// ---- simplify_shape_chains ----

TEST(PassesShapeChains, StaticDimsOfADynamicShapeBecomeConstants) {
  // x: [n, 3, 4]. Gather(Shape(x), [1, 2]) = [3, 4] is known; Gather(Shape(x), 0) is not.
  ModelBuilder b;
  b.input("x", DType::kFloat32, {-1, 3, 4});
  b.initializer("tail", i64({2}, {1, 2}));
  b.initializer("zero", i64({}, {0}));
  b.initializer("axes0", i64({1}, {0}));
  b.node("Shape", {"x"}, {"shape"});
  b.node("Gather", {"shape", "tail"}, {"dims12"});
  b.node("Gather", {"shape", "zero"}, {"dim0"});
  b.node("Unsqueeze", {"dim0", "axes0"}, {"dim0_1d"});
  b.node("Mul", {"dims12", "dims12"}, {"squares"});
  b.node("Concat", {"dim0_1d", "squares"}, {"target"});
  ModelBuilder::attr(b.g().mutable_node(5), "axis", int64_t{0});
  b.node("ConstantOfShape", {"target"}, {"y"});
  b.output("y");
  onnx::ModelProto m = b.model;
  EXPECT_EQ(exporter::simplify_shape_chains(*m.mutable_graph()), 1);
  EXPECT_EQ(int64_initializer(m.graph(), "dims12"), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(count_op(m.graph(), "Gather"), 1);
  expect_same_results(b.model, m, {{floats({2, 3, 4})}, {floats({5, 3, 4})}});
  // With the pipeline, squares = [9, 16] folds too.
  exporter::optimize(m);
  EXPECT_EQ(int64_initializer(m.graph(), "squares"), (std::vector<int64_t>{9, 16}));
  expect_same_results(b.model, m, {{floats({2, 3, 4})}, {floats({5, 3, 4})}});
}

TEST(PassesShapeChains, NoOpReshapeCastSqueezeAndConcatBecomeIdentities) {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {2, 3});
  b.input("d", DType::kFloat32, {-1, 3});
  b.initializer("same", i64({2}, {0, -1}));  // resolves to [2, 3]
  b.initializer("other", i64({2}, {3, 2}));
  b.initializer("axes", i64({2}, {0, -1}));
  b.initializer("axes_back", i64({2}, {3, 0}));  // the same two dims of the rank-4 value
  b.node("Reshape", {"x", "same"}, {"r"});
  b.node("Reshape", {"x", "other"}, {"r_other"});  // changes the shape: stays
  b.node("Cast", {"x"}, {"c"});
  ModelBuilder::attr(b.g().mutable_node(2), "to", int64_t{1});
  b.node("Unsqueeze", {"x", "axes"}, {"u"});
  b.node("Squeeze", {"u", "axes_back"}, {"s"});
  b.node("Concat", {"s"}, {"cat"});
  ModelBuilder::attr(b.g().mutable_node(5), "axis", int64_t{0});
  b.node("Add", {"cat", "r"}, {"sum"});
  b.node("Add", {"sum", "c"}, {"y"});
  // A dynamic reshape whose declared input and output types agree dim for dim.
  b.node("Shape", {"d"}, {"d_shape"});
  b.node("Reshape", {"d", "d_shape"}, {"d_same"});
  value_info(b, "d_same", DType::kFloat32, {-1, 3});
  b.initializer("ones", i64({2}, {1, 1}));
  b.node("Expand", {"d_same", "ones"}, {"d_expanded"});  // broadcasts to what it already is
  value_info(b, "d_expanded", DType::kFloat32, {-1, 3});
  b.node("Relu", {"d_expanded"}, {"z"});
  b.output("y");
  b.output("r_other");
  b.output("z");
  onnx::ModelProto m = b.model;
  EXPECT_EQ(exporter::simplify_shape_chains(*m.mutable_graph()), 6);
  for (const char* v : {"r", "c", "s", "cat", "d_same", "d_expanded"})
    EXPECT_EQ(producer_of(m.graph(), v)->op_type(), "Identity") << v;
  EXPECT_EQ(producer_of(m.graph(), "s")->input(0), "x");
  EXPECT_EQ(producer_of(m.graph(), "r_other")->op_type(), "Reshape");
  exporter::remove_identities(*m.mutable_graph());
  exporter::remove_dead_nodes(*m.mutable_graph());
  EXPECT_EQ(producer_of(m.graph(), "sum")->input(0), "x");
  EXPECT_EQ(producer_of(m.graph(), "sum")->input(1), "x");
  // d_same and d_expanded are FX values (value_info) but aliases of d: their readers read d.
  EXPECT_EQ(producer_of(m.graph(), "d_same"), nullptr);
  EXPECT_EQ(producer_of(m.graph(), "z")->input(0), "d");
  EXPECT_EQ(count_op(m.graph(), "Shape"), 0);
  const std::vector<std::vector<Tensor>> sets = {{floats({2, 3}), floats({1, 3})}, {floats({2, 3}), floats({4, 3})}};
  expect_same_results(b.model, m, sets);
}

TEST(PassesShapeChains, DifferentAxesOrTypesAreNotNoOps) {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {2, 1, 3});
  b.initializer("a0", i64({1}, {0}));
  b.initializer("a2", i64({1}, {2}));
  b.node("Unsqueeze", {"x", "a0"}, {"u"});
  b.node("Squeeze", {"u", "a2"}, {"s"});  // removes x's own dim 1, not the inserted one
  b.node("Cast", {"x"}, {"y"});
  ModelBuilder::attr(b.g().mutable_node(2), "to", int64_t{11});
  b.output("s");
  b.output("y");
  onnx::ModelProto m = b.model;
  EXPECT_EQ(exporter::simplify_shape_chains(*m.mutable_graph()), 0);
}

// ---- optimize: the pipeline ----

ModelBuilder mixed_model() {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {-1, 4});
  b.initializer("w", floats({4, 4}, 7));
  b.initializer("axes_1", i64({1}, {1}));
  b.initializer("axes_2", i64({1}, {1}));
  b.initializer("minus1", i64({1}, {-1}));
  b.node("MatMul", {"x", "w"}, {"mm"});
  value_info(b, "mm", DType::kFloat32, {-1, 4});
  b.node("Shape", {"mm"}, {"mm_shape"});
  b.node("Slice", {"mm_shape", "axes_1", "minus1"}, {"dead_slice"});  // dead
  b.node("Unsqueeze", {"mm", "axes_1"}, {"u1"});
  b.node("Unsqueeze", {"mm", "axes_2"}, {"u2"});  // duplicate once the axes merge
  b.node("Squeeze", {"u2", "axes_1"}, {"sq"});    // undoes u2: reads mm
  b.node("Concat", {"u1", "u1"}, {"cat"});
  ModelBuilder::attr(b.g().mutable_node(6), "axis", int64_t{1});
  b.node("Identity", {"sq"}, {"sq_id"});
  b.node("Add", {"sq_id", "mm"}, {"sum"});
  b.node("Relu", {"sum"}, {"relu_tmp"});
  b.node("Identity", {"relu_tmp"}, {"y"});
  b.output("y");
  b.output("cat");
  return b;
}

TEST(PassesOptimize, PipelineReachesAFixpointAndKeepsResults) {
  const ModelBuilder b = mixed_model();
  onnx::ModelProto m = b.model;
  const auto stats = exporter::optimize(m);
  EXPECT_GT(stats.total(), 0);
  EXPECT_LE(stats.rounds, OptimizeOptions{}.max_rounds);
  const auto& g = m.graph();
  EXPECT_EQ(count_op(g, "Identity"), 0);
  EXPECT_EQ(count_op(g, "Squeeze"), 0);
  EXPECT_EQ(count_op(g, "Unsqueeze"), 1);
  EXPECT_EQ(count_op(g, "Slice"), 0);
  EXPECT_EQ(g.initializer_size(), 2);  // w and one axes constant
  EXPECT_EQ(producer_of(g, "y")->op_type(), "Relu");
  EXPECT_EQ(producer_of(g, "sum")->input(0), "mm");
  expect_same_results(b.model, m, {{floats({1, 4})}, {floats({3, 4}, 5)}});
  // A second run finds nothing more to do.
  EXPECT_EQ(exporter::optimize(m).total(), 0);
}

TEST(PassesOptimize, DeterministicAndSwitchable) {
  const ModelBuilder b = mixed_model();
  onnx::ModelProto m1 = b.model, m2 = b.model;
  exporter::optimize(m1);
  exporter::optimize(m2);
  EXPECT_EQ(m1.SerializeAsString(), m2.SerializeAsString());
  OptimizeOptions off;
  off.dead_code = off.fold = off.cse = off.identities = off.shape_chains = off.fuse = false;
  onnx::ModelProto m3 = b.model;
  EXPECT_EQ(exporter::optimize(m3, off).total(), 0);
  EXPECT_EQ(m3.SerializeAsString(), b.model.SerializeAsString());
  // A protected name (e.g. a parameter) is never merged away.
  OptimizeOptions keep;
  keep.protected_names = {"axes_2"};
  onnx::ModelProto m4 = b.model;
  exporter::eliminate_common_subexpressions(*m4.mutable_graph(), keep);
  EXPECT_NE(initializer(m4.graph(), "axes_2"), nullptr);
  EXPECT_EQ(producer_of(m4.graph(), "u2")->input(1), "axes_2");
}

TEST(PassesExport, OptimizeOptionIsDeterministicAndKeepsResults) {
  testing::Pt2Fixture f;
  const auto program = pt2::read_pt2(f.write("passes_export.pt2"));
  exporter::ExportOptions plain;
  plain.optimize = false;
  const std::string on = exporter::export_program(program), off = exporter::export_program(program, plain);
  EXPECT_EQ(on, exporter::export_program(program));
  onnx::ModelProto m_on, m_off;
  ASSERT_TRUE(m_on.ParseFromString(on));
  ASSERT_TRUE(m_off.ParseFromString(off));
  EXPECT_EQ(m_on.graph().output(0).name(), m_off.graph().output(0).name());
  expect_same_results(m_off, m_on, {{floats({2, 3})}, {floats({5, 3}, 9)}});
}

// ---- cleanup rewrites: empty concatenations, inferable reshape targets, weights, Conv, Transpose ----

TEST(PassesShapeChains, ConcatOntoAnEmptyCacheIsItsOtherInput) {
  ModelBuilder b;
  b.input("cache", DType::kFloat32, {2, 0}, true);
  b.input("x", DType::kFloat32, {2, 3}, true);
  b.node("Concat", {"cache", "x"}, {"cat"});
  ModelBuilder::attr(b.g().mutable_node(0), "axis", int64_t{-1});
  value_info(b, "cat", DType::kFloat32, {2, 3});
  b.node("Concat", {"x", "x"}, {"twice"});  // nothing empty: stays
  ModelBuilder::attr(b.g().mutable_node(1), "axis", int64_t{1});
  b.node("Add", {"cat", "x"}, {"y"});
  b.output("y");
  b.output("twice");
  onnx::ModelProto m = b.model;
  exporter::optimize(m);
  EXPECT_EQ(count_op(m.graph(), "Concat"), 1);
  EXPECT_EQ(count_op(m.graph(), "Identity"), 0);
  EXPECT_EQ(producer_of(m.graph(), "y")->input(0), "x");
  expect_same_results(b.model, m, {{Tensor(DType::kFloat32, {2, 0}), floats({2, 3})}});
}

TEST(PassesShapeChains, SliceOfEverythingIsItsInput) {
  constexpr int64_t kEnd = std::numeric_limits<int64_t>::max();  // torch's "to the end"
  ModelBuilder b;
  b.input("x", DType::kFloat32, {-1, 4});
  b.initializer("zero", i64({1}, {0}));
  b.initializer("end", i64({1}, {kEnd}));
  b.initializer("three", i64({1}, {3}));
  b.initializer("one", i64({1}, {1}));
  b.initializer("two", i64({1}, {2}));
  b.node("Slice", {"x", "zero", "end", "one", "one"}, {"full"});
  b.node("Slice", {"full", "zero", "end"}, {"full2"});                  // no axes, no steps
  b.node("Slice", {"full2", "zero", "three", "one"}, {"cut"});          // ends early: stays
  b.node("Slice", {"full2", "zero", "end", "one", "two"}, {"every2"});  // step 2: stays
  b.node("Slice", {"full2", "one", "end", "one"}, {"from1"});           // starts at 1: stays
  b.output("cut");
  b.output("every2");
  b.output("from1");
  onnx::ModelProto m = b.model;
  exporter::optimize(m);
  EXPECT_EQ(count_op(m.graph(), "Slice"), 3);
  EXPECT_EQ(count_op(m.graph(), "Identity"), 0);
  for (const char* v : {"cut", "every2", "from1"}) EXPECT_EQ(producer_of(m.graph(), v)->input(0), "x") << v;
  expect_same_results(b.model, m, {{floats({2, 4})}, {floats({5, 4})}});
}

TEST(PassesShapeChains, NeutralOperandsAreTheOtherOperand) {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {4});
  b.input("i", DType::kInt64, {4});
  b.initializer("one", make<float>(DType::kFloat32, {}, {1.0f}));
  b.initializer("zero", make<float>(DType::kFloat32, {1}, {0.0f}));
  b.initializer("minus_zero", make<float>(DType::kFloat32, {}, {-0.0f}));
  b.initializer("two", make<float>(DType::kFloat32, {}, {2.0f}));
  b.initializer("one_2d", make<float>(DType::kFloat32, {1, 1}, {1.0f}));
  b.initializer("izero", i64({}, {0}));
  b.node("Mul", {"x", "one"}, {"m1"});
  b.node("Mul", {"one", "m1"}, {"m2"});
  b.node("Div", {"m2", "one"}, {"d"});
  b.node("Sub", {"d", "zero"}, {"s"});  // -0 - 0 is -0
  b.node("Add", {"i", "izero"}, {"ai"});
  b.node("Add", {"izero", "ai"}, {"ai2"});
  b.node("Add", {"s", "zero"}, {"af"});        // -0 + 0 is +0: stays
  b.node("Sub", {"s", "minus_zero"}, {"sm"});  // -0 - -0 is +0: stays
  b.node("Mul", {"s", "two"}, {"m_two"});      // stays
  b.node("Mul", {"s", "one_2d"}, {"m_rank"});  // broadcasts to [1, 4]: stays
  b.node("Div", {"one", "s"}, {"recip"});      // 1 / x: stays
  b.input("p", DType::kBool, {4});
  b.initializer("yes", make<uint8_t>(DType::kBool, {}, {1}));
  b.initializer("no", make<uint8_t>(DType::kBool, {1}, {0}));
  b.node("And", {"yes", "p"}, {"p_and"});
  b.node("Or", {"p_and", "no"}, {"p_or"});
  b.node("Not", {"p_or"}, {"not_p"});  // reads p itself once And and Or go
  b.output("not_p");
  b.output("af");
  b.output("sm");
  b.output("m_two");
  b.output("m_rank");
  b.output("recip");
  b.output("ai2");
  onnx::ModelProto m = b.model;
  exporter::optimize(m);
  const auto& g = m.graph();
  for (const char* v : {"af", "sm", "m_two", "m_rank", "recip"}) {  // m1, m2, d and s were x itself
    const auto& in = producer_of(g, v)->input();
    EXPECT_NE(std::find(in.begin(), in.end(), "x"), in.end()) << v;
  }
  EXPECT_EQ(count_op(g, "Mul"), 2);
  EXPECT_EQ(count_op(g, "Add"), 1);
  EXPECT_EQ(count_op(g, "Sub"), 1);
  EXPECT_EQ(count_op(g, "Div"), 1);
  EXPECT_EQ(producer_of(g, "ai2")->op_type(), "Identity");  // an output aliasing an input keeps one
  EXPECT_EQ(producer_of(g, "not_p")->input(0), "p");
  const float nan = std::numeric_limits<float>::quiet_NaN();
  expect_same_results(b.model, m,
                      {{make<float>(DType::kFloat32, {4}, {-0.0f, nan, 1.5f, -2.0f}), i64({4}, {-3, 0, 5, 7}),
                        make<uint8_t>(DType::kBool, {4}, {1, 0, 0, 1})}});
}

TEST(PassesShapeChains, ReshapeTargetWithOneUnknownDimBecomesAConstant) {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {-1, 6}, true);
  b.initializer("zero", i64({1}, {0}));
  b.initializer("two", i64({1}, {2}));
  b.initializer("minus1", i64({1}, {-1}));
  b.node("Shape", {"x"}, {"x_shape"});
  b.node("Gather", {"x_shape", "zero"}, {"batch"});  // [n]: a dynamic piece
  b.node("Concat", {"batch", "two", "minus1"}, {"target"});
  ModelBuilder::attr(b.g().mutable_node(2), "axis", int64_t{0});
  b.node("Reshape", {"x", "target"}, {"r"});
  value_info(b, "r", DType::kFloat32, {-1, 2, 3});  // the declared type knows the -1 is 3
  b.node("Relu", {"r"}, {"y"});
  b.output("y");
  onnx::ModelProto m = b.model;
  exporter::optimize(m);
  const auto* reshape = producer_of(m.graph(), "r");
  ASSERT_NE(reshape, nullptr);
  EXPECT_EQ(int64_initializer(m.graph(), reshape->input(1)), (std::vector<int64_t>{-1, 2, 3}));
  EXPECT_EQ(m.graph().node_size(), 2);  // Shape, Gather and Concat are gone
  expect_same_results(b.model, m, {{floats({1, 6})}, {floats({4, 6}, 3)}});
}

// nn.MultiheadAttention's unflatten: Shape(x)[0:2] (two elements), [3, 32], Shape(x)[3:3] (none). Counting
// each computed piece as one element put 32 where 2 belongs ([-1, 3, 32, 32]); the pieces' own lengths
// give the right target.
TEST(PassesShapeChains, ReshapeTargetCountsEachPiecesLength) {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {-1, 2, 96}, true);
  for (const auto& [name, v] : std::vector<std::pair<std::string, int64_t>>{{"i0", 0}, {"i2", 2}, {"i3", 3}})
    b.initializer(name, i64({1}, {v}));
  b.initializer("heads", i64({2}, {3, 32}));
  b.node("Shape", {"x"}, {"s"});
  b.node("Slice", {"s", "i0", "i2"}, {"lead"});
  b.node("Slice", {"s", "i3", "i3"}, {"rest"});
  b.node("Concat", {"lead", "heads", "rest"}, {"target"});
  ModelBuilder::attr(b.g().mutable_node(3), "axis", int64_t{0});
  b.node("Reshape", {"x", "target"}, {"r"});
  value_info(b, "r", DType::kFloat32, {-1, 2, 3, 32});
  b.node("Relu", {"r"}, {"y"});
  b.output("y");
  onnx::ModelProto m = b.model;
  exporter::optimize(m);
  const auto* reshape = producer_of(m.graph(), "r");
  ASSERT_NE(reshape, nullptr);
  EXPECT_EQ(int64_initializer(m.graph(), reshape->input(1)), (std::vector<int64_t>{-1, 2, 3, 32}));
  expect_same_results(b.model, m, {{floats({5, 2, 96})}});
}

TEST(PassesFuse, TransposedWeightBecomesAnInitializerUnlessSharedAndPairsCompose) {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {2, 3});
  b.initializer("fc.weight", floats({4, 3}));
  b.initializer("tied.weight", floats({3, 3}, 7));
  b.node("Transpose", {"fc.weight"}, {"fc_t"});
  ModelBuilder::attr(b.g().mutable_node(0), "perm", std::vector<int64_t>{1, 0});
  b.node("MatMul", {"x", "fc_t"}, {"h"});
  b.node("Transpose", {"tied.weight"}, {"tied_t"});  // tied.weight has another reader: stays
  b.node("MatMul", {"x", "tied_t"}, {"g"});
  b.node("MatMul", {"x", "tied.weight"}, {"g2"});
  b.node("Unsqueeze", {"h", "one"}, {"h3"});
  b.initializer("one", i64({1}, {0}));
  b.node("Transpose", {"h3"}, {"t1"});
  ModelBuilder::attr(b.g().mutable_node(6), "perm", std::vector<int64_t>{1, 0, 2});
  b.node("Transpose", {"t1"}, {"t2"});
  ModelBuilder::attr(b.g().mutable_node(7), "perm", std::vector<int64_t>{0, 2, 1});
  b.node("Transpose", {"t2"}, {"t3"});  // the three compose into one: perm [2, 1, 0]
  ModelBuilder::attr(b.g().mutable_node(8), "perm", std::vector<int64_t>{1, 0, 2});
  b.output("t3");
  b.output("g");
  b.output("g2");
  OptimizeOptions keep;
  keep.protected_names = {"fc.weight", "tied.weight"};
  onnx::ModelProto m = b.model;
  exporter::optimize(m, keep);
  const auto& g = m.graph();
  EXPECT_EQ(initializer(g, "fc.weight"), nullptr);  // only read transposed: the file holds it once
  ASSERT_NE(initializer(g, "fc_t"), nullptr);
  EXPECT_EQ(initializer(g, "fc_t")->dims(0), 3);
  EXPECT_NE(initializer(g, "tied.weight"), nullptr);
  EXPECT_EQ(count_op(g, "Transpose"), 2);  // tied_t, and the three of h3 composed into one
  EXPECT_EQ(producer_of(g, "t3")->op_type(), "Transpose");
  EXPECT_EQ(producer_of(g, "t3")->input(0), "h3");
  EXPECT_EQ(ints_attribute(*producer_of(g, "t3"), "perm"), (std::vector<int64_t>{2, 1, 0}));
  expect_same_results(b.model, m, {{floats({2, 3})}});
}

TEST(PassesFuse, UnsqueezeChainsBecomeOneUnsqueeze) {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {3, 2});
  b.initializer("a0", i64({1}, {0}));
  b.initializer("a1", i64({1}, {1}));
  b.initializer("a3", i64({1}, {3}));
  b.initializer("a02", i64({2}, {0, 2}));
  b.initializer("neg", i64({1}, {-1}));
  b.node("Unsqueeze", {"x", "a0"}, {"u1"});    // [1, 3, 2]
  b.node("Unsqueeze", {"u1", "a1"}, {"u2"});   // [1, 1, 3, 2]
  b.node("Unsqueeze", {"u2", "a3"}, {"u3"});   // [1, 1, 3, 1, 2]: one Unsqueeze of x, axes [0, 1, 3]
  b.node("Unsqueeze", {"x", "a1"}, {"v1"});    // [3, 1, 2]
  b.node("Unsqueeze", {"v1", "a02"}, {"v2"});  // [1, 3, 1, 1, 2]: one Unsqueeze of x, axes [0, 2, 3]
  b.initializer("a2", i64({1}, {2}));
  b.node("Unsqueeze", {"x", "a2"}, {"s1"});  // read twice: stays
  b.node("Unsqueeze", {"s1", "a0"}, {"s2"});
  b.node("Unsqueeze", {"s1", "neg"}, {"s3"});  // negative axes: left alone
  b.output("u3");
  b.output("v2");
  b.output("s2");
  b.output("s3");
  onnx::ModelProto m = b.model;
  exporter::optimize(m);
  const auto& g = m.graph();
  EXPECT_EQ(count_op(g, "Unsqueeze"), 5);  // u3, v2, s1, s2, s3
  EXPECT_EQ(producer_of(g, "u3")->input(0), "x");
  EXPECT_EQ(int64_initializer(g, producer_of(g, "u3")->input(1)), (std::vector<int64_t>{0, 1, 3}));
  EXPECT_EQ(producer_of(g, "v2")->input(0), "x");
  EXPECT_EQ(int64_initializer(g, producer_of(g, "v2")->input(1)), (std::vector<int64_t>{0, 2, 3}));
  EXPECT_EQ(producer_of(g, "s2")->input(0), "s1");
  expect_same_results(b.model, m, {{floats({3, 2})}});
}

TEST(PassesFuse, SlicesOfAShapeBecomeShapeRanges) {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {-1, 3, -1});
  b.initializer("zero", i64({1}, {0}));
  b.initializer("two", i64({1}, {2}));
  b.initializer("k", i64({}, {2}));
  b.initializer("last", i64({}, {-1}));
  b.node("Shape", {"x"}, {"s"});
  b.node("Slice", {"s", "zero", "two"}, {"nc"});  // Shape(x, start 0, end 2)
  b.node("Gather", {"s", "k"}, {"d2"});           // x's dim 2, a scalar, also read by Range
  b.node("Unsqueeze", {"d2", "zero"}, {"d2v"});   // Shape(x, start 2, end 3)
  b.node("Gather", {"s", "last"}, {"dl"});
  b.node("Unsqueeze", {"dl", "zero"}, {"dlv"});                      // Shape(x, start -1)
  b.node("Slice", {"s", "zero", "two", "zero", "two"}, {"every2"});  // step 2: stays
  b.node("Concat", {"nc", "d2v", "dlv", "every2"}, {"y"});
  ModelBuilder::attr(b.g().mutable_node(7), "axis", int64_t{0});
  b.initializer("one_scalar", i64({}, {1}));
  b.initializer("zero_scalar", i64({}, {0}));
  b.node("Range", {"zero_scalar", "d2", "one_scalar"}, {"r"});
  b.output("y");
  b.output("r");
  onnx::ModelProto m = b.model;
  exporter::optimize(m);
  const auto& g = m.graph();
  EXPECT_EQ(count_op(g, "Shape"), 4);  // nc, d2v, dlv, and the one Gather(d2) and every2 read
  EXPECT_EQ(count_op(g, "Slice"), 1);
  EXPECT_EQ(count_op(g, "Gather"), 1);
  EXPECT_EQ(count_op(g, "Unsqueeze"), 0);
  EXPECT_EQ(producer_of(g, "nc")->op_type(), "Shape");
  EXPECT_EQ(producer_of(g, "nc")->input(0), "x");
  expect_same_results(b.model, m, {{floats({2, 3, 2})}, {floats({5, 3, 5})}});  // both dynamic dims are "n"
}

// torch's unflatten: Reshape(x, Concat(Shape(x)[0:2], [3, 16], Shape(x)[3:3])). Once the slices are Shape
// ranges, the Reshape target counts two elements for the first and none for the empty one.
TEST(PassesFuse, ShapeRangesInAReshapeTargetCountTheirDims) {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {-1, 2, 48});
  b.initializer("zero", i64({1}, {0}));
  b.initializer("two", i64({1}, {2}));
  b.initializer("three", i64({1}, {3}));
  b.initializer("split", i64({2}, {3, 16}));
  b.node("Shape", {"x"}, {"s"});
  b.node("Slice", {"s", "zero", "two"}, {"lead"});
  b.node("Slice", {"s", "three", "three"}, {"tail"});  // empty
  b.node("Concat", {"lead", "split", "tail"}, {"target"});
  ModelBuilder::attr(b.g().mutable_node(3), "axis", int64_t{0});
  b.node("Reshape", {"x", "target"}, {"y"});
  b.output("y");
  value_info(b, "y", DType::kFloat32, {-1, 2, 3, 16});
  onnx::ModelProto m = b.model;
  exporter::optimize(m);
  expect_same_results(b.model, m, {{floats({1, 2, 48})}, {floats({3, 2, 48})}});
}

TEST(PassesFuse, PadAndBatchNormMergeIntoConv) {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {1, 2, 4, 4});
  b.initializer("conv.weight", floats({3, 2, 3, 3}));
  b.initializer("pads", i64({8}, {0, 0, 1, 2, 0, 0, 1, 0}));
  b.initializer("zero", Tensor::scalar<float>(DType::kFloat32, 0.0f));
  b.initializer("bn.weight", make<float>(DType::kFloat32, {3}, {1.5f, -0.5f, 2.0f}));
  b.initializer("bn.bias", make<float>(DType::kFloat32, {3}, {0.1f, 0.2f, -0.3f}));
  b.initializer("bn.running_mean", make<float>(DType::kFloat32, {3}, {0.05f, -0.1f, 0.2f}));
  b.initializer("bn.running_var", make<float>(DType::kFloat32, {3}, {0.9f, 1.2f, 0.3f}));
  b.node("Pad", {"x", "pads", "zero"}, {"pad"});
  value_info(b, "pad", DType::kFloat32, {1, 2, 6, 6});
  b.node("Conv", {"pad", "conv.weight"}, {"conv"});
  ModelBuilder::attr(b.g().mutable_node(1), "pads", std::vector<int64_t>{0, 1, 0, 1});
  b.node("BatchNormalization", {"conv", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var"}, {"bn"});
  b.output("bn");
  OptimizeOptions keep;  // as the exporter calls it: the module's state is protected
  keep.protected_names = {"conv.weight", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var"};
  onnx::ModelProto m = b.model;
  exporter::optimize(m, keep);
  const auto& g = m.graph();
  ASSERT_EQ(g.node_size(), 1);
  const auto& conv = g.node(0);
  EXPECT_EQ(conv.op_type(), "Conv");
  EXPECT_EQ(conv.input(0), "x");
  EXPECT_EQ(conv.output(0), "bn");
  EXPECT_EQ(conv.input_size(), 3);
  EXPECT_EQ(ints_attribute(conv, "pads"), (std::vector<int64_t>{1, 3, 1, 1}));
  EXPECT_EQ(g.value_info_size(), 0);
  const Tensor x = floats({1, 2, 4, 4}, 11);
  const auto got = run(m, {x});
  // Against the unfused model (refrt's passes off): equal within float32 rounding (the folded weights
  // are rounded once, where the unfused model rounds the convolution and then the normalisation).
  auto s_plain = refrt::Session::load_bytes(b.model.SerializeAsString(), "plain.onnx",
                                            {.fold_constants = false, .optimize = false});
  const auto plain = s_plain->run({x}).outputs;
  ASSERT_EQ(plain[0].shape(), got[0].shape());
  for (int64_t i = 0; i < got[0].numel(); ++i)
    EXPECT_NEAR(got[0].data<float>()[i], plain[0].data<float>()[i],
                1e-5f * (1.0f + std::abs(plain[0].data<float>()[i])));
}

// The verifier finds a program value the passes renamed away under the name that carries it now: a
// duplicate merged by CSE, an alias dropped with its Identity, and the two chained.
TEST(PassesAliases, MergedAndAliasedValuesAreRecorded) {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {2, 3});
  b.node("Relu", {"x"}, {"r1"});
  b.node("Relu", {"x"}, {"r2"});             // a duplicate of r1
  b.node("Identity", {"r2"}, {"r2_alias"});  // an alias of the duplicate
  b.node("Add", {"r1", "r2_alias"}, {"y"});
  b.output("y");
  onnx::ModelProto m = b.model;
  std::map<std::string, std::string> aliases;
  exporter::OptimizeOptions options;
  options.aliases = &aliases;
  exporter::optimize(m, options);
  EXPECT_EQ(count_op(m.graph(), "Relu"), 1);
  EXPECT_EQ(count_op(m.graph(), "Identity"), 0);
  EXPECT_EQ(aliases["r2"], "r1");
  EXPECT_EQ(aliases["r2_alias"], "r1");
  EXPECT_FALSE(aliases.count("r1"));
  expect_same_results(b.model, m, {{floats({2, 3})}});
}

}  // namespace
}  // namespace parity
