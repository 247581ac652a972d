// resolve_in_place_aliases on hand-written training-IR graphs: every read after a write sees the write, under
// any name of the tensor; functional graphs stay as captured. (End to end against eager: the mutation
// family of scenarios, scenarios/cases/mutations.py, and tests/python/test_mutations.py.)
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../../exporter/src/in_place_aliases.h"

namespace parity::pt2 {
namespace {

Argument int_arg(int64_t v) {
  schema::Argument a;
  a.set_as_int(v);
  return Argument(std::move(a));
}

Node node(const std::string& name, const std::string& op, std::vector<std::pair<std::string, Argument>> inputs) {
  Node n;
  n.name = name;
  n.target = "torch.ops.aten." + op;
  for (auto& [arg_name, arg] : inputs) n.inputs.push_back({arg_name, arg, schema::ArgumentKind::POSITIONAL});
  n.outputs.push_back(Argument::tensor(name));
  return n;
}

std::vector<std::string> input_names(const Node& n) {
  std::vector<std::string> out;
  for (const auto& in : n.inputs)
    if (in.arg.is_tensor()) out.push_back(in.arg.tensor_name());
  return out;
}

const Node& named(const Graph& g, const std::string& name) {
  for (const auto& n : g.nodes)
    if (n.name == name) return n;
  throw std::runtime_error("no node " + name);
}

OutputSpec user_output(const std::string& name) {
  OutputSpec s;
  s.arg = Argument::tensor(name);
  return s;
}

// torch's own export test: a child's buffer bumped three times; each bump's result feeds the next.
TEST(InPlaceAliases, RepeatedWritesReadTheTensorItself) {
  Graph g;
  g.inputs = {Argument::tensor("b_buf"), Argument::tensor("x")};
  g.nodes.push_back(node("add_", "add_.Tensor", {{"self", Argument::tensor("b_buf")}, {"other", int_arg(1)}}));
  g.nodes.push_back(node("add", "add.Tensor", {{"self", Argument::tensor("x")}, {"other", Argument::tensor("add_")}}));
  g.nodes.push_back(node("add__1", "add_.Tensor", {{"self", Argument::tensor("add_")}, {"other", int_arg(1)}}));
  g.nodes.push_back(
      node("add_1", "add.Tensor", {{"self", Argument::tensor("add")}, {"other", Argument::tensor("add__1")}}));
  std::vector<OutputSpec> specs = {user_output("add__1")};
  resolve_in_place_aliases(g, specs);
  ASSERT_EQ(g.nodes.size(), 4u);
  EXPECT_EQ(input_names(named(g, "add"))[1], "b_buf");
  EXPECT_EQ(input_names(named(g, "add__1"))[0], "b_buf");  // the second write goes into the buffer itself
  EXPECT_EQ(input_names(named(g, "add_1"))[1], "b_buf");
  EXPECT_EQ(specs[0].arg.tensor_name(), "b_buf");  // an in-place result as output is the tensor's final state
}

// A view taken before its base is written, read after: taken again from the written base.
TEST(InPlaceAliases, StaleViewIsTakenAgainAfterTheWrite) {
  Graph g;
  g.inputs = {Argument::tensor("x")};
  g.nodes.push_back(
      node("slice_1", "slice.Tensor",
           {{"self", Argument::tensor("x")}, {"dim", int_arg(1)}, {"start", int_arg(0)}, {"end", int_arg(2)}}));
  g.nodes.push_back(node("add_", "add_.Tensor", {{"self", Argument::tensor("x")}, {"other", int_arg(1)}}));
  g.nodes.push_back(node("mul", "mul.Tensor", {{"self", Argument::tensor("slice_1")}, {"other", int_arg(2)}}));
  std::vector<OutputSpec> specs = {user_output("mul")};
  resolve_in_place_aliases(g, specs);
  ASSERT_EQ(g.nodes.size(), 4u);
  const Node& again = g.nodes[2];  // the copy of slice_1, just before its reader
  EXPECT_EQ(again.target, "torch.ops.aten.slice.Tensor");
  EXPECT_EQ(input_names(again), std::vector<std::string>{"x"});
  EXPECT_EQ(input_names(named(g, "mul"))[0], again.outputs[0].tensor_name());
  EXPECT_NE(again.outputs[0].tensor_name(), "slice_1");
}

// A write through a view keeps that view (and its base) current; a sibling view becomes stale.
TEST(InPlaceAliases, WriteThroughViewKeepsItCurrentButNotItsSibling) {
  Graph g;
  g.inputs = {Argument::tensor("x")};
  g.nodes.push_back(
      node("a", "select.int", {{"self", Argument::tensor("x")}, {"dim", int_arg(0)}, {"index", int_arg(0)}}));
  g.nodes.push_back(
      node("b", "select.int", {{"self", Argument::tensor("x")}, {"dim", int_arg(0)}, {"index", int_arg(1)}}));
  g.nodes.push_back(node("mul_", "mul_.Tensor", {{"self", Argument::tensor("a")}, {"other", int_arg(3)}}));
  g.nodes.push_back(node("sa", "sum.default", {{"self", Argument::tensor("mul_")}}));
  g.nodes.push_back(node("sb", "sum.default", {{"self", Argument::tensor("b")}}));
  std::vector<OutputSpec> specs = {user_output("sa"), user_output("sb")};
  resolve_in_place_aliases(g, specs);
  EXPECT_EQ(input_names(named(g, "sa"))[0], "a");  // written through: current, no copy
  const std::string b_now = input_names(named(g, "sb"))[0];
  EXPECT_NE(b_now, "b");  // its base changed through `a`: taken again
  ASSERT_EQ(g.nodes.size(), 6u);
}

// No write: the graph is left exactly as captured (decomposed programs are functional).
TEST(InPlaceAliases, FunctionalGraphIsUntouched) {
  Graph g;
  g.inputs = {Argument::tensor("x")};
  g.nodes.push_back(node("slice_1", "slice.Tensor", {{"self", Argument::tensor("x")}, {"dim", int_arg(0)}}));
  g.nodes.push_back(node("add", "add.Tensor", {{"self", Argument::tensor("slice_1")}, {"other", int_arg(1)}}));
  std::vector<OutputSpec> specs = {user_output("add")};
  resolve_in_place_aliases(g, specs);
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(input_names(g.nodes[1])[0], "slice_1");
}

}  // namespace
}  // namespace parity::pt2
