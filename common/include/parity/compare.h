// The one numerical comparison of two tensors: integers and bool exactly (int64 beyond 2^53 too),
// floats within atol + rtol * |expected|, NaN equal only to NaN, infinities only to themselves.
// Used by verify (report.json), refrt's conformance runner and, through common/tolerances.json, by
// scenarios/peers.py.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "parity/tensor.h"

namespace parity {

struct Tolerance {
  double atol = 0, rtol = 0;
};
// The per-dtype defaults of common/tolerances.json; dtypes it does not list compare exactly.
Tolerance default_tolerance(DType dtype);
// common/tolerances.json as built into this binary (`parity tolerances --json`).
const std::string& tolerance_table_json();

struct TensorComparison {
  bool passed = false;
  std::string problem;  // set when shapes/dtypes differ (then errors are not computed)
  double max_abs_error = 0;
  double max_rel_error = 0;  // over elements whose |expected| > atol (near zero it is meaningless)
  int64_t mismatches = 0, numel = 0;
  int64_t first_mismatch = -1;  // index of the first element beyond tolerance
  Tolerance tolerance;
  // Fixed-bin histogram of |actual - expected| (see histogram_edges()); empty when `problem` is set.
  std::vector<int64_t> histogram;
};

// Upper edges of the error histogram's bins: bin 0 counts exact zeros, bin i (1..10) errors in
// (edges[i-1], edges[i]] with edges = 0, 1e-9, 1e-8, ..., 1e0, and the last bin errors > 1, infinite
// errors and NaN disagreements. Fixed decades so that histograms of different runs line up.
const std::vector<double>& histogram_edges();
size_t histogram_bin(double abs_error);

TensorComparison compare_elementwise(const Tensor& expected, const Tensor& actual, const Tolerance& tol);

// Element i as text for messages: integers exactly, floats with 9 significant digits.
std::string element_text(const Tensor& t, int64_t i);

}  // namespace parity
