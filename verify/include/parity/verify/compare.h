// verify's view of the common comparison (parity/compare.h): the report's output comparison adds
// index ties (ties.h) and its report.json form.
#pragma once
#include <cmath>
#include <cstdint>
#include <map>
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

// Parity's second rule for floating outputs, torch's fp64-oracle rule (torch._dynamo.utils.same; stated in
// full in scenarios/fp64.py, which applies it to the peers): an output that fails the fixed rule passes when
// rmse(float64 eager, actual) <= multiplier * rmse(float64 eager, float32 eager) + atol / 10, i.e. when it
// is not much farther from the exact answer than eager itself. multiplier 2, or 3 below 1000 elements and
// for float16 / bfloat16; atol the dtype's (common/tolerances.json).
struct Fp64Rule {
  bool passed = false;
  double res_error = NAN, ref_error = NAN;  // NaN when `problem` is set
  double multiplier = 0, additive = 0;
  std::string problem;    // NaN / infinity placement differs from eager, or the float64 run is not finite
  std::string input_set;  // where, in a case-level or peer summary ("" in a per-output comparison)
  int64_t output = -1;
};
// report.json: {passed, res_error, ref_error, multiplier, additive[, problem][, input_set, output]}.
void to_json(nlohmann::json& j, const Fp64Rule& r);
void from_json(const nlohmann::json& j, Fp64Rule& r);
// "fp64 rule: rmse vs float64 3.10e-06 <= 2 x eager's 2.40e-06 + 1.00e-06" (">" when it fails).
std::string fp64_rule_text(const Fp64Rule& r);
// The rule on one output; nullopt when it does not apply (not floating, shapes or dtypes differ, the
// reference's shape differs).
std::optional<Fp64Rule> fp64_rule(const Tensor& eager, const Tensor& actual, const Tensor& reference,
                                  const Tolerance& tol);
// Of two verdicts, the one nearer to failing (res_error over its bound): what a summary shows.
const Fp64Rule& closer_to_failing(const Fp64Rule& a, const Fp64Rule& b);
// The float64 eager outputs capture saved for a set (test_data_set_<k>/fp64/output_<i>.pb), one per
// output; an undefined Tensor where there is none.
std::vector<Tensor> read_fp64_outputs(const std::string& set_dir, size_t count);

// Parity's rule for a floating output computed from quantized activations (not itself a dequantize): each
// requantization may land one step away from torch's (a rounding tie, or a summation order that crosses a
// rounding boundary), and everything after it moves with it. libtorch runs again with refrt's quantized
// activations in place of its own, each checked to be at most one step from what libtorch computes from
// the same inputs; the output passes when refrt's is within the fixed tolerance of that run.
struct RequantRule {
  bool passed = false;
  int64_t activations = 0;   // quantized activations substituted
  int64_t one_step = 0;      // their elements one step from libtorch's own
  double max_steps = 0;      // the largest such difference, in steps
  double max_abs_error = 0;  // refrt's output against the substituted run
  // The quantize nodes whose activation refrt rounded the other way, with how many elements; and the farthest
  // any of those elements lay from a rounding tie in libtorch's own run (steps; a flip must be a near-tie).
  std::map<std::string, int64_t> flipped;
  double max_tie_distance = 0;
  std::string problem;  // why it could not pass (an activation more than one step off, a flip far from a tie...)
};
// report.json: {passed, activations, one_step, max_steps, max_abs_error, flipped, max_tie_distance[, problem]}.
void to_json(nlohmann::json& j, const RequantRule& r);
void from_json(const nlohmann::json& j, RequantRule& r);

struct Comparison : TensorComparison {
  // Index outputs: elements whose indices differ but select equal values (counted as passing, see ties.h).
  int64_t ties = 0;
  std::optional<MismatchDetail> detail;  // set when the comparison failed ("detail" in report.json)
  // Quantized outputs (produced by a dequantize of scale `quant_scale` > 0): errors in steps of that scale.
  double quant_scale = 0, max_steps = 0;
  int64_t one_step = 0;  // elements one step apart (allowed: a rounding tie resolved the other way)
  // Set when the fixed rule failed and the fp64 rule was tried; `passed` is then its verdict, while
  // `mismatches` still counts the fixed rule's.
  std::optional<Fp64Rule> fp64_rule;
  // Set when the fixed (and fp64) rule failed on an output computed from quantized activations; `passed`
  // is then its verdict.
  std::optional<RequantRule> requant_rule;
  // Set for a complex output ("complex64", ...; docs/complex.md): both sides are (real, imaginary) pairs,
  // compared as complex numbers (compare_complex); numel and mismatches count complex elements.
  std::string complex_dtype;
  nlohmann::json to_json() const;
};

// report.json form: {passed, max_abs_error ("Infinity" when infinite), max_rel_error, mismatches, numel,
// atol, rtol[, problem][, ties][, histogram][, detail][, fp64_rule]} (detail only while not passed).
void to_json(nlohmann::json& j, const Comparison& c);
void from_json(const nlohmann::json& j, Comparison& c);

Comparison compare_tensors(const Tensor& expected, const Tensor& actual, const Tolerance& tol);

// A complex output ("complex" in report.json: {dtype, rule}): `expected` and `actual` hold (real, imaginary)
// pairs in their last dim; element k passes when |actual_k - expected_k| <= atol + rtol * |expected_k|, the
// moduli of the complex difference and value (so an error is judged by its size, not split between the parts).
Comparison compare_complex(const Tensor& expected, const Tensor& actual, const std::string& complex_dtype);

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
// Against eager: the fixed rule, then the fp64 rule when the fixed one fails and `reference` (eager's
// float64 output) is defined.
Comparison compare_with_eager(const Tensor& eager, const Tensor& actual, const Tensor& reference);

}  // namespace parity::verify
