// Numerical comparison of two tensors with dtype-aware tolerances.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

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
  // Index outputs: elements whose indices differ but select equal values (counted as passing, see ties.h).
  int64_t ties = 0;
  Tolerance tolerance;
  // Fixed-bin histogram of |actual - expected| (see histogram_edges()); empty when `problem` is set.
  std::vector<int64_t> histogram;
  nlohmann::json to_json() const;
};

// Upper edges of the error histogram's bins: bin 0 counts exact zeros, bin i (1..10) errors in
// (edges[i-1], edges[i]] with edges = 0, 1e-9, 1e-8, ..., 1e0, and the last bin errors > 1, infinite
// errors and NaN disagreements. Fixed decades so that histograms of different runs line up.
const std::vector<double>& histogram_edges();
size_t histogram_bin(double abs_error);

// An element mismatches when |actual - expected| > atol + rtol * |expected|, or NaN-ness differs.
Comparison compare_tensors(const Tensor& expected, const Tensor& actual, const Tolerance& tol);
inline Comparison compare_tensors(const Tensor& expected, const Tensor& actual) {
  return compare_tensors(expected, actual, default_tolerance(expected.dtype()));
}

// Element i of any numeric dtype as a double (float16/bfloat16 decoded).
double element_as_double(const Tensor& t, int64_t i);

}  // namespace parity::verify
