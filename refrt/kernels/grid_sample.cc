// GridSample 16 (4-D; bilinear/nearest/bicubic) and 20 (N-D; linear/nearest/cubic): padding
// zeros/border/reflection, align_corners. The grid's last dim lists coordinates innermost spatial dim
// first (x, y, ...). Per output point the source taps (flat offset, weight) are built once as the
// tensor product of per-dim taps and reused for every channel.
#include <algorithm>
#include <cmath>
#include <limits>

#include "nn_common.h"

namespace parity::refrt {
namespace {

enum class Interp { kNearest, kLinear, kCubic };
enum class Padding { kZeros, kBorder, kReflection };

// Reflects x into [lo, hi] (both float; ONNX's formula, period 2 * (hi - lo)).
double reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0) return lo;
  if (x < lo) {
    const double dx = lo - x;
    const int64_t n = static_cast<int64_t>(dx / range);
    const double r = dx - static_cast<double>(n) * range;
    return n % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const double dx = x - hi;
    const int64_t n = static_cast<int64_t>(dx / range);
    const double r = dx - static_cast<double>(n) * range;
    return n % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

void cubic_coeffs(double t, double* c) {
  const double a = -0.75;
  c[0] = ((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a;
  c[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
  c[2] = ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1;
  c[3] = ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a;
}

class GridSampleKernel : public Kernel {
 public:
  explicit GridSampleKernel(const NodeDef& node) : node_(node), align_corners_(node.attr_int("align_corners", 0) != 0) {
    const Attribute* m = node.attr("mode", Attribute::Type::kString);
    const std::string mode = m ? m->s : (node.opset < 20 ? "bilinear" : "linear");
    const bool old = node.opset < 20;
    if (mode == "nearest")
      interp_ = Interp::kNearest;
    else if (mode == (old ? "bilinear" : "linear"))
      interp_ = Interp::kLinear;
    else if (mode == (old ? "bicubic" : "cubic"))
      interp_ = Interp::kCubic;
    else
      node.fail("mode '" + mode + "' is not valid at opset " + std::to_string(node.opset));
    const Attribute* p = node.attr("padding_mode", Attribute::Type::kString);
    const std::string pad = p ? p->s : "zeros";
    if (pad == "zeros")
      padding_ = Padding::kZeros;
    else if (pad == "border")
      padding_ = Padding::kBorder;
    else if (pad == "reflection")
      padding_ = Padding::kReflection;
    else
      node.fail("padding_mode '" + pad + "' is not valid");
  }

  void compute(KernelIO& io) const override {
    nn::run_float(node_, io, io.in(0).dtype(), [&](auto tag, KernelIO& f) { run<decltype(tag)>(f); });
  }

 private:
  struct Tap {
    int64_t index;  // -1: outside (zeros padding)
    double weight;
  };

  // The index that a tap at integer position i reads in a dim of size `size`.
  int64_t tap_index(int64_t i, int64_t size, double lo, double hi) const {
    if (padding_ == Padding::kZeros) return i >= 0 && i < size ? i : -1;
    if (padding_ == Padding::kBorder) return std::clamp<int64_t>(i, 0, size - 1);
    return std::clamp<int64_t>(static_cast<int64_t>(reflect(static_cast<double>(i), lo, hi)), 0, size - 1);
  }

  void dim_taps(double g, int64_t size, std::vector<Tap>& taps) const {
    taps.clear();
    if (!std::isfinite(g) || std::abs(g) > 1e12) {  // NaN/inf/absurd coordinates: a NaN output, no read
      taps.push_back({0, std::numeric_limits<double>::quiet_NaN()});
      return;
    }
    double x =
        align_corners_ ? (g + 1) / 2 * static_cast<double>(size - 1) : ((g + 1) * static_cast<double>(size) - 1) / 2;
    const double lo = align_corners_ ? 0.0 : -0.5,
                 hi = align_corners_ ? static_cast<double>(size - 1) : static_cast<double>(size) - 0.5;
    if (interp_ == Interp::kNearest) x = std::nearbyint(x);  // round half to even
    if (x < lo || x > hi) {
      if (padding_ == Padding::kBorder)
        x = std::clamp(x, 0.0, static_cast<double>(size - 1));
      else if (padding_ == Padding::kReflection)
        x = reflect(x, lo, hi);
    }
    if (interp_ == Interp::kNearest) {
      taps.push_back({tap_index(static_cast<int64_t>(x), size, lo, hi), 1.0});  // truncation, as ONNX
      return;
    }
    const int64_t x0 = static_cast<int64_t>(std::floor(x));
    const double t = x - static_cast<double>(x0);
    if (interp_ == Interp::kLinear) {
      taps.push_back({tap_index(x0, size, lo, hi), 1 - t});
      taps.push_back({tap_index(x0 + 1, size, lo, hi), t});
      return;
    }
    double c[4];
    cubic_coeffs(t, c);
    for (int k = 0; k < 4; ++k) taps.push_back({tap_index(x0 - 1 + k, size, lo, hi), c[k]});
  }

  template <typename T>
  void run(KernelIO& io) const {
    const Tensor& x = io.in(0);
    const Tensor& grid = io.in(1);
    const size_t r = x.rank() < 2 ? 0 : x.rank() - 2;
    if (r == 0 || (node_.opset < 20 && r != 2))
      node_.fail("X must be [N, C, H, W]" + std::string(node_.opset < 20 ? "" : " or N-D") + ", got " +
                 shape_str(x.shape()));
    if (grid.dtype() != x.dtype()) node_.fail("grid dtype differs from X");
    if (grid.rank() != r + 2 || grid.dim(0) != x.dim(0) || grid.shape().back() != static_cast<int64_t>(r))
      node_.fail("grid must be [N, out..., " + std::to_string(r) + "], got " + shape_str(grid.shape()));
    const int64_t n = x.dim(0), c = x.dim(1);
    Shape out_shape{n, c};
    out_shape.insert(out_shape.end(), grid.shape().begin() + 1, grid.shape().end() - 1);
    Tensor y(x.dtype(), out_shape);
    const std::vector<int64_t> in = nn::spatial_dims(x.shape());
    for (int64_t d : in)
      if (d <= 0 && n * c > 0 && grid.numel() > 0) node_.fail("cannot sample an empty input " + shape_str(x.shape()));
    int64_t in_size = 1, out_size = 1;
    for (int64_t d : in) in_size *= d;
    for (size_t d = 2; d < out_shape.size(); ++d) out_size *= out_shape[d];
    const T* px = x.data<T>();
    const T* pg = grid.data<T>();
    T* py = y.data<T>();
    parallel_for(io, n * out_size, 64, [&](int64_t begin, int64_t end) {
      std::vector<std::vector<Tap>> per_dim(r);
      std::vector<Tap> combined, next;
      for (int64_t bo = begin; bo < end; ++bo) {
        const int64_t b = bo / out_size, o = bo % out_size;
        const T* g = pg + (b * out_size + o) * static_cast<int64_t>(r);
        combined.assign(1, {0, 1.0});
        for (size_t d = 0; d < r; ++d) {
          dim_taps(static_cast<double>(g[r - 1 - d]), in[d], per_dim[d]);
          next.clear();
          for (const Tap& a : combined)
            for (const Tap& t : per_dim[d])
              next.push_back({a.index < 0 || t.index < 0 ? -1 : a.index * in[d] + t.index, a.weight * t.weight});
          combined.swap(next);
        }
        for (int64_t ch = 0; ch < c; ++ch) {
          const T* plane = px + (b * c + ch) * in_size;
          double sum = 0;
          for (const Tap& t : combined)
            if (t.index >= 0) sum += t.weight * static_cast<double>(plane[t.index]);
          py[(b * c + ch) * out_size + o] = static_cast<T>(sum);
        }
      }
    });
    io.outputs[0] = std::move(y);
  }

  NodeDef node_;
  bool align_corners_;
  Interp interp_ = Interp::kLinear;
  Padding padding_ = Padding::kZeros;
};

}  // namespace

// GridSample 16: 4-D, modes bilinear/nearest/bicubic; 20: N-D, modes renamed linear/nearest/cubic.
PARITY_KERNEL("GridSample", 16, GridSampleKernel, kFloatTypes16);
PARITY_KERNEL("GridSample", 20, GridSampleKernel, kFloatTypes16);

}  // namespace parity::refrt
