// The generated export-schema types: JSON written the way torch.export.save writes it reads into typed
// values, and malformed JSON fails with the path of the offending value.
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "parity/error.h"
#include "parity/exporter/program.h"

namespace parity::pt2 {
namespace {

using nlohmann::json;

template <class T>
T parse(const json& j) {
  T out;
  from_json(j, out);
  return out;
}

std::string parse_error(const json& j) {
  try {
    parse<schema::Node>(j);
  } catch (const schema::ParseError& e) {
    return e.what();
  }
  return "";
}

TEST(Pt2Schema, NodeWithUnionsReadsTyped) {
  const json j = {{"target", "torch.ops.aten.add.Tensor"},
                  {"inputs",
                   {{{"name", "self"}, {"arg", {{"as_tensor", {{"name", "x"}}}}}, {"kind", 1}},
                    {{"name", "alpha"}, {"arg", {{"as_sym_int", {{"as_name", "s0"}}}}}, {"kind", 2}}}},
                  {"outputs", {{{"as_tensor", {{"name", "add"}}}}}},
                  {"metadata", {{"stack_trace", "File x.py"}}}};
  const auto n = parse<schema::Node>(j);
  EXPECT_EQ(n.target, "torch.ops.aten.add.Tensor");
  ASSERT_EQ(n.inputs.size(), 2u);
  EXPECT_EQ(n.inputs[0].arg.kind(), schema::Argument::Kind::as_tensor);
  EXPECT_EQ(n.inputs[0].arg.as_tensor().name, "x");
  EXPECT_EQ(n.inputs[1].kind, schema::ArgumentKind::KEYWORD);
  const Argument alpha(n.inputs[1].arg);
  EXPECT_TRUE(alpha.is_symbolic_scalar());
  EXPECT_EQ(alpha.symbol(), "s0");
  EXPECT_FALSE(n.name.has_value());  // absent optional field
  EXPECT_EQ(n.metadata.at("stack_trace"), "File x.py");
}

TEST(Pt2Schema, TorchFloatLiteralsAndStaticSymInts) {
  const auto inf = parse<schema::Argument>({{"as_float", "Infinity"}});
  EXPECT_TRUE(std::isinf(inf.as_float()) && inf.as_float() > 0);
  EXPECT_TRUE(std::isnan(parse<schema::Argument>({{"as_float", "NaN"}}).as_float()));
  const Argument dims(parse<schema::Argument>({{"as_sym_ints", {{{"as_int", 2}}, {{"as_int", 3}}}}}));
  EXPECT_EQ(dims.as_ints(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(dims.list_length(), 2u);
}

TEST(Pt2Schema, ErrorsNameThePath) {
  json j = {{"target", "t"},
            {"inputs", {{{"name", "self"}, {"arg", {{"as_tensor", {{"name", 7}}}}}}}},
            {"outputs", json::array()}};
  EXPECT_EQ(parse_error(j), "inputs[0].arg.as_tensor.name: expected a string, got the number 7");
  j["inputs"][0]["arg"] = {{"as_quaternion", 1}};
  EXPECT_NE(parse_error(j).find("inputs[0].arg: unknown Argument kind 'as_quaternion'"), std::string::npos)
      << parse_error(j);
  j["inputs"][0]["arg"] = {{"as_int", 1}, {"as_float", 2.0}};
  EXPECT_NE(parse_error(j).find("exactly one alternative, got 2 keys"), std::string::npos) << parse_error(j);
  j["inputs"] = "nope";
  EXPECT_EQ(parse_error(j), "inputs: expected a list, got the string \"nope\"");
}

TEST(Pt2Schema, WrongAlternativeAccessThrows) {
  const Argument a(parse<schema::Argument>({{"as_int", 3}}));
  EXPECT_EQ(a.as_int(), 3);
  EXPECT_DOUBLE_EQ(a.as_float(), 3.0);  // an int where a float is wanted, as Python allows
  try {
    a.tensor_name();
    FAIL() << "an int argument has no tensor name";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("expected tensor argument, got as_int 3"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace parity::pt2
