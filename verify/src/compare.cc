#include "parity/verify/compare.h"

#include <cmath>
#include <cstring>

#include "parity/error.h"

namespace parity::verify {

Tolerance default_tolerance(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return {1e-5, 1e-4};
    case DType::kFloat64: return {1e-7, 1e-7};
    case DType::kFloat16: return {1e-3, 1e-2};
    case DType::kBFloat16: return {1e-2, 2e-2};
    default: return {0, 0};
  }
}

namespace {
float half_to_float(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float f;
  if (exp == 0) {
    f = std::ldexp(static_cast<float>(mant), -24);
  } else if (exp == 31) {
    f = mant ? std::nanf("") : INFINITY;
  } else {
    f = std::ldexp(static_cast<float>(mant | 0x400), static_cast<int>(exp) - 25);
  }
  return sign ? -f : f;
}
float bf16_to_float(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
}  // namespace

double element_as_double(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kFloat32: return t.data<float>()[i];
    case DType::kFloat64: return t.data<double>()[i];
    case DType::kFloat16: return half_to_float(t.data<uint16_t>()[i]);
    case DType::kBFloat16: return bf16_to_float(t.data<uint16_t>()[i]);
    case DType::kInt8: return t.data<int8_t>()[i];
    case DType::kInt16: return t.data<int16_t>()[i];
    case DType::kInt32: return t.data<int32_t>()[i];
    case DType::kInt64: return static_cast<double>(t.data<int64_t>()[i]);
    case DType::kUInt8: case DType::kBool: return t.data<uint8_t>()[i];
    case DType::kUInt16: return t.data<uint16_t>()[i];
    case DType::kUInt32: return t.data<uint32_t>()[i];
    case DType::kUInt64: return static_cast<double>(t.data<uint64_t>()[i]);
    default: throw Error({"verify"}, "cannot compare tensors of dtype " + dtype_name(t.dtype()));
  }
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

Comparison compare_tensors(const Tensor& expected, const Tensor& actual, const Tolerance& tol) {
  Comparison c;
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
  c.histogram.assign(histogram_edges().size() + 1, 0);
  for (int64_t i = 0; i < c.numel; ++i) {
    const double e = element_as_double(expected, i), a = element_as_double(actual, i);
    if (std::isnan(e) || std::isnan(a)) {
      if (std::isnan(e) != std::isnan(a)) ++c.mismatches, c.max_abs_error = INFINITY, ++c.histogram.back();
      else ++c.histogram[0];
      continue;
    }
    if (std::isinf(e) || std::isinf(a)) {
      if (e != a) ++c.mismatches, c.max_abs_error = INFINITY, ++c.histogram.back();
      else ++c.histogram[0];
      continue;
    }
    const double abs_err = std::fabs(a - e);
    ++c.histogram[histogram_bin(abs_err)];
    c.max_abs_error = std::max(c.max_abs_error, abs_err);
    // Relative error only where the expected value is significant: near zero it says nothing.
    if (std::fabs(e) > tol.atol && std::fabs(e) > 0) c.max_rel_error = std::max(c.max_rel_error, abs_err / std::fabs(e));
    if (abs_err > tol.atol + tol.rtol * std::fabs(e)) ++c.mismatches;
  }
  c.passed = c.mismatches == 0;
  return c;
}

nlohmann::json Comparison::to_json() const {
  nlohmann::json j = {{"passed", passed},       {"max_abs_error", max_abs_error}, {"max_rel_error", max_rel_error},
                      {"mismatches", mismatches}, {"numel", numel},
                      {"atol", tolerance.atol}, {"rtol", tolerance.rtol}};
  if (!problem.empty()) j["problem"] = problem;
  if (ties > 0) j["ties"] = ties;
  if (!histogram.empty()) j["histogram"] = histogram;
  if (std::isinf(max_abs_error)) j["max_abs_error"] = "Infinity";
  return j;
}

}  // namespace parity::verify
