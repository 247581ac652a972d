// Bad inputs to the elementwise / activation / reduction / cast kernels: each is a parity::Error naming
// the node and what was wrong (never a crash or undefined behaviour), unsupported dtypes are
// ErrorKind::kUnsupported.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>

#include "model_builder.h"
#include "parity/error.h"
#include "parity/refrt/session.h"

namespace parity {
namespace {

using testing::make;
using testing::ModelBuilder;

void string_attr(onnx::NodeProto* n, const std::string& name, const std::string& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

// Loads and runs `b`; expects an Error of `kind` whose text contains every one of `needles`.
void expect_error(ModelBuilder& b, const std::vector<Tensor>& inputs, std::initializer_list<std::string> needles,
                  ErrorKind kind = ErrorKind::kInput) {
  try {
    auto session = refrt::Session::load_bytes(b.bytes(), "errors.onnx");
    session->run(inputs);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    if (getenv("SHOW_ERRORS")) std::printf("%s\n", e.what());
    for (const auto& n : needles) EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what();
  }
}

ModelBuilder binary(const std::string& op, DType a, DType b, const std::string& name) {
  ModelBuilder m;
  m.input("a", a);
  m.input("b", b);
  m.node(op, {"a", "b"}, {"y"}, name);
  m.output("y");
  return m;
}

TEST(ElementwiseErrors, IntegerDivisionByZeroNamesTheNode) {
  for (DType t : {DType::kInt8, DType::kInt32, DType::kInt64, DType::kUInt8, DType::kUInt64}) {
    auto b = binary("Div", t, t, "my_div");
    const size_t n = dtype_size(t);
    Tensor x(t, {3}, true), y(t, {3}, true);
    static_cast<uint8_t*>(x.mutable_raw())[0] = 7;
    static_cast<uint8_t*>(y.mutable_raw())[0] = 1;
    static_cast<uint8_t*>(y.mutable_raw())[n] = 2;  // y = [1, 2, 0]
    expect_error(b, {x, y}, {"my_div", "division by zero"});
  }
}

TEST(ElementwiseErrors, IntegerModuloByZeroNamesTheNode) {
  for (int64_t fmod : {0, 1}) {
    auto b = binary("Mod", DType::kInt32, DType::kInt32, "my_mod");
    ModelBuilder::attr(b.g().mutable_node(0), "fmod", fmod);
    expect_error(b, {make<int32_t>(DType::kInt32, {2}, {5, -5}), make<int32_t>(DType::kInt32, {1}, {0})},
                 {"my_mod", "modulo by zero"});
  }
}

TEST(ElementwiseErrors, FloatModNeedsFmod) {
  auto b = binary("Mod", DType::kFloat32, DType::kFloat32, "float_mod");
  expect_error(b, {make<float>(DType::kFloat32, {1}, {5}), make<float>(DType::kFloat32, {1}, {2})},
               {"float_mod", "fmod=1"});
}

TEST(ElementwiseErrors, UnsupportedDtypeIsItsOwnKind) {
  auto b = binary("Add", DType::kBool, DType::kBool, "bool_add");
  Tensor t(DType::kBool, {2}, true);
  expect_error(b, {t, t}, {"bool_add", "bool"}, ErrorKind::kUnsupported);
  auto s = binary("BitShift", DType::kInt32, DType::kInt32, "signed_shift");
  string_attr(s.g().mutable_node(0), "direction", "LEFT");
  expect_error(s, {make<int32_t>(DType::kInt32, {1}, {1}), make<int32_t>(DType::kInt32, {1}, {1})},
               {"signed_shift", "int32"}, ErrorKind::kUnsupported);
  ModelBuilder e;
  e.input("x", DType::kInt32);
  e.node("Exp", {"x"}, {"y"}, "int_exp");
  e.output("y");
  expect_error(e, {make<int32_t>(DType::kInt32, {1}, {1})}, {"int_exp", "int32"}, ErrorKind::kUnsupported);
}

TEST(ElementwiseErrors, MixedDtypesAreRejected) {
  auto b = binary("Add", DType::kFloat32, DType::kFloat64, "mixed_add");
  expect_error(b, {make<float>(DType::kFloat32, {1}, {1}), make<double>(DType::kFloat64, {1}, {1})},
               {"mixed_add", "float32", "float64"});
}

TEST(ElementwiseErrors, BitShiftNeedsADirection) {
  auto b = binary("BitShift", DType::kUInt8, DType::kUInt8, "no_direction");
  expect_error(b, {make<uint8_t>(DType::kUInt8, {1}, {1}), make<uint8_t>(DType::kUInt8, {1}, {1})},
               {"no_direction", "direction"});
}

TEST(ElementwiseErrors, ClipBoundMustBeAScalarOfTheInputType) {
  ModelBuilder b;
  b.input("x", DType::kFloat32);
  b.input("lo", DType::kFloat32);
  b.node("Clip", {"x", "lo"}, {"y"}, "my_clip");
  b.output("y");
  expect_error(b, {make<float>(DType::kFloat32, {2}, {1, 2}), make<float>(DType::kFloat32, {2}, {0, 0})},
               {"my_clip", "scalar"});
}

TEST(ElementwiseErrors, TopKOutOfRangeK) {
  ModelBuilder b;
  b.input("x", DType::kFloat32);
  b.input("k", DType::kInt64);
  b.node("TopK", {"x", "k"}, {"v", "i"}, "my_topk");
  b.output("v");
  b.output("i");
  for (int64_t k : {-1, 4})
    expect_error(b, {make<float>(DType::kFloat32, {3}, {1, 2, 3}), make<int64_t>(DType::kInt64, {1}, {k})},
                 {"my_topk", "K = " + std::to_string(k)});
}

TEST(ElementwiseErrors, ArgMaxOfEmptyAxis) {
  ModelBuilder b;
  b.input("x", DType::kFloat32);
  b.node("ArgMax", {"x"}, {"y"}, "my_argmax");
  b.output("y");
  expect_error(b, {Tensor(DType::kFloat32, {0, 3})}, {"my_argmax", "empty axis"});
}

TEST(ElementwiseErrors, ReduceAxisListedTwiceOrOutOfRange) {
  ModelBuilder b;
  b.input("x", DType::kFloat32);
  b.initializer("axes", make<int64_t>(DType::kInt64, {2}, {1, -1}));
  b.node("ReduceSum", {"x", "axes"}, {"y"}, "my_sum");
  b.output("y");
  expect_error(b, {make<float>(DType::kFloat32, {2, 2}, {1, 2, 3, 4})}, {"my_sum", "twice"});
  ModelBuilder c;
  c.input("x", DType::kFloat32);
  c.initializer("axes", make<int64_t>(DType::kInt64, {1}, {2}));
  c.node("ReduceMax", {"x", "axes"}, {"y"}, "my_max");
  c.output("y");
  expect_error(c, {make<float>(DType::kFloat32, {2, 2}, {1, 2, 3, 4})}, {"my_max", "axes"});
}

TEST(ElementwiseErrors, PReluSlopeMustBroadcastToX) {
  auto b = binary("PRelu", DType::kFloat32, DType::kFloat32, "my_prelu");
  expect_error(
      b, {make<float>(DType::kFloat32, {3}, {1, -2, 3}), make<float>(DType::kFloat32, {2, 3}, {1, 1, 1, 1, 1, 1})},
      {"my_prelu", "does not broadcast to X"});
}

TEST(ElementwiseErrors, CastToStringIsUnsupported) {
  ModelBuilder b;
  b.input("x", DType::kFloat32);
  auto* n = b.node("Cast", {"x"}, {"y"}, "to_string");
  ModelBuilder::attr(n, "to", static_cast<int64_t>(DType::kString));
  b.output("y");
  expect_error(b, {make<float>(DType::kFloat32, {1}, {1})}, {"to_string", "not supported"}, ErrorKind::kUnsupported);
}

}  // namespace
}  // namespace parity
