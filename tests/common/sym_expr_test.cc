// Size expressions: sympy srepr -> infix text, and integer evaluation with Python's // and % semantics
// (expected values computed by Python: -7 // 2 == -4, -7 % 3 == 2, 7 % -3 == -2).
#include <gtest/gtest.h>

#include "parity/error.h"
#include "parity/sym_expr.h"

namespace parity {
namespace {

TEST(SymExpr, SreprBecomesInfix) {
  EXPECT_EQ(srepr_to_infix("s0"), "s0");
  EXPECT_EQ(srepr_to_infix("Mul(2, s6)"), "2*s6");
  EXPECT_EQ(srepr_to_infix("Add(s11, s96)"), "s11 + s96");
  EXPECT_EQ(srepr_to_infix("Add(Mul(4, s11), Mul(4, s96))"), "4*s11 + 4*s96");
  EXPECT_EQ(srepr_to_infix("Add(s0, -1)"), "s0 - 1");
  EXPECT_EQ(srepr_to_infix("Mul(2, Add(s0, 1))"), "2*(s0 + 1)");
  EXPECT_EQ(srepr_to_infix("Add(s0, Mul(-1, s1))"), "s0 - s1");
  EXPECT_EQ(srepr_to_infix("FloorDiv(Add(s0, 1), 2)"), "(s0 + 1)//2");
  EXPECT_EQ(srepr_to_infix("Max(1, s0)"), "Max(1, s0)");  // unknown functions keep their call form
  EXPECT_EQ(srepr_to_infix("2*s0 + 1"), "2*s0 + 1");      // infix passes through
  EXPECT_EQ(srepr_to_infix("Mul(2, s0"), "Mul(2, s0");    // malformed text is left alone
}

TEST(SymExpr, EvaluatesLikePython) {
  const std::map<std::string, int64_t> s{{"batch", 3}, {"seq", 7}, {"past", 5}};
  EXPECT_EQ(evaluate_int_expr("2*batch", s), 6);
  EXPECT_EQ(evaluate_int_expr("past + seq", s), 12);
  EXPECT_EQ(evaluate_int_expr("(seq + 1)//2", s), 4);
  EXPECT_EQ(evaluate_int_expr("-seq//2", s), -4);
  EXPECT_EQ(evaluate_int_expr("-seq % 3", s), 2);
  EXPECT_EQ(evaluate_int_expr("seq % -3", s), -2);
  EXPECT_EQ(evaluate_int_expr(srepr_to_infix("Add(s0, Mul(-1, s1))"), {{"s0", 9}, {"s1", 4}}), 5);
}

TEST(SymExpr, ErrorsNameTheExpression) {
  const std::map<std::string, int64_t> s{{"batch", 3}};
  for (const char* bad :
       {"2*width", "batch//0", "batch %0", "(batch + 1", "batch +", "Max(1, batch)", "99999999999999999999"}) {
    try {
      evaluate_int_expr(bad, s, "refrt");
      ADD_FAILURE() << bad << " evaluated";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
}

TEST(SymExpr, SymbolsInOrder) {
  EXPECT_EQ(expr_symbols("2*batch + past - batch"), (std::vector<std::string>{"batch", "past"}));
  EXPECT_EQ(expr_symbols("16"), std::vector<std::string>{});
  EXPECT_TRUE(is_plain_symbol("s77"));
  EXPECT_FALSE(is_plain_symbol("2*s77"));
  EXPECT_FALSE(is_plain_symbol("7"));
}

}  // namespace
}  // namespace parity
