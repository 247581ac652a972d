// The libtorch reference's layout and runtime-assertion rules (verify/src/reference_layout.h), against
// strides and messages written out by hand from torch's conventions.
#include <gtest/gtest.h>

#include "../../verify/src/reference_layout.h"

namespace parity::verify {
namespace {

using V = std::vector<int64_t>;

TEST(ReferenceLayout, DimOrderOfDenseLayouts) {
  EXPECT_EQ(dense_dim_order({2, 3, 4}, {12, 4, 1}), V({0, 1, 2}));  // contiguous
  // PatchTST's batch norm output: (6, 16, 4) recorded with strides (64, 1, 16), a permuted (6, 4, 16).
  EXPECT_EQ(dense_dim_order({6, 16, 4}, {64, 1, 16}), V({0, 2, 1}));
  EXPECT_EQ(dense_dim_order({2, 3, 5, 5}, {75, 1, 15, 3}), V({0, 2, 3, 1}));  // channels-last
  EXPECT_EQ(dense_dim_order({2, 1, 4}, {4, 99, 1}), V({0, 2, 1}));            // a size-1 dim's stride is free
}

TEST(ReferenceLayout, NoOrderForOverlappingSparseOrEmpty) {
  EXPECT_FALSE(dense_dim_order({2, 3}, {0, 1}));        // expanded
  EXPECT_FALSE(dense_dim_order({2, 3}, {6, 2}));        // every other element
  EXPECT_FALSE(dense_dim_order({2, 0, 3}, {0, 3, 1}));  // empty
  EXPECT_FALSE(dense_dim_order({2, 3}, {3}));           // rank mismatch
}

TEST(ReferenceLayout, StridesFollowTheOrderAtNewSizes) {
  // The order recorded at capture (batch 2), applied to a run with batch 5.
  EXPECT_EQ(dense_strides({15, 16, 4}, {0, 2, 1}), V({64, 1, 16}));
  EXPECT_EQ(dense_strides({2, 3, 4}, {0, 1, 2}), V({12, 4, 1}));
  EXPECT_TRUE(same_layout({15, 16, 4}, {64, 1, 16}, {64, 1, 16}));
  EXPECT_FALSE(same_layout({15, 16, 4}, {64, 4, 1}, {64, 1, 16}));  // libtorch's contiguous batch norm output
  EXPECT_TRUE(same_layout({2, 1, 4}, {4, 7, 1}, {4, 4, 1}));        // size-1 dims do not count
}

TEST(ReferenceLayout, OnlyAssertionsOnUnbackedSymbolsAreRunPast) {
  EXPECT_EQ(unbacked_assertion("Runtime assertion failed for expression u0 >= 2 on node 'ge'"), "u0 >= 2");
  EXPECT_EQ(unbacked_assertion("Runtime assertion failed for expression u12 < s83 on node 'lt_1'"), "u12 < s83");
  EXPECT_FALSE(unbacked_assertion("Runtime assertion failed for expression s0 >= 2 on node 'ge'"));  // input size
  EXPECT_FALSE(unbacked_assertion("Runtime assertion failed for expression Eq(s0, s1) on node 'eq'"));
  EXPECT_FALSE(unbacked_assertion("u0 >= 2"));  // not torch's runtime-assertion message
}

}  // namespace
}  // namespace parity::verify
