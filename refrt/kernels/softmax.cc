// Softmax, LogSoftmax, Hardmax. Opset 13: along one axis (default -1). Opsets 1 and 11: the input
// is seen as 2-D [prod(dims before axis), prod(dims from axis)] (default axis 1) and each row is
// normalised as a whole.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "../src/vmath.h"
#include "elementwise.h"

namespace parity::refrt {
namespace {

enum class Mode { kSoftmax, kLogSoftmax, kHardmax };

// One row of n elements spaced `stride` apart. Subtracting the max keeps exp in range; sums
// accumulate in double.
template <typename T>
void normalise_row(Mode mode, const T* x, T* y, int64_t n, int64_t stride) {
  if (mode == Mode::kHardmax) {  // 1 at the first maximum, 0 elsewhere
    int64_t best = 0;
    for (int64_t k = 1; k < n; ++k)
      if (x[k * stride] > x[best * stride]) best = k;
    for (int64_t k = 0; k < n; ++k) y[k * stride] = k == best ? T(1) : T(0);
    return;
  }
  if constexpr (std::is_same_v<T, float>) {  // contiguous float rows: vmath's vectorised row
    if (mode == Mode::kSoftmax && stride == 1) return vmath::softmax_row(x, y, n);
  }
  T max = x[0];
  for (int64_t k = 1; k < n; ++k) max = std::max(max, x[k * stride]);
  double sum = 0;
  if (mode == Mode::kSoftmax) {  // exp once, in T (the sum still in double), then one scale
    for (int64_t k = 0; k < n; ++k) {
      const T e = std::exp(x[k * stride] - max);
      y[k * stride] = e;
      sum += static_cast<double>(e);
    }
    const T inv = static_cast<T>(1.0 / sum);
    for (int64_t k = 0; k < n; ++k) y[k * stride] *= inv;
    return;
  }
  for (int64_t k = 0; k < n; ++k) sum += std::exp(static_cast<double>(x[k * stride]) - static_cast<double>(max));
  if (mode == Mode::kLogSoftmax) {
    const double log_sum = std::log(sum);
    for (int64_t k = 0; k < n; ++k)
      y[k * stride] = static_cast<T>(static_cast<double>(x[k * stride]) - static_cast<double>(max) - log_sum);
  }
}

template <Mode kMode>
class SoftmaxKernel : public Kernel {
 public:
  explicit SoftmaxKernel(const NodeDef& node)
      : node_(node), coerce_2d_(node.opset < 13), axis_(node.attr_int("axis", coerce_2d_ ? 1 : -1)) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    const int64_t rank = static_cast<int64_t>(x.rank());
    // The coerced 2-D form accepts a rank-0 input (one 1x1 row) and axis == rank (rows of one column).
    if (rank == 0 && !coerce_2d_) node_.fail("input must have rank >= 1");
    const size_t axis =
        static_cast<size_t>(coerce_2d_ && (axis_ == rank || rank == 0) ? rank : normalize_axis(axis_, rank, "axis"));
    int64_t outer = 1, n = 1, inner = 1;
    for (size_t d = 0; d < x.rank(); ++d) {
      if (d < axis)
        outer *= x.dim(d);
      else if (d == axis || coerce_2d_)
        n *= x.dim(d);
      else
        inner *= x.dim(d);
    }
    if (is_float16_like(x.dtype())) {
      if (inner == 1) return half_rows(io, x, outer, n);
      return with_float32(io, x.dtype(), [&](KernelIO& f) { compute(f); });
    }
    const bool ok = dispatch_float(x.dtype(), [&](auto zero) {
      using T = decltype(zero);
      Tensor out(x.dtype(), x.shape());
      if (out.numel() > 0) {
        const T* px = x.data<T>();
        T* po = out.data<T>();
        parallel_for(io, outer * inner, std::max<int64_t>(1, 8192 / std::max<int64_t>(n, 1)),
                     [&](int64_t b, int64_t e) {
                       for (int64_t r = b; r < e; ++r) {
                         const int64_t o = r / inner, i = r % inner;
                         normalise_row(kMode, px + o * n * inner + i, po + o * n * inner + i, n, inner);
                       }
                     });
      }
      io.outputs[0] = std::move(out);
    });
    if (!ok) fail_dtype(node_, x.dtype());
  }

