#include "parity/verify/compare.h"

#include <cmath>

namespace parity::verify {

Comparison compare_tensors(const Tensor& expected, const Tensor& actual, const Tolerance& tol) {
  Comparison c;
  static_cast<TensorComparison&>(c) = parity::compare_elementwise(expected, actual, tol);
  if (!c.passed) c.detail = mismatch_detail(expected, actual);
  return c;
}

nlohmann::json Comparison::to_json() const { return *this; }

void to_json(nlohmann::json& j, const Comparison& c) {
  j = {{"passed", c.passed},         {"max_abs_error", c.max_abs_error}, {"max_rel_error", c.max_rel_error},
       {"mismatches", c.mismatches}, {"numel", c.numel},
       {"atol", c.tolerance.atol},   {"rtol", c.tolerance.rtol}};
  if (!c.problem.empty()) j["problem"] = c.problem;
  if (c.ties > 0) j["ties"] = c.ties;
  if (!c.histogram.empty()) j["histogram"] = c.histogram;
  if (std::isinf(c.max_abs_error)) j["max_abs_error"] = "Infinity";
  if (c.detail && !c.passed) j["detail"] = *c.detail;
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
}

}  // namespace parity::verify
