// verify's view of the common comparison (parity/compare.h): the report's output comparison adds
// index ties (ties.h) and its report.json form.
#pragma once
#include <cstdint>

#include <nlohmann/json.hpp>

#include "parity/compare.h"
#include "parity/element.h"
#include "parity/tensor.h"

namespace parity::verify {

using parity::default_tolerance;
using parity::element_as_double;
using parity::histogram_bin;
using parity::histogram_edges;
using parity::Tolerance;

struct Comparison : TensorComparison {
  // Index outputs: elements whose indices differ but select equal values (counted as passing, see ties.h).
  int64_t ties = 0;
  nlohmann::json to_json() const;
};

// report.json form: {passed, max_abs_error ("Infinity" when infinite), max_rel_error, mismatches, numel,
// atol, rtol[, problem][, ties][, histogram]}.
void to_json(nlohmann::json& j, const Comparison& c);
void from_json(const nlohmann::json& j, Comparison& c);

Comparison compare_tensors(const Tensor& expected, const Tensor& actual, const Tolerance& tol);
inline Comparison compare_tensors(const Tensor& expected, const Tensor& actual) {
  return verify::compare_tensors(expected, actual, default_tolerance(expected.dtype()));
}

}  // namespace parity::verify
