#include "parity/verify/compare.h"

#include <algorithm>
#include <cmath>

namespace parity::verify {

Comparison compare_tensors(const Tensor& expected, const Tensor& actual, const Tolerance& tol) {
  Comparison c;
  static_cast<TensorComparison&>(c) = parity::compare_elementwise(expected, actual, tol);
  if (!c.passed) c.detail = mismatch_detail(expected, actual);
  return c;
}

Comparison compare_complex(const Tensor& expected, const Tensor& actual, const std::string& complex_dtype) {
  const Tolerance tol = default_tolerance(expected.dtype());
  Comparison c = verify::compare_tensors(expected, actual, tol);  // shapes, dtypes, NaN placement, histogram
  c.complex_dtype = complex_dtype;
  if (!c.problem.empty()) return c;
  if (expected.rank() == 0 || expected.shape().back() != 2 || !dtype_is_floating(expected.dtype())) {
    c.passed = false;
    c.problem = "a complex output must be (real, imaginary) pairs in a trailing dim of 2, got " +
                dtype_name(expected.dtype()) + " " + shape_str(expected.shape());
    return c;
  }
  const int64_t n = expected.numel() / 2;
  c.numel = n, c.mismatches = 0, c.first_mismatch = -1, c.max_abs_error = 0, c.max_rel_error = 0;
  c.histogram.assign(histogram_edges().size() + 1, 0);
  for (int64_t k = 0; k < n; ++k) {
    const double er = element_as_double(expected, 2 * k), ei = element_as_double(expected, 2 * k + 1);
    const double ar = element_as_double(actual, 2 * k), ai = element_as_double(actual, 2 * k + 1);
    const bool e_nan = std::isnan(er) || std::isnan(ei), a_nan = std::isnan(ar) || std::isnan(ai);
    double err;
    if (e_nan || a_nan)
      err = e_nan && a_nan ? 0.0 : INFINITY;
    else if (std::isinf(er) || std::isinf(ei) || std::isinf(ar) || std::isinf(ai))
      err = er == ar && ei == ai ? 0.0 : INFINITY;
    else
      err = std::hypot(ar - er, ai - ei);
    const double modulus = std::hypot(er, ei);
    c.max_abs_error = std::max(c.max_abs_error, err);
    if (modulus > tol.atol && std::isfinite(err)) c.max_rel_error = std::max(c.max_rel_error, err / modulus);
    ++c.histogram[histogram_bin(err)];
    if (!(err <= tol.atol + tol.rtol * (std::isfinite(modulus) ? modulus : 0))) {
      if (c.first_mismatch < 0) c.first_mismatch = 2 * k;
      ++c.mismatches;
    }
  }
  c.passed = c.mismatches == 0;
  c.detail.reset();
  if (!c.passed) c.detail = mismatch_detail(expected, actual);
  return c;
}

namespace {
// Two dequantized values k steps apart differ by k * scale up to float rounding of each: a margin of
// 1e-3 step keeps exactly-one-step differences in and two-step ones out.
constexpr double kOneStep = 1.001;
}  // namespace

Comparison compare_quantized(const Tensor& expected, const Tensor& actual, double scale) {
  Comparison c = verify::compare_tensors(expected, actual, default_tolerance(expected.dtype()));
  c.quant_scale = scale;
  if (!c.problem.empty() || !(scale > 0) || !dtype_is_floating(expected.dtype())) return c;
  c.mismatches = 0, c.first_mismatch = -1;
  for (int64_t i = 0; i < c.numel; ++i) {
    const double e = element_as_double(expected, i), a = element_as_double(actual, i);
    if (std::isnan(e) && std::isnan(a)) continue;
    const double steps = std::fabs(a - e) / scale;
    c.max_steps = std::max(c.max_steps, std::isnan(steps) ? INFINITY : steps);
    if (!(steps <= kOneStep)) {
      if (c.first_mismatch < 0) c.first_mismatch = i;
      ++c.mismatches;
    } else if (steps > 0.5) {
      ++c.one_step;
    }
  }
  c.passed = c.mismatches == 0;
  c.detail.reset();  // re-judged in steps: the detail follows this verdict, not the elementwise one
  if (!c.passed) c.detail = mismatch_detail(expected, actual);
  return c;
}

std::optional<double> dequantize_scale(const pt2::Program& program, const std::string& fx_value) {
  for (const auto& node : program.graph.nodes) {
    if (node.target != "torch.ops.quantized_decomposed.dequantize_per_tensor.default") continue;
    if (node.outputs.size() != 1 || !node.outputs[0].is_tensor() || node.outputs[0].tensor_name() != fx_value) continue;
    const pt2::Argument* scale = node.input("scale");
    if (scale && scale->is(pt2::ArgKind::as_float)) return scale->as_float();
  }
  return std::nullopt;
}

nlohmann::json Comparison::to_json() const { return *this; }

void to_json(nlohmann::json& j, const RequantRule& r) {
  j = {{"passed", r.passed},
       {"activations", r.activations},
       {"one_step", r.one_step},
       {"max_steps", r.max_steps},
       {"max_abs_error", std::isfinite(r.max_abs_error) ? nlohmann::json(r.max_abs_error) : nlohmann::json("Infinity")},
       {"flipped", r.flipped},
       {"max_tie_distance", std::isfinite(r.max_tie_distance) ? nlohmann::json(r.max_tie_distance) : nlohmann::json()}};
  if (!r.problem.empty()) j["problem"] = r.problem;
}

void from_json(const nlohmann::json& j, RequantRule& r) {
  r.passed = j.at("passed").get<bool>();
  r.activations = j.value("activations", int64_t{0});
  r.one_step = j.value("one_step", int64_t{0});
  r.max_steps = j.value("max_steps", 0.0);
  const auto& abs = j.at("max_abs_error");
  r.max_abs_error = abs.is_string() ? INFINITY : abs.get<double>();
  r.problem = j.value("problem", "");
  if (j.contains("flipped")) r.flipped = j["flipped"].get<std::map<std::string, int64_t>>();
  const auto tie = j.value("max_tie_distance", nlohmann::json());
  r.max_tie_distance = tie.is_number() ? tie.get<double>() : NAN;
}

void to_json(nlohmann::json& j, const Comparison& c) {
  j = {{"passed", c.passed},
       {"max_abs_error", c.max_abs_error},
       {"max_rel_error", c.max_rel_error},
       {"mismatches", c.mismatches},
       {"numel", c.numel},
       {"atol", c.tolerance.atol},
       {"rtol", c.tolerance.rtol}};
  if (!c.problem.empty()) j["problem"] = c.problem;
  if (c.ties > 0) j["ties"] = c.ties;
  if (!c.histogram.empty()) j["histogram"] = c.histogram;
  if (std::isinf(c.max_abs_error)) j["max_abs_error"] = "Infinity";
  if (c.detail && !c.passed) j["detail"] = *c.detail;
  if (c.fp64_rule) j["fp64_rule"] = *c.fp64_rule;
  if (c.requant_rule) j["requant_rule"] = *c.requant_rule;
  if (!c.complex_dtype.empty())
    j["complex"] = {{"dtype", c.complex_dtype},
                    {"rule",
                     "compared as complex numbers: |actual - expected| <= atol + rtol * |expected| per "
                     "complex element"}};
  if (c.quant_scale > 0)
    j["quantized"] = {
        {"scale", c.quant_scale},
        {"max_steps", std::isfinite(c.max_steps) ? nlohmann::json(c.max_steps) : nlohmann::json("Infinity")},
        {"one_step", c.one_step},
        {"rule", "a dequantized output: at most one quantization step apart per element"}};
}

void from_json(const nlohmann::json& j, Comparison& c) {
  c.passed = j.at("passed").get<bool>();
  const auto& abs = j.at("max_abs_error");
  c.max_abs_error = abs.is_string() ? INFINITY : abs.get<double>();
  c.max_rel_error = j.at("max_rel_error").get<double>();
  c.mismatches = j.at("mismatches").get<int64_t>();
  c.numel = j.at("numel").get<int64_t>();
  c.tolerance = {j.at("atol").get<double>(), j.at("rtol").get<double>()};
  c.problem = j.value("problem", "");
  c.ties = j.value("ties", int64_t{0});
  c.histogram = j.value("histogram", std::vector<int64_t>{});
  if (j.contains("detail")) c.detail = j["detail"].get<MismatchDetail>();
  if (j.contains("fp64_rule")) c.fp64_rule = j["fp64_rule"].get<Fp64Rule>();
  if (j.contains("requant_rule")) c.requant_rule = j["requant_rule"].get<RequantRule>();
  if (const auto z = j.find("complex"); z != j.end()) c.complex_dtype = z->value("dtype", "complex");
  if (const auto q = j.find("quantized"); q != j.end()) {
    c.quant_scale = q->at("scale").get<double>();
    const auto& steps = q->at("max_steps");
    c.max_steps = steps.is_string() ? INFINITY : steps.get<double>();
    c.one_step = q->value("one_step", int64_t{0});
  }
}

}  // namespace parity::verify
