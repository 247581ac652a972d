// Internal (verify): torch's symbolic-scalar helpers (torch.sym_max, sym_min, sym_float, sym_int, sym_ite,
// sym_not, _sym_sqrt, math.ceil/floor/trunc/sqrt) evaluated on concrete values, as Python evaluates
// them when torch runs the program. Kept free of libtorch: reference.cc converts its scalars.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace parity::verify {

struct SymScalar {
  enum class Kind { kInt, kFloat, kBool } kind = Kind::kInt;
  int64_t i = 0;
  double d = 0.0;
  bool b = false;

  static SymScalar of_int(int64_t v) { return {Kind::kInt, v, 0.0, false}; }
  static SymScalar of_float(double v) { return {Kind::kFloat, 0, v, false}; }
  static SymScalar of_bool(bool v) { return {Kind::kBool, 0, 0.0, v}; }
  double as_double() const {
    return kind == Kind::kFloat ? d : kind == Kind::kInt ? static_cast<double>(i) : (b ? 1.0 : 0.0);
  }
  bool truthy() const { return kind == Kind::kBool ? b : kind == Kind::kInt ? i != 0 : d != 0.0; }
};

// Whether `target` (an FX call_function target, e.g. "torch.sym_max", "math.ceil") is one of the helpers.
bool is_symbolic_helper(const std::string& target);

// The helper's result; throws parity::Error naming the target for a wrong argument count or a helper
// Parity does not know.
SymScalar eval_symbolic_helper(const std::string& target, const std::vector<SymScalar>& args);

}  // namespace parity::verify
