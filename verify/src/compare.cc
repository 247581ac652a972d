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
  if (const auto q = j.find("quantized"); q != j.end()) {
    c.quant_scale = q->at("scale").get<double>();
    const auto& steps = q->at("max_steps");
    c.max_steps = steps.is_string() ? INFINITY : steps.get<double>();
    c.one_step = q->value("one_step", int64_t{0});
  }
}

}  // namespace parity::verify
