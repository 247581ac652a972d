// Fresh input sets: size expressions, range constraints, values never seen at capture.
#include <gtest/gtest.h>

#include <set>

#include "../../verify/src/fresh_inputs.h"
#include "../../verify/src/intermediates.h"
#include "../exporter/pt2_fixture.h"
#include "parity/error.h"

namespace parity {
namespace {

TEST(FreshInputs, EvaluatesSizeExpressions) {
  const std::map<std::string, int64_t> s = {{"s0", 7}, {"s1", 3}};
  EXPECT_EQ(verify::evaluate_sym_expr("s0", s), 7);
  EXPECT_EQ(verify::evaluate_sym_expr("2*s0 + 1", s), 15);
  EXPECT_EQ(verify::evaluate_sym_expr("(s0 + s1)//2 - s1", s), 2);
  EXPECT_EQ(verify::evaluate_sym_expr("-s1 + 10", s), 7);
  EXPECT_EQ(verify::evaluate_sym_expr("s0 % 4", s), 3);
  EXPECT_THROW(verify::evaluate_sym_expr("s9 + 1", s), Error);
  EXPECT_THROW(verify::evaluate_sym_expr("s0 //", s), Error);
  EXPECT_THROW(verify::evaluate_sym_expr("s0 // (s1 - 3)", s), Error);
}

TEST(FreshInputs, NewDimsWithinTheRangeAndNotSeenAtCapture) {
  testing::Pt2Fixture f;
  f.model["range_constraints"]["s77"] = {{"min_val", 3}, {"max_val", 8}};
  const auto program = pt2::read_pt2(f.write("fresh.pt2"));
  std::vector<std::vector<Tensor>> captured;
  for (int64_t batch : {4, 6}) {
    Tensor x(DType::kFloat32, {batch, 3});
    for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = 10.0f + static_cast<float>(i % 3);
    captured.push_back({x});
  }
  const auto sets = verify::make_fresh_sets(program, captured, 20, 1234);
  ASSERT_EQ(sets.size(), 20u);
  std::set<int64_t> used;
  for (const auto& s : sets) {
    const int64_t batch = s.dims.at("s77");
    EXPECT_TRUE(batch >= 3 && batch <= 8 && batch != 4 && batch != 6) << batch;
    used.insert(batch);
    ASSERT_EQ(s.inputs.size(), 1u);
    EXPECT_EQ(s.inputs[0].shape(), (Shape{batch, 3}));
  }
  EXPECT_EQ(used, (std::set<int64_t>{3, 5, 7, 8}));  // 20 draws cover the 4 allowed values
  // Deterministic per seed.
  EXPECT_EQ(verify::make_fresh_sets(program, captured, 1, 1234)[0].dims, sets[0].dims);

  f.model["range_constraints"]["s77"] = {{"min_val", 4}, {"max_val", 4}};
  const auto pinned = pt2::read_pt2(f.write("fresh_pinned.pt2"));
  EXPECT_THROW(verify::make_fresh_sets(pinned, captured, 1, 1), Error);  // no value left to try
}

TEST(FirstDivergence, SourceIsTheUsersFrame) {
  EXPECT_EQ(
      verify::source_of("File \"/v/site-packages/torch/_dynamo/x.py\", line 9, in f\n    a()\n"
                        "File \"/home/u/model.py\", line 3, in forward\n    y = f(x)\n"
                        "File \"/v/site-packages/torch/nn/modules/linear.py\", line 134, in forward\n    F.linear()"),
      "/home/u/model.py:3 in forward: y = f(x)");
  EXPECT_EQ(verify::source_of(""), "");
}

}  // namespace
}  // namespace parity
