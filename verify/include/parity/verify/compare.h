// verify's view of the common comparison (parity/compare.h): the report's output comparison adds
// index ties (ties.h) and its report.json form.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "parity/compare.h"
#include "parity/element.h"
#include "parity/exporter/program.h"
#include "parity/tensor.h"

namespace parity::verify {

using parity::default_tolerance;
using parity::element_as_double;
using parity::histogram_bin;
using parity::histogram_edges;
using parity::Tolerance;

struct NonFinite {
  int64_t nan = 0, inf = 0;
};
struct WorstElement {
  std::vector<int64_t> index;    // multi-dimensional
  std::string expected, actual;  // element_text of each side
  double abs_error = 0;          // +inf where NaN-ness or infinities differ
};
// A failing comparison's detail (mismatch_detail.cc): NaN / Inf counts of each side, worst elements first.
struct MismatchDetail {
  NonFinite expected, actual;
  std::vector<WorstElement> worst;  // empty when shapes or dtypes differ
};
MismatchDetail mismatch_detail(const Tensor& expected, const Tensor& actual);
// report.json form: {nan: {expected, actual}, inf: {expected, actual}, worst: [{index, expected, actual, abs_error}]}.
void to_json(nlohmann::json& j, const MismatchDetail& d);
void from_json(const nlohmann::json& j, MismatchDetail& d);
// One line for the terminal: "NaN 3 ours / 0 reference, Inf 0 ours / 0 reference; worst: [0,2] nan vs 0.5; ...".
std::string mismatch_summary(const MismatchDetail& d);

struct Comparison : TensorComparison {
  // Index outputs: elements whose indices differ but select equal values (counted as passing, see ties.h).
  int64_t ties = 0;
  std::optional<MismatchDetail> detail;  // set when the comparison failed ("detail" in report.json)
  // Quantized outputs (produced by a dequantize of scale `quant_scale` > 0): errors in steps of that scale.
  double quant_scale = 0, max_steps = 0;
  int64_t one_step = 0;  // elements one step apart (allowed: a rounding tie resolved the other way)
  nlohmann::json to_json() const;
};

// report.json form: {passed, max_abs_error ("Infinity" when infinite), max_rel_error, mismatches, numel,
// atol, rtol[, problem][, ties][, histogram][, detail]} (detail only while not passed).
void to_json(nlohmann::json& j, const Comparison& c);
void from_json(const nlohmann::json& j, Comparison& c);

Comparison compare_tensors(const Tensor& expected, const Tensor& actual, const Tolerance& tol);

// The quantized rule, for an output a dequantize of scale `scale` produced: an element may differ by one
// quantization step (float rounding of x / scale landing on a tie, or an accumulation-order difference
// just across a rounding boundary); more than one step fails. report.json: "quantized": {scale, max_steps,
// one_step, rule}.
Comparison compare_quantized(const Tensor& expected, const Tensor& actual, double scale);
// The constant scale of the dequantize_per_tensor that produces program value `fx_value`, if one does.
std::optional<double> dequantize_scale(const pt2::Program& program, const std::string& fx_value);
inline Comparison compare_tensors(const Tensor& expected, const Tensor& actual) {
  return verify::compare_tensors(expected, actual, default_tolerance(expected.dtype()));
}

}  // namespace parity::verify
