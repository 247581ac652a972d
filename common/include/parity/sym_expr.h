// Integer size expressions as they appear in exported programs and ONNX dim_params ("2*batch",
// "past + seq", "(s0 + 1)//2"): conversion from sympy's srepr form and evaluation.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace parity {

// "Add(Mul(2, s0), 1)" (sympy srepr with Symbol/Integer already reduced to names and numbers) becomes
// "2*s0 + 1". Function forms it does not know (e.g. Max) are kept as they are; infix text passes through.
std::string srepr_to_infix(const std::string& expr);

// Value of an infix expression over + - * // % and parentheses (// floors, % takes the divisor's
// sign, as in Python). Throws parity::Error (stage `stage`) naming the expression on an unknown
// symbol, a division by zero or a syntax error.
int64_t evaluate_int_expr(const std::string& expr, const std::map<std::string, int64_t>& symbols,
                          const std::string& stage = "sym");

// The identifiers of an expression, in order of first appearance; a plain symbol yields itself.
std::vector<std::string> expr_symbols(const std::string& expr);
bool is_plain_symbol(const std::string& expr);

}  // namespace parity
