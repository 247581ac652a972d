// Numerical comparison of two tensors with dtype-aware tolerances.
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "parity/tensor.h"

namespace parity::verify {

struct Tolerance {
  double atol = 0, rtol = 0;
};
// Documented defaults (README): float32 1e-5/1e-4, float64 1e-7/1e-7, float16 1e-3/1e-2,
// bfloat16 1e-2/2e-2, integers and bool exact.
Tolerance default_tolerance(DType dtype);

struct Comparison {
  bool passed = false;
  std::string problem;  // set when shapes/dtypes differ (then errors are not computed)
  double max_abs_error = 0;
  double max_rel_error = 0;  // over elements whose |expected| > atol (near zero it is meaningless)
  int64_t mismatches = 0, numel = 0;
  Tolerance tolerance;
  nlohmann::json to_json() const;
};

// An element mismatches when |actual - expected| > atol + rtol * |expected|, or NaN-ness differs.
Comparison compare_tensors(const Tensor& expected, const Tensor& actual, const Tolerance& tol);
inline Comparison compare_tensors(const Tensor& expected, const Tensor& actual) {
  return compare_tensors(expected, actual, default_tolerance(expected.dtype()));
}

// Element i of any numeric dtype as a double (float16/bfloat16 decoded).
double element_as_double(const Tensor& t, int64_t i);

}  // namespace parity::verify
