// Resize (10, 11, 13, 18, 19) and Upsample (7, 9): nearest / linear / cubic, every
// coordinate_transformation_mode, nearest_mode, scales or sizes, axes, keep_aspect_ratio_policy,
// exclude_outside, extrapolation_value and antialias.
//
// The interpolations are separable, so the kernel resizes one axis at a time: per axis, each output
// index gets a list of (input index, weight) taps, computed as ONNX's reference does (the taps around
// the source coordinate, input edges repeated; exclude_outside drops outside taps and renormalizes).
// Values are carried in double between passes.
#include <algorithm>
#include <cmath>

#include "double_io.h"
#include "nn_common.h"

namespace parity::refrt {
namespace {

enum class Mode { kNearest, kLinear, kCubic };

struct AxisPlan {
  int64_t in = 0, out = 0, taps = 0;
  std::vector<int64_t> index;        // out * taps, clamped to [0, in)
  std::vector<double> weight;        // out * taps
  std::vector<uint8_t> extrapolate;  // per output index (tf_crop_and_resize outside the input)
  bool identity() const {
    if (in != out) return false;
    for (int64_t j = 0; j < out; ++j) {
      if (extrapolate[static_cast<size_t>(j)]) return false;
      for (int64_t k = 0; k < taps; ++k) {
        const size_t t = static_cast<size_t>(j * taps + k);
        if (weight[t] != 0 && !(index[t] == j && weight[t] == 1)) return false;
      }
    }
    return true;
  }
};

class ResizeKernel : public Kernel {
 public:
  explicit ResizeKernel(const NodeDef& node) : node_(node) {
    const bool legacy = node.op_type == "Upsample" || node.opset < 11;  // asymmetric, floor
    const std::string mode = string_attr("mode", "nearest");
    if (mode == "nearest")
      mode_ = Mode::kNearest;
    else if (mode == "linear" || (legacy && mode == "bilinear"))
      mode_ = Mode::kLinear;
    else if (mode == "cubic" && !legacy)
      mode_ = Mode::kCubic;
    else
      node.fail("mode '" + mode + "' is not supported");
    coord_ = string_attr("coordinate_transformation_mode", legacy ? "asymmetric" : "half_pixel");
    static const char* const kCoords[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                                          "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
    if (std::find(std::begin(kCoords), std::end(kCoords), coord_) == std::end(kCoords))
      node.fail("coordinate_transformation_mode '" + coord_ + "' is not supported");
    nearest_ = string_attr("nearest_mode", legacy ? "floor" : "round_prefer_floor");
    if (nearest_ != "round_prefer_floor" && nearest_ != "round_prefer_ceil" && nearest_ != "floor" &&
        nearest_ != "ceil")
      node.fail("nearest_mode '" + nearest_ + "' is not supported");
    cubic_a_ = node.attr_float("cubic_coeff_a", -0.75f);
    exclude_outside_ = node.attr_int("exclude_outside", 0) != 0;
    extrapolation_ = node.attr_float("extrapolation_value", 0.0f);
    antialias_ = node.attr_int("antialias", 0) != 0 && mode_ != Mode::kNearest;
    axes_ = node.attr_ints("axes");
    policy_ = string_attr("keep_aspect_ratio_policy", "stretch");
    if (policy_ != "stretch" && policy_ != "not_larger" && policy_ != "not_smaller")
      node.fail("keep_aspect_ratio_policy '" + policy_ + "' is not supported");
    if (node.op_type == "Upsample" && node.opset < 9) {
      const Attribute* s = node.attr("scales", Attribute::Type::kFloats);
      if (!s) node.fail("Upsample-7 needs the scales attribute");
      attr_scales_.assign(s->floats.begin(), s->floats.end());
    }
  }

  void compute(KernelIO& io) const override {
    const DType dt = io.in(0).dtype();
    if (mode_ == Mode::kNearest && (dt == DType::kInt8 || dt == DType::kUInt8 || dt == DType::kInt32)) {
      if (dt == DType::kInt8)
        run<int8_t>(io);
      else if (dt == DType::kUInt8)
        run<uint8_t>(io);
      else
        run<int32_t>(io);
      return;
    }
    nn::run_float(node_, io, dt, [&](auto tag, KernelIO& f) { run<decltype(tag)>(f); });
  }

 private:
  std::string string_attr(const char* name, const char* fallback) const {
    const Attribute* a = node_.attr(name, Attribute::Type::kString);
    return a ? a->s : fallback;
  }

  static std::vector<double> float_values(const NodeDef& node, const Tensor& t, const char* what) {
    std::vector<double> v(static_cast<size_t>(t.numel()));
    for (int64_t i = 0; i < t.numel(); ++i) {
      const size_t u = static_cast<size_t>(i);
      if (t.dtype() == DType::kFloat32)
        v[u] = t.data<float>()[i];
      else if (t.dtype() == DType::kFloat64)
        v[u] = t.data<double>()[i];
      else
        node.fail(std::string(what) + " must be float32 or float64, got " + dtype_name(t.dtype()));
    }
    return v;
  }

  // Output sizes and per-axis scales for the full rank; roi as [starts..., ends...] per axis.
  void plan_sizes(const KernelIO& io, const Shape& in, std::vector<int64_t>& out, std::vector<double>& scale,
                  std::vector<double>& roi_start, std::vector<double>& roi_end) const {
    const size_t rank = in.size();
    std::vector<size_t> axes;
    for (int64_t a : axes_) axes.push_back(static_cast<size_t>(normalize_axis(a, static_cast<int64_t>(rank), "axes")));
    if (axes.empty())
      for (size_t d = 0; d < rank; ++d) axes.push_back(d);
    const bool upsample = node_.op_type == "Upsample";
    const Tensor* roi_t = upsample || node_.opset < 11 ? nullptr : io.optional(1);
    const Tensor* scales_t =
        upsample ? (node_.opset < 9 ? nullptr : io.optional(1)) : io.optional(node_.opset < 11 ? 1 : 2);
    const Tensor* sizes_t = upsample || node_.opset < 11 ? nullptr : io.optional(3);
    if (scales_t && scales_t->numel() == 0) scales_t = nullptr;
    if (sizes_t && sizes_t->numel() == 0) sizes_t = nullptr;
    out.assign(in.begin(), in.end());
    scale.assign(rank, 1.0);
    roi_start.assign(rank, 0.0);
    roi_end.assign(rank, 1.0);
    if (roi_t && roi_t->numel() > 0 && coord_ == "tf_crop_and_resize") {
      const std::vector<double> roi = float_values(node_, *roi_t, "roi");
      if (roi.size() != 2 * axes.size()) node_.fail("roi must have " + std::to_string(2 * axes.size()) + " values");
      for (size_t i = 0; i < axes.size(); ++i) {
        roi_start[axes[i]] = roi[i];
        roi_end[axes[i]] = roi[i + axes.size()];
      }
    }
    if (scales_t && sizes_t) node_.fail("only one of scales and sizes may be given");
    if (!attr_scales_.empty() || scales_t) {
      const std::vector<double> s = scales_t ? float_values(node_, *scales_t, "scales") : attr_scales_;
      if (s.size() != axes.size()) node_.fail("scales must have " + std::to_string(axes.size()) + " values");
      for (size_t i = 0; i < axes.size(); ++i) {
        if (!(s[i] > 0) || !std::isfinite(s[i])) node_.fail("scales must be positive and finite");
        scale[axes[i]] = s[i];
        const double size = std::floor(static_cast<double>(in[axes[i]]) * s[i]);
        if (size > 9e15) node_.fail("scales give an output dim that is too large");
        out[axes[i]] = static_cast<int64_t>(size);
      }
    } else if (sizes_t) {
      const std::vector<int64_t> sz = int64_values(*sizes_t, "sizes");
      if (sz.size() != axes.size()) node_.fail("sizes must have " + std::to_string(axes.size()) + " values");
      if (policy_ == "stretch") {
        for (size_t i = 0; i < axes.size(); ++i) {
          out[axes[i]] = sz[i];
          scale[axes[i]] = static_cast<double>(sz[i]) / static_cast<double>(in[axes[i]]);
        }
      } else {  // one scale for every listed axis, the smallest (not_larger) or largest (not_smaller)
        double common = policy_ == "not_larger" ? INFINITY : 0.0;
        for (size_t i = 0; i < axes.size(); ++i) {
          const double r = static_cast<double>(sz[i]) / static_cast<double>(in[axes[i]]);
          common = policy_ == "not_larger" ? std::min(common, r) : std::max(common, r);
        }
        for (size_t i = 0; i < axes.size(); ++i) {
          scale[axes[i]] = common;
          out[axes[i]] = static_cast<int64_t>(std::floor(common * static_cast<double>(in[axes[i]]) + 0.5));
        }
      }
    } else {
      node_.fail("one of scales and sizes is required");
    }
    double total = 1;  // intermediate passes hold doubles: bound them like any tensor allocation
    for (size_t d = 0; d < rank; ++d) {
      if (out[d] < 0 || (out[d] > 0 && in[d] == 0) || !std::isfinite(scale[d]) || scale[d] <= 0)
        node_.fail("cannot resize dim " + std::to_string(d) + " of size " + std::to_string(in[d]) + " to " +
                   std::to_string(out[d]));
      total *= static_cast<double>(std::max(out[d], in[d]));
    }
    if (total * sizeof(double) > static_cast<double>(allocation_limit()))
      node_.fail("output of " + shape_str(out) + " exceeds the allocation limit");
  }

  double source_coordinate(int64_t j, int64_t in, int64_t out, double scale, double r0, double r1,
                           bool& outside) const {
    const double x = static_cast<double>(j), in_d = static_cast<double>(in), out_w = scale * in_d;
    outside = false;
    if (coord_ == "align_corners") return out_w == 1 ? 0.0 : x * (in_d - 1) / (out_w - 1);
    if (coord_ == "asymmetric") return x / scale;
    if (coord_ == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
    if (coord_ == "pytorch_half_pixel") return out_w == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
    if (coord_ == "half_pixel_symmetric") {
      const double adjustment = static_cast<double>(out) / out_w, center = in_d / 2;
      return center * (1 - adjustment) + (x + 0.5) / scale - 0.5;
    }
    if (coord_ == "tf_crop_and_resize") {
      const double v = out_w == 1 ? (r1 - r0) * (in_d - 1) / 2 + r0 * (in_d - 1)
                                  : x * (r1 - r0) * (in_d - 1) / (out_w - 1) + r0 * (in_d - 1);
      outside = v < 0 || v > in_d - 1;
      return v;
    }
    return (x + 0.5) / scale - 0.5;  // half_pixel
  }

  // Weights for taps base+start .. base+start+n-1 where ratio = x - base in (0, 1].
  void coefficients(double ratio, double scale, int64_t& start, std::vector<double>& w) const {
    w.clear();
    if (mode_ == Mode::kNearest) {
      start = 0;
      bool upper = true;  // an integral coordinate (ratio 1) is the upper tap itself
      if (ratio != 1) {
        if (nearest_ == "round_prefer_floor")
          upper = ratio > 0.5;
        else if (nearest_ == "round_prefer_ceil")
          upper = ratio >= 0.5;
        else
          upper = nearest_ == "ceil";
      }
      w = {upper ? 0.0 : 1.0, upper ? 1.0 : 0.0};
      return;
    }
    const double s = antialias_ ? std::min(scale, 1.0) : 1.0;
    if (mode_ == Mode::kLinear) {
      start = antialias_ ? static_cast<int64_t>(std::floor(-1 / s)) + 1 : 0;
      const int64_t n = 2 - 2 * start;
      for (int64_t k = start; k < start + n; ++k)
        w.push_back(std::clamp(1 - std::abs((static_cast<double>(k) - ratio) * s), 0.0, 1.0));
    } else {
      const double a = cubic_a_;
      auto cubic = [a](double x) {
        x = std::abs(x);
        if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
        if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
        return 0.0;
      };
      start = antialias_ ? static_cast<int64_t>(std::floor(-2 / s)) + 1 : -1;
      for (int64_t k = start; k < 2 - start; ++k) w.push_back(cubic(s * (static_cast<double>(k) - ratio)));
    }
    if (antialias_) {
      double sum = 0;
      for (double v : w) sum += v;
      for (double& v : w) v /= sum;
    }
  }

  AxisPlan plan_axis(int64_t in, int64_t out, double scale, double r0, double r1) const {
    AxisPlan p;
    p.in = in;
    p.out = out;
    p.extrapolate.assign(static_cast<size_t>(out), 0);
    std::vector<double> w;
    for (int64_t j = 0; j < out; ++j) {
      bool outside = false;
      const double x = source_coordinate(j, in, out, scale, r0, r1, outside);
      double base = std::floor(x), ratio = x - base;
      if (ratio == 0) {  // as ONNX: an integral coordinate is the upper tap of [x-1, x]
        base -= 1;
        ratio = 1;
      }
      int64_t start = 0;
      coefficients(ratio, scale, start, w);
      if (p.taps == 0) {
        p.taps = static_cast<int64_t>(w.size());
        p.index.resize(static_cast<size_t>(out * p.taps));
        p.weight.resize(static_cast<size_t>(out * p.taps));
      }
      p.extrapolate[static_cast<size_t>(j)] = outside;
      double kept = 0;
      for (int64_t k = 0; k < p.taps; ++k) {
        const int64_t idx = static_cast<int64_t>(base) + start + k;
        const bool inside = idx >= 0 && idx < in;
        if (exclude_outside_ && !inside) w[static_cast<size_t>(k)] = 0;
        kept += w[static_cast<size_t>(k)];
        p.index[static_cast<size_t>(j * p.taps + k)] = std::clamp<int64_t>(idx, 0, in - 1);
      }
      for (int64_t k = 0; k < p.taps; ++k)
        p.weight[static_cast<size_t>(j * p.taps + k)] =
            exclude_outside_ && kept != 0 ? w[static_cast<size_t>(k)] / kept : w[static_cast<size_t>(k)];
    }
    return p;
  }

  template <typename T>
  void run(KernelIO& io) const {
    const Tensor& x = io.in(0);
    if (x.rank() == 0) node_.fail("X must have rank >= 1");
    std::vector<int64_t> out;
    std::vector<double> scale, r0, r1;
    plan_sizes(io, x.shape(), out, scale, r0, r1);
    std::vector<double> cur(static_cast<size_t>(x.numel()));
    for (int64_t i = 0; i < x.numel(); ++i) cur[static_cast<size_t>(i)] = static_cast<double>(x.data<T>()[i]);
    Shape shape = x.shape();
    for (size_t d = 0; d < shape.size(); ++d) {
      if (out[d] == shape[d] && scale[d] == 1.0 && coord_ != "tf_crop_and_resize") continue;
      const AxisPlan p = plan_axis(shape[d], out[d], scale[d], r0[d], r1[d]);
      if (p.identity()) continue;
      int64_t outer = 1, inner = 1;
      for (size_t e = 0; e < d; ++e) outer *= shape[e];
      for (size_t e = d + 1; e < shape.size(); ++e) inner *= shape[e];
      Shape next_shape = shape;
      next_shape[d] = out[d];
      std::vector<double> next = output_buffer(next_shape);
      parallel_for(io, outer * p.out, 16, [&](int64_t begin, int64_t end) {
        for (int64_t oj = begin; oj < end; ++oj) {
          const int64_t o = oj / p.out, j = oj % p.out;
          double* dst = next.data() + (o * p.out + j) * inner;
          if (p.extrapolate[static_cast<size_t>(j)]) {
            std::fill(dst, dst + inner, static_cast<double>(extrapolation_));
            continue;
          }
          for (int64_t k = 0; k < p.taps; ++k) {
            const double wk = p.weight[static_cast<size_t>(j * p.taps + k)];
            if (wk == 0) continue;
            const double* src = cur.data() + (o * p.in + p.index[static_cast<size_t>(j * p.taps + k)]) * inner;
            for (int64_t i = 0; i < inner; ++i) dst[i] += wk * src[i];
          }
        }
      });
      cur.swap(next);
      shape = next_shape;
    }
    Tensor y(x.dtype(), shape);
    for (int64_t i = 0; i < y.numel(); ++i) y.data<T>()[i] = static_cast<T>(cur[static_cast<size_t>(i)]);
    io.outputs[0] = std::move(y);
  }

  NodeDef node_;
  Mode mode_ = Mode::kNearest;
  std::string coord_, nearest_, policy_;
  float cubic_a_ = -0.75f, extrapolation_ = 0.0f;
  bool exclude_outside_ = false, antialias_ = false;
  std::vector<int64_t> axes_;
  std::vector<double> attr_scales_;
};

}  // namespace

// Resize 10: (X, scales), asymmetric; 11: roi/sizes and the coordinate modes; 13: roi and scales
// optional; 18: antialias, axes, keep_aspect_ratio_policy; 19: half_pixel_symmetric.
PARITY_KERNEL("Resize", 10, ResizeKernel, kFloatTypes16);
PARITY_KERNEL("Resize", 11, ResizeKernel, kFloatTypes16);
PARITY_KERNEL("Resize", 13, ResizeKernel, kFloatTypes16);
PARITY_KERNEL("Resize", 18, ResizeKernel, kFloatTypes16);
PARITY_KERNEL("Resize", 19, ResizeKernel, kFloatTypes16);
// Upsample 7: scales attribute; 9: scales input (deprecated at 10).
PARITY_KERNEL("Upsample", 7, ResizeKernel, kFloatTypes16);
PARITY_KERNEL("Upsample", 9, ResizeKernel, kFloatTypes16);

}  // namespace parity::refrt
