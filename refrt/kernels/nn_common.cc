#include "nn_common.h"

#include <immintrin.h>

#include "parity/refrt/cpu_isa.h"

namespace parity::refrt::nn {

namespace {

__attribute__((target("avx2,fma"))) double sum_squares_avx2(const float* x, int64_t n) {
  __m256d s[4] = {_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd()};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int k = 0; k < 4; ++k) {
      const __m256d v = _mm256_cvtps_pd(_mm_loadu_ps(x + i + 4 * k));
      s[k] = _mm256_fmadd_pd(v, v, s[k]);
    }
  alignas(32) double lanes[4];
  _mm256_store_pd(lanes, _mm256_add_pd(_mm256_add_pd(s[0], s[1]), _mm256_add_pd(s[2], s[3])));
  double sq = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
  for (; i < n; ++i) sq += static_cast<double>(x[i]) * static_cast<double>(x[i]);
  return sq;
}

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

std::string ints_str(const std::vector<int64_t>& v) { return shape_str(v); }
}  // namespace

double sum_squares(const float* x, int64_t n) {
  static const bool avx2 = isa_allows(IsaLevel::kAvx2);
  if (avx2) return sum_squares_avx2(x, n);
  double sq = 0;
  for (int64_t i = 0; i < n; ++i) sq += static_cast<double>(x[i]) * static_cast<double>(x[i]);
  return sq;
}

int64_t WindowGeometry::in_size() const { return product(in); }
int64_t WindowGeometry::out_size() const { return product(out); }
int64_t WindowGeometry::kernel_size() const { return product(kernel); }

WindowGeometry as_2d(const WindowGeometry& g) {
  if (g.rank() != 1) return g;
  auto lift = [](std::vector<int64_t> v, int64_t one) {
    v.insert(v.begin(), one);
    return v;
  };
  return {lift(g.in, 1),       lift(g.out, 1),       lift(g.kernel, 1), lift(g.stride, 1),
          lift(g.dilation, 1), lift(g.pad_begin, 0), lift(g.pad_end, 0)};
}

WindowAttrs parse_window_attrs(const NodeDef& node) {
  WindowAttrs a;
  if (const Attribute* p = node.attr("auto_pad", Attribute::Type::kString)) {
    if (p->s == "NOTSET")
      a.auto_pad = AutoPad::kNotSet;
    else if (p->s == "SAME_UPPER")
      a.auto_pad = AutoPad::kSameUpper;
    else if (p->s == "SAME_LOWER")
      a.auto_pad = AutoPad::kSameLower;
    else if (p->s == "VALID")
      a.auto_pad = AutoPad::kValid;
    else
      node.fail("auto_pad '" + p->s + "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
  }
  a.kernel_shape = node.attr_ints("kernel_shape");
  a.strides = node.attr_ints("strides");
  a.dilations = node.attr_ints("dilations");
  a.pads = node.attr_ints("pads");
  a.ceil_mode = node.attr_int("ceil_mode", 0) != 0;
  return a;
}

WindowGeometry forward_geometry(const NodeDef& node, const WindowAttrs& attrs, const std::vector<int64_t>& in_spatial,
                                const std::vector<int64_t>& kernel, bool pooling) {
  const size_t r = in_spatial.size();
  WindowGeometry g;
  g.in = in_spatial;
  g.kernel = kernel;
  g.stride = attrs.strides.empty() ? std::vector<int64_t>(r, 1) : attrs.strides;
  g.dilation = attrs.dilations.empty() ? std::vector<int64_t>(r, 1) : attrs.dilations;
  if (kernel.size() != r || g.stride.size() != r || g.dilation.size() != r)
    node.fail("kernel_shape " + ints_str(kernel) + ", strides " + ints_str(g.stride) + " and dilations " +
              ints_str(g.dilation) + " must each have " + std::to_string(r) + " entries (the spatial rank)");
  if (!attrs.pads.empty() && attrs.pads.size() != 2 * r)
    node.fail("pads " + ints_str(attrs.pads) + " must have " + std::to_string(2 * r) + " entries");
  g.out.resize(r);
  g.pad_begin.assign(r, 0);
  g.pad_end.assign(r, 0);
  for (size_t d = 0; d < r; ++d) {
    const int64_t k = kernel[d], s = g.stride[d], dil = g.dilation[d], in = in_spatial[d];
    if (k <= 0 || s <= 0 || dil <= 0)
      node.fail("kernel, stride and dilation must be positive, got " + std::to_string(k) + ", " + std::to_string(s) +
                ", " + std::to_string(dil));
    const int64_t eff = (k - 1) * dil + 1;
    if (attrs.auto_pad == AutoPad::kSameUpper || attrs.auto_pad == AutoPad::kSameLower) {
      g.out[d] = (in + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (g.out[d] - 1) * s + eff - in);
      const int64_t small = total / 2, large = total - small;
      g.pad_begin[d] = attrs.auto_pad == AutoPad::kSameUpper ? small : large;
      g.pad_end[d] = total - g.pad_begin[d];
      continue;
    }
    if (attrs.auto_pad == AutoPad::kNotSet && !attrs.pads.empty()) {
      g.pad_begin[d] = attrs.pads[d];
      g.pad_end[d] = attrs.pads[d + r];
      if (g.pad_begin[d] < 0 || g.pad_end[d] < 0) node.fail("negative pads " + ints_str(attrs.pads));
    }
    const int64_t span = in + g.pad_begin[d] + g.pad_end[d] - eff;
    // ceil_mode admits one window larger than the input (torch's AvgPool2d(kernel > size, ceil_mode=True),
    // EfficientNet's head): floor division would give no window at all.
    if (span < 0 && pooling && attrs.ceil_mode && -span < s) {
      g.out[d] = 1;
      continue;
    }
    if (span < 0)
      node.fail("window of extent " + std::to_string(eff) + " is larger than the padded input " +
                std::to_string(in + g.pad_begin[d] + g.pad_end[d]) + " along spatial dim " + std::to_string(d));
    if (pooling && attrs.ceil_mode) {
      g.out[d] = (span + s - 1) / s + 1;
      // The last window must start inside the input or its leading padding.
      if ((g.out[d] - 1) * s >= in + g.pad_begin[d]) --g.out[d];
    } else {
      g.out[d] = span / s + 1;
    }
  }
  return g;
}

}  // namespace parity::refrt::nn
