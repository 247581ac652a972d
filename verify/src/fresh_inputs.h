// Fresh input sets for `parity verify --fresh K`: new values for every dynamic dim (within the program's
// range constraints, different from every value seen at capture) and new random data.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "parity/exporter/program.h"
#include "parity/tensor.h"

namespace parity::verify {

struct FreshSet {
  std::string name;                     // "fresh_<k>"
  std::map<std::string, int64_t> dims;  // symbol -> value
  std::vector<Tensor> inputs;           // Program::user_input_names() order
};

// `captured` are the captured input sets (their shapes give the values to avoid, their data the value
// ranges). Deterministic for a given seed. Throws parity::Error when an input's shape uses an
// expression that cannot be evaluated or a symbol has no unused value in its range.
std::vector<FreshSet> make_fresh_sets(const pt2::Program& program, const std::vector<std::vector<Tensor>>& captured,
                                      int count, uint64_t seed);

// Integer value of a plain sym expression ("s0", "2*s0 + 1", "(s0 + s1)//2") for the given symbols.
int64_t evaluate_sym_expr(const std::string& expr, const std::map<std::string, int64_t>& symbols);

}  // namespace parity::verify
