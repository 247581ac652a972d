// What a failing comparison shows beyond its maximum: how many NaN / infinite elements each side holds
// (a NaN in ours where the reference is finite explains an "Infinity" max error at once) and the worst
// elements, with their multi-dimensional indices and both values.
#include <algorithm>
#include <cmath>

#include "parity/element.h"
#include "parity/verify/compare.h"

namespace parity::verify {

namespace {

constexpr size_t kWorstElements = 5;

NonFinite count_non_finite(const Tensor& t) {
  NonFinite n;
  if (!dtype_is_floating(t.dtype())) return n;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double v = element_as_double(t, i);
    n.nan += std::isnan(v) ? 1 : 0;
    n.inf += std::isinf(v) ? 1 : 0;
  }
  return n;
}

std::vector<int64_t> unravel(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> index(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] <= 0) continue;
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

// |actual - expected| for ranking: a NaN on one side only, or infinities that differ, rank first.
double ranking_error(const Tensor& e, const Tensor& a, int64_t i) {
  if (!dtype_is_floating(e.dtype())) {
    if (e.dtype() == DType::kUInt64) {
      const uint64_t x = static_cast<const uint64_t*>(e.raw())[i], y = static_cast<const uint64_t*>(a.raw())[i];
      return static_cast<double>(x > y ? x - y : y - x);
    }
    return std::fabs(static_cast<double>(element_as_int64(e, i)) - static_cast<double>(element_as_int64(a, i)));
  }
  const double x = element_as_double(e, i), y = element_as_double(a, i);
  if (std::isnan(x) || std::isnan(y)) return std::isnan(x) == std::isnan(y) ? 0 : INFINITY;
  if (std::isinf(x) || std::isinf(y)) return x == y ? 0 : INFINITY;
  return std::fabs(y - x);
}

std::vector<WorstElement> worst_elements(const Tensor& expected, const Tensor& actual) {
  std::vector<std::pair<double, int64_t>> top;  // (error, flat index), at most kWorstElements, worst first
  for (int64_t i = 0; i < expected.numel(); ++i) {
    const double err = ranking_error(expected, actual, i);
    if (err == 0 || (top.size() == kWorstElements && err <= top.back().first)) continue;
    const auto at = std::find_if(top.begin(), top.end(), [&](const auto& t) { return err > t.first; });
    top.insert(at, {err, i});
    if (top.size() > kWorstElements) top.pop_back();
  }
  std::vector<WorstElement> worst;
  for (const auto& [err, i] : top)
    worst.push_back({unravel(i, expected.shape()), element_text(expected, i), element_text(actual, i), err});
  return worst;
}

}  // namespace

MismatchDetail mismatch_detail(const Tensor& expected, const Tensor& actual) {
  MismatchDetail d;
  d.expected = count_non_finite(expected);
  d.actual = count_non_finite(actual);
  if (expected.dtype() == actual.dtype() && expected.shape() == actual.shape())
    d.worst = worst_elements(expected, actual);
  return d;
}

void to_json(nlohmann::json& j, const MismatchDetail& d) {
  nlohmann::json worst = nlohmann::json::array();
  for (const auto& w : d.worst)
    worst.push_back(
        {{"index", w.index},
         {"expected", w.expected},
         {"actual", w.actual},
         {"abs_error", std::isfinite(w.abs_error) ? nlohmann::json(w.abs_error) : nlohmann::json("Infinity")}});
  j = {{"nan", {{"expected", d.expected.nan}, {"actual", d.actual.nan}}},
       {"inf", {{"expected", d.expected.inf}, {"actual", d.actual.inf}}},
       {"worst", worst}};
}

void from_json(const nlohmann::json& j, MismatchDetail& d) {
  d.expected = {j.at("nan").at("expected").get<int64_t>(), j.at("inf").at("expected").get<int64_t>()};
  d.actual = {j.at("nan").at("actual").get<int64_t>(), j.at("inf").at("actual").get<int64_t>()};
  d.worst.clear();
  for (const auto& w : j.at("worst")) {
    const auto& e = w.at("abs_error");
    d.worst.push_back({w.at("index").get<std::vector<int64_t>>(), w.at("expected").get<std::string>(),
                       w.at("actual").get<std::string>(), e.is_string() ? INFINITY : e.get<double>()});
  }
}

std::string mismatch_summary(const MismatchDetail& d) {
  std::string s = "NaN " + std::to_string(d.actual.nan) + " ours / " + std::to_string(d.expected.nan) +
                  " reference, Inf " + std::to_string(d.actual.inf) + " ours / " + std::to_string(d.expected.inf) +
                  " reference";
  if (d.worst.empty()) return s;
  s += "; worst:";
  for (const auto& w : d.worst) {
    std::string index;
    for (size_t k = 0; k < w.index.size(); ++k) index += (k ? "," : "") + std::to_string(w.index[k]);
    s += " [" + index + "] " + w.actual + " vs " + w.expected + ";";
  }
  s.pop_back();
  return s;
}

}  // namespace parity::verify
