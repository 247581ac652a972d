// verify's view of the common comparison (parity/compare.h): the report's output comparison adds
// index ties (ties.h) and its report.json form.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

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

struct Comparison : TensorComparison {
  // Index outputs: elements whose indices differ but select equal values (counted as passing, see ties.h).
  int64_t ties = 0;
  // Quantized outputs (produced by a dequantize of scale `quant_scale` > 0): errors in steps of that scale.
  double quant_scale = 0, max_steps = 0;
  int64_t one_step = 0;  // elements one step apart (allowed: a rounding tie resolved the other way)
  nlohmann::json to_json() const;
};

// report.json form: {passed, max_abs_error ("Infinity" when infinite), max_rel_error, mismatches, numel,
// atol, rtol[, problem][, ties][, histogram]}.
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
