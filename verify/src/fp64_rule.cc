// The fp64 rule (compare.h; scenarios/fp64.py is the same rule for the peers and states it in full).
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "parity/tensor_io.h"
#include "parity/verify/compare.h"

namespace parity::verify {

using json = nlohmann::json;

namespace {

json number_or_null(double v) { return std::isfinite(v) ? json(v) : json(); }

constexpr double kAgreement = 4e-2;  // torch's loose_tol in same(); capture keeps no reference farther off

double bound_of(const Fp64Rule& r) { return r.multiplier * r.ref_error + r.additive; }

// torch's: 2, or 3 where noise dominates (small tensors) or the dtype is a half one.
double multiplier_for(const Tensor& t) {
  const bool half = t.dtype() == DType::kFloat16 || t.dtype() == DType::kBFloat16;
  return t.numel() < 1000 || half ? 3.0 : 2.0;
}

// NaN and infinities must sit where eager has them: the rmse over finite values cannot judge those.
bool non_finite_placement_matches(const Tensor& eager, const Tensor& actual) {
  for (int64_t i = 0; i < eager.numel(); ++i) {
    const double e = element_as_double(eager, i), a = element_as_double(actual, i);
    if (std::isnan(e) != std::isnan(a)) return false;
    if ((std::isinf(e) || std::isinf(a)) && e != a) return false;
  }
  return true;
}

}  // namespace

void to_json(json& j, const Fp64Rule& r) {
  j = {{"passed", r.passed},
       {"res_error", number_or_null(r.res_error)},
       {"ref_error", number_or_null(r.ref_error)},
       {"multiplier", r.multiplier},
       {"additive", r.additive}};
  if (!r.problem.empty()) j["problem"] = r.problem;
  if (!r.input_set.empty()) j["input_set"] = r.input_set, j["output"] = r.output;
}

void from_json(const json& j, Fp64Rule& r) {
  auto number = [&](const char* key) { return j.value(key, json()).is_number() ? j[key].get<double>() : NAN; };
  r.passed = j.at("passed").get<bool>();
  r.res_error = number("res_error"), r.ref_error = number("ref_error");
  r.multiplier = j.value("multiplier", 0.0), r.additive = j.value("additive", 0.0);
  r.problem = j.value("problem", "");
  r.input_set = j.value("input_set", ""), r.output = j.value("output", int64_t{-1});
}

std::string fp64_rule_text(const Fp64Rule& r) {
  if (!r.problem.empty()) return "fp64 rule: " + r.problem;
  char text[200];
  std::snprintf(text, sizeof text, "fp64 rule: rmse vs float64 %.2e %s %g x eager's %.2e + %.2e", r.res_error,
                r.passed ? "<=" : ">", r.multiplier, r.ref_error, r.additive);
  return text;
}

std::optional<Fp64Rule> fp64_rule(const Tensor& eager, const Tensor& actual, const Tensor& reference,
                                  const Tolerance& tol) {
  if (!reference.defined() || !dtype_is_floating(eager.dtype()) || eager.dtype() != actual.dtype() ||
      eager.shape() != actual.shape() || reference.shape() != eager.shape())
    return std::nullopt;
  Fp64Rule r;
  r.multiplier = multiplier_for(eager), r.additive = tol.atol / 10;
  if (!non_finite_placement_matches(eager, actual)) {
    r.problem = "NaN or infinity placement differs from eager";
    return r;
  }
  double ref_sum = 0, res_sum = 0;
  int64_t n = 0;
  for (int64_t i = 0; i < eager.numel(); ++i) {
    const double e = element_as_double(eager, i), a = element_as_double(actual, i);
    const double f = element_as_double(reference, i);
    if (!std::isfinite(e)) continue;  // equal NaN / infinity on both sides (checked above)
    if (!std::isfinite(f)) {
      r.problem = "the float64 run is not finite where eager is";
      return r;
    }
    // As at capture (scenarios/fp64.py AGREEMENT): a float64 output this far from eager is no run of the
    // same computation (a stale or hand-edited file); far from eager, it would excuse any error.
    if (!(std::fabs(f - e) <= kAgreement * (1 + std::fabs(e)))) {
      r.problem = "the float64 run differs from eager by more than 0.04";
      return r;
    }
    ref_sum += (f - e) * (f - e), res_sum += (f - a) * (f - a), ++n;
  }
  r.ref_error = n ? std::sqrt(ref_sum / static_cast<double>(n)) : 0;
  r.res_error = n ? std::sqrt(res_sum / static_cast<double>(n)) : 0;
  r.passed = r.res_error <= bound_of(r);
  return r;
}

const Fp64Rule& closer_to_failing(const Fp64Rule& a, const Fp64Rule& b) {
  auto ratio = [](const Fp64Rule& r) {
    const double bound = bound_of(r);
    return !r.problem.empty() || !(bound > 0) ? INFINITY : r.res_error / bound;
  };
  return ratio(b) > ratio(a) ? b : a;
}

std::vector<Tensor> read_fp64_outputs(const std::string& set_dir, size_t count) {
  std::vector<Tensor> out(count);
  for (size_t i = 0; i < count; ++i) {
    const auto path = std::filesystem::path(set_dir) / "fp64" / ("output_" + std::to_string(i) + ".pb");
    if (std::filesystem::exists(path)) out[i] = read_tensor_file(path.string()).tensor;
  }
  return out;
}

Comparison compare_with_eager(const Tensor& eager, const Tensor& actual, const Tensor& reference) {
  Comparison c = compare_tensors(eager, actual);
  if (c.passed || !c.problem.empty()) return c;
  c.fp64_rule = fp64_rule(eager, actual, reference, c.tolerance);
  if (c.fp64_rule && c.fp64_rule->passed) c.passed = true, c.detail.reset();
  return c;
}

}  // namespace parity::verify