 private:
  // float16/bfloat16 rows along the last axis: each row widened into a float32 buffer, normalised there and
  // rounded once into the output (no float32 copy of the whole tensor).
  void half_rows(KernelIO& io, const Tensor& x, int64_t rows, int64_t n) const {
    Tensor out(x.dtype(), x.shape());
    const auto* px = static_cast<const uint16_t*>(x.raw());
    auto* po = static_cast<uint16_t*>(out.mutable_raw());
    if (out.numel() > 0)
      parallel_for(io, rows, std::max<int64_t>(1, 8192 / std::max<int64_t>(n, 1)), [&](int64_t b, int64_t e) {
        std::vector<float> row(static_cast<size_t>(n));
        for (int64_t r = b; r < e; ++r) {
          widen_span(x.dtype(), px + r * n, row.data(), n);
          normalise_row(kMode, row.data(), row.data(), n, 1);
          narrow_span(x.dtype(), row.data(), po + r * n, n);
        }
      });
    io.outputs[0] = std::move(out);
  }
  NodeDef node_;
  bool coerce_2d_;
  int64_t axis_;
};

// Softmax along `axis` whose rows of all -inf give 0 instead of NaN: torch's _safe_softmax as its
// decomposition writes it (Softmax, Equal(x, -inf), Not, Cast, ReduceMax, Cast, Not, Where with
// zeros), fused at load (refrt/src/optimize/). Input 1 is the zeros the Where selects (X's shape, or a scalar).
class SafeSoftmaxKernel : public Kernel {
 public:
  explicit SafeSoftmaxKernel(const NodeDef& node) : node_(node), axis_(node.attr_int("axis", -1)) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    // X's shape (torch's decomposition) or a rank-0 zero (Parity's exporter): either way the Where gave X's shape.
    if (io.in(1).shape() != x.shape() && io.in(1).rank() != 0)
      node_.fail("the zeros " + shape_str(io.in(1).shape()) + " must have X's shape " + shape_str(x.shape()) +
                 " or be a scalar");
    if (x.rank() == 0) node_.fail("input must have rank >= 1");
    if (is_float16_like(x.dtype())) return with_float32(io, x.dtype(), [&](KernelIO& f) { compute(f); });
    const size_t axis = static_cast<size_t>(normalize_axis(axis_, static_cast<int64_t>(x.rank()), "axis"));
    int64_t outer = 1, n = x.dim(axis), inner = 1;
    for (size_t d = 0; d < x.rank(); ++d) {
      if (d < axis)
        outer *= x.dim(d);
      else if (d > axis)
        inner *= x.dim(d);
    }
    const bool ok = dispatch_float(x.dtype(), [&](auto zero) {
      using T = decltype(zero);
      Tensor out(x.dtype(), x.shape());
      const T* px = x.data<T>();
      T* po = out.data<T>();
      parallel_for(io, outer * inner, std::max<int64_t>(1, 8192 / std::max<int64_t>(n, 1)), [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          const int64_t base = (r / inner) * n * inner + r % inner;
          bool all_masked = true;
          for (int64_t k = 0; k < n && all_masked; ++k)
            all_masked = px[base + k * inner] == -std::numeric_limits<T>::infinity();
          if (all_masked) {
            for (int64_t k = 0; k < n; ++k) po[base + k * inner] = T(0);
          } else {
            normalise_row(Mode::kSoftmax, px + base, po + base, n, inner);
          }
        }
      });
      io.outputs[0] = std::move(out);
    });
    if (!ok) fail_dtype(node_, x.dtype());
  }

 private:
  NodeDef node_;
  int64_t axis_;
};

}  // namespace

PARITY_FUSED_KERNEL("FusedSafeSoftmax", SafeSoftmaxKernel, kFloatTypes16);
// 1 (11 allowed negative axes: accepted from 1): coerced 2-D; 13: single axis.
PARITY_KERNEL("Softmax", 1, SoftmaxKernel<Mode::kSoftmax>, kFloatTypes16);
PARITY_KERNEL("Softmax", 13, SoftmaxKernel<Mode::kSoftmax>, kFloatTypes16);
PARITY_KERNEL("LogSoftmax", 1, SoftmaxKernel<Mode::kLogSoftmax>, kFloatTypes16);
PARITY_KERNEL("LogSoftmax", 13, SoftmaxKernel<Mode::kLogSoftmax>, kFloatTypes16);
PARITY_KERNEL("Hardmax", 1, SoftmaxKernel<Mode::kHardmax>, kFloatTypes16);
PARITY_KERNEL("Hardmax", 13, SoftmaxKernel<Mode::kHardmax>, kFloatTypes16);

}  // namespace parity::refrt
