// pt2::OpTarget: the one parse of an FX call target, checked against the forms torch.export writes.
#include <gtest/gtest.h>

#include "parity/exporter/program.h"

namespace parity::pt2 {
namespace {

TEST(OpTarget, SplitsAtenOverloads) {
  const OpTarget t = OpTarget::parse("torch.ops.aten.relu_.default");
  EXPECT_TRUE(t.torch_ops);
  EXPECT_EQ(t.ns, "aten");
  EXPECT_EQ(t.op, "relu_");
  EXPECT_EQ(t.overload, "default");
  EXPECT_EQ(t.key(), "aten::relu_.default");
  EXPECT_EQ(t.qualified(), "aten.relu_.default");
  EXPECT_TRUE(t.is_aten());
  EXPECT_TRUE(t.is_in_place());
}

TEST(OpTarget, DunderAndFunctionalOpsAreNotInPlace) {
  EXPECT_FALSE(OpTarget::parse("torch.ops.aten.__and__.Tensor").is_in_place());
  EXPECT_FALSE(OpTarget::parse("torch.ops.aten.add.Tensor").is_in_place());
  EXPECT_TRUE(OpTarget::parse("torch.ops.aten.add_.Tensor").is_in_place());
  // Only aten ops follow the trailing-underscore convention.
  EXPECT_FALSE(OpTarget::parse("torch.ops.mylib.scale_.default").is_in_place());
}

TEST(OpTarget, HigherOrderOpsHaveNoOverload) {
  const OpTarget t = OpTarget::parse("torch.ops.higher_order.cond");
  EXPECT_EQ(t.ns, "higher_order");
  EXPECT_EQ(t.op, "cond");
  EXPECT_EQ(t.overload, "");
  EXPECT_EQ(t.key(), "higher_order::cond");
}

TEST(OpTarget, PythonOperatorTargets) {
  const OpTarget t = OpTarget::parse("_operator.getitem");
  EXPECT_FALSE(t.torch_ops);
  EXPECT_EQ(t.ns, "_operator");
  EXPECT_EQ(t.op, "getitem");
  EXPECT_EQ(t.key(), "_operator::getitem");
  EXPECT_FALSE(t.is_aten());
}

TEST(OpTarget, OverloadNamesWithDotsStayWhole) {
  // Custom ops may have dotted overload names; everything after the op name is the overload.
  const OpTarget t = OpTarget::parse("torch.ops.mylib.op.a.b");
  EXPECT_EQ(t.op, "op");
  EXPECT_EQ(t.overload, "a.b");
}

}  // namespace
}  // namespace parity::pt2
