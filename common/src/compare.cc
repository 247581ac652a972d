#include "parity/compare.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "parity/element.h"
#include "parity/error.h"
#include "tolerances_json.h"  // kToleranceTableJson: common/tolerances.json, embedded by CMake

namespace parity {
namespace {

const std::map<std::string, Tolerance>& tolerance_table() {
  static const std::map<std::string, Tolerance> table = [] {
    std::map<std::string, Tolerance> t;
    const nlohmann::json table = nlohmann::json::parse(tolerance_table_json());
    for (const auto& [dtype, row] : table.items())
      if (row.is_object()) t[dtype] = {row.at("atol").get<double>(), row.at("rtol").get<double>()};
    return t;
  }();
  return table;
}

// Integers as a wide signed value, so that the difference of two int64/uint64 is exact.
__int128 wide_integer(const Tensor& t, int64_t i) {
  if (t.dtype() == DType::kUInt64) return static_cast<const uint64_t*>(t.raw())[i];
  return element_as_int64(t, i);
}

// |actual - expected| of element i, or NaN when the two agree on being NaN / the same infinity
// (both count as equal), or +inf when they disagree on NaN-ness or infinity.
double element_error(const Tensor& e, const Tensor& a, int64_t i, bool floating, double& expected_value) {
  if (!floating) {
    const __int128 x = wide_integer(e, i), y = wide_integer(a, i);
    expected_value = static_cast<double>(x);
    return static_cast<double>(x > y ? x - y : y - x);
  }
  const double x = element_as_double(e, i), y = element_as_double(a, i);
  expected_value = x;
  if (std::isnan(x) || std::isnan(y)) return std::isnan(x) == std::isnan(y) ? NAN : INFINITY;
  if (std::isinf(x) || std::isinf(y)) return x == y ? NAN : INFINITY;
  return std::fabs(y - x);
}

}  // namespace

const std::string& tolerance_table_json() {
  static const std::string text = kToleranceTableJson;
  return text;
}

Tolerance default_tolerance(DType dtype) {
  const auto it = tolerance_table().find(dtype_name(dtype));
  return it == tolerance_table().end() ? Tolerance{} : it->second;
}

const std::vector<double>& histogram_edges() {
  static const std::vector<double> edges = {0, 1e-9, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1};
  return edges;
}

size_t histogram_bin(double abs_error) {
  const auto& edges = histogram_edges();
  if (!(abs_error <= edges.back())) return edges.size();  // > 1, infinite or NaN
  for (size_t i = 0; i < edges.size(); ++i)
    if (abs_error <= edges[i]) return i;
  return edges.size();
}

TensorComparison compare_elementwise(const Tensor& expected, const Tensor& actual, const Tolerance& tol) {
  TensorComparison c;
  c.tolerance = tol;
  c.numel = expected.numel();
  if (expected.dtype() != actual.dtype()) {
    c.problem = "dtype " + dtype_name(actual.dtype()) + " != expected " + dtype_name(expected.dtype());
    return c;
  }
  if (expected.shape() != actual.shape()) {
    c.problem = "shape " + shape_str(actual.shape()) + " != expected " + shape_str(expected.shape());
    return c;
  }
  const bool floating = dtype_is_floating(expected.dtype());
  c.histogram.assign(histogram_edges().size() + 1, 0);
  for (int64_t i = 0; i < c.numel; ++i) {
    double e = 0;
    const double err = element_error(expected, actual, i, floating, e);
    if (std::isnan(err)) {  // equal NaNs or equal infinities
      ++c.histogram[0];
      continue;
    }
    ++c.histogram[histogram_bin(err)];
    c.max_abs_error = std::max(c.max_abs_error, err);
    // Relative error only where the expected value is significant: near zero it says nothing.
    if (std::isfinite(err) && std::fabs(e) > tol.atol && std::fabs(e) > 0)
      c.max_rel_error = std::max(c.max_rel_error, err / std::fabs(e));
    // Integers and bool: any difference (no tolerance applies, whatever `tol` says). An infinite error
    // (NaN or infinity disagreement) fails even where an infinite |expected| would widen the bound.
    if (floating ? std::isinf(err) || !(err <= tol.atol + tol.rtol * std::fabs(e)) : err != 0) {
      if (c.first_mismatch < 0) c.first_mismatch = i;
      ++c.mismatches;
    }
  }
  c.passed = c.mismatches == 0;
  return c;
}

std::string element_text(const Tensor& t, int64_t i) {
  if (t.dtype() == DType::kUInt64) return std::to_string(static_cast<const uint64_t*>(t.raw())[i]);
  if (!dtype_is_floating(t.dtype())) return std::to_string(element_as_int64(t, i));
  std::ostringstream s;
  s.precision(9);
  s << element_as_double(t, i);
  return s.str();
}

}  // namespace parity
