// Tie-aware comparison of index outputs: the producing FX op decides; equal selected values pass as ties,
// anything else still fails. Oracle: hand-computed selections of small tensors.
#include <gtest/gtest.h>

#include "../../verify/src/ties.h"
#include "parity/verify/compare.h"

namespace parity {
namespace {

Tensor floats(Shape shape, std::vector<float> v) {
  Tensor t(DType::kFloat32, std::move(shape));
  std::copy(v.begin(), v.end(), t.data<float>());
  return t;
}
Tensor longs(Shape shape, std::vector<int64_t> v) {
  Tensor t(DType::kInt64, std::move(shape));
  std::copy(v.begin(), v.end(), t.data<int64_t>());
  return t;
}

pt2::Argument tensor_arg(const std::string& name) { return pt2::Argument::tensor(name); }
pt2::NamedArgument int_arg(const std::string& name, int64_t v) {
  pt2::schema::Argument a;
  a.set_as_int(v);
  return {name, pt2::Argument(a), pt2::schema::ArgumentKind::POSITIONAL};
}

// One node `target(self=x, <args>)` with outputs `outs`; x has the given rank.
pt2::Program program_with(const std::string& target, std::vector<pt2::NamedArgument> args,
                          std::vector<std::string> outs, size_t rank) {
  pt2::Program p;
  pt2::Node node;
  node.name = "node0";
  node.target = "torch.ops." + target;
  node.inputs.push_back({"self", tensor_arg("x"), pt2::schema::ArgumentKind::POSITIONAL});
  for (auto& a : args) node.inputs.push_back(a);
  for (const auto& o : outs) node.outputs.push_back(tensor_arg(o));
  p.graph.nodes.push_back(node);
  pt2::TensorMeta meta;
  meta.dtype = DType::kFloat32;
  meta.sizes.resize(rank, pt2::SymDim{4, "", -1});
  p.graph.tensor_values["x"] = meta;
  return p;
}

TEST(Ties, TheFxOpDecidesWhichValuesAreIndices) {
  const auto topk = program_with("aten.topk.default", {int_arg("k", 2)}, {"values", "indices"}, 2);
  const auto idx = verify::index_source(topk, "indices");
  ASSERT_TRUE(idx.has_value());
  EXPECT_EQ(idx->dim, 1);  // topk's default dim -1 of a rank-2 input
  EXPECT_EQ(idx->input_value, "x");
  EXPECT_FALSE(verify::index_source(topk, "values").has_value());
  const auto argmax = program_with("aten.argmax.default", {}, {"am"}, 2);
  ASSERT_TRUE(verify::index_source(argmax, "am").has_value());
  EXPECT_TRUE(verify::index_source(argmax, "am")->flat);
  const auto maxdim = program_with("aten.max.dim", {int_arg("dim", 0)}, {"v", "i"}, 2);
  ASSERT_TRUE(verify::index_source(maxdim, "i").has_value());
  EXPECT_EQ(verify::index_source(maxdim, "i")->dim, 0);
  // An int64 output of another op is not an index output, whatever its dtype.
  const auto other = program_with("aten.cumsum.default", {int_arg("dim", 0)}, {"c"}, 2);
  EXPECT_FALSE(verify::index_source(other, "c").has_value());
}

TEST(Ties, DifferentIndicesOfEqualValuesPass) {
  const Tensor x = floats({2, 5}, {1, 3, 3, 0, 3, 2, 2, 1, 2, 0});
  const Tensor eager = longs({2, 3}, {2, 4, 1, 0, 3, 1});  // torch.topk(x, 3): [2,4,1], [0,3,1]
  const Tensor onnx = longs({2, 3}, {1, 2, 4, 0, 1, 3});   // lower index first
  verify::IndexSource s{"topk", "aten::topk.default", "x", 1, false};
  verify::Comparison cmp = verify::compare_tensors(eager, onnx);
  ASSERT_FALSE(cmp.passed);
  verify::settle_ties(cmp, s, x, eager, onnx);
  EXPECT_TRUE(cmp.passed);
  EXPECT_EQ(cmp.ties, 5);  // row 0: all 3 positions differ, row 1: the last 2
  EXPECT_EQ(cmp.mismatches, 0);
  EXPECT_EQ(cmp.max_abs_error, 0);
  EXPECT_EQ(cmp.to_json()["ties"], 5);
}

TEST(Ties, IndicesOfDifferentValuesStillFail) {
  const Tensor x = floats({5}, {1, 3, 3, 0, 2});
  const Tensor eager = longs({2}, {1, 2});
  const Tensor wrong = longs({2}, {1, 4});  // selects 2, not 3
  verify::IndexSource s{"topk", "aten::topk.default", "x", 0, false};
  verify::Comparison cmp = verify::compare_tensors(eager, wrong);
  verify::settle_ties(cmp, s, x, eager, wrong);
  EXPECT_FALSE(cmp.passed);
  EXPECT_EQ(cmp.ties, 0);
  EXPECT_EQ(cmp.mismatches, 1);
  const Tensor out_of_range = longs({2}, {1, 9});
  cmp = verify::compare_tensors(eager, out_of_range);
  verify::settle_ties(cmp, s, x, eager, out_of_range);
  EXPECT_FALSE(cmp.passed);
}

TEST(Ties, ArgmaxAlongAReducedDimAndFlattened) {
  // x [2, 3, 2]; argmax over dim 1 (keepdim false) -> [2, 2].
  const Tensor x = floats({2, 3, 2}, {5, 1, 5, 7, 0, 7, /**/ 2, 2, 9, 2, 9, 2});
  verify::IndexSource along{"am", "aten::argmax.default", "x", 1, false};
  const Tensor eager = longs({2, 2}, {0, 1, 1, 0});
  const Tensor other = longs({2, 2}, {1, 1, 2, 0});  // x[0,1,0]=5 == x[0,0,0]; x[1,2,0]=9 == x[1,1,0]
  verify::Comparison cmp = verify::compare_tensors(eager, other);
  verify::settle_ties(cmp, along, x, eager, other);
  EXPECT_TRUE(cmp.passed);
  EXPECT_EQ(cmp.ties, 2);
  const Tensor not_a_tie = longs({2, 2}, {0, 0, 1, 0});  // x[0,0,1]=1 != x[0,1,1]=7
  cmp = verify::compare_tensors(eager, not_a_tie);
  verify::settle_ties(cmp, along, x, eager, not_a_tie);
  EXPECT_FALSE(cmp.passed);
  verify::IndexSource flat{"am", "aten::argmax.default", "x", 0, true};
  const Tensor e = longs({}, {8}), a = longs({}, {10});  // both 9
  cmp = verify::compare_tensors(e, a);
  verify::settle_ties(cmp, flat, x, e, a);
  EXPECT_TRUE(cmp.passed);
  EXPECT_EQ(cmp.ties, 1);
}

}  // namespace
}  // namespace parity
