// Nodes made by refrt's load-time passes (refrt/src/optimize/), private domain com.parity.refrt:
// FusedActivation (a decomposed GELU / SiLU / hardswish / hardsigmoid chain as one pass over memory)
// and FusedRMSNorm (x / sqrt(mean(x^2, last axis) + eps) [* w], one row at a time).
// FusedConv, FusedGemm and FusedMatMul are registered next to their plain kernels.
#include <cmath>

#include "../src/activation.h"
#include "nn_common.h"

namespace parity::refrt {
namespace {

class FusedActivationKernel : public Kernel {
 public:
  explicit FusedActivationKernel(const NodeDef& node) : node_(node), acts_(parse_activations(node)) {}
  void compute(KernelIO& io) const override {
    nn::run_float(node_, io, io.in(0).dtype(), [&](auto tag, KernelIO& f) {
      using T = decltype(tag);
      const Tensor& x = f.in(0);
      Tensor y(x.dtype(), x.shape());
      const T* px = x.data<T>();
      T* py = y.data<T>();
      parallel_for(f, x.numel(), 16384, [&](int64_t begin, int64_t end) {
        std::copy(px + begin, px + end, py + begin);
        apply_activations(acts_, py + begin, end - begin);
      });
      f.outputs[0] = std::move(y);
    });
  }

 private:
  NodeDef node_;
  std::vector<ActStep> acts_;
};

class FusedRMSNormKernel : public Kernel {
 public:
  explicit FusedRMSNormKernel(const NodeDef& node)
      : node_(node), epsilon_(node.attr_float("epsilon", 1e-6f)), axis_(node.attr_int("axis", -1)) {}
  void compute(KernelIO& io) const override {
    nn::run_float(node_, io, io.in(0).dtype(), [&](auto tag, KernelIO& f) {
      using T = decltype(tag);
      const Tensor& x = f.in(0);
      const Tensor* w = f.optional(1);
      if (x.rank() == 0) node_.fail("X must have rank >= 1");
      const size_t axis = static_cast<size_t>(normalize_axis(axis_, static_cast<int64_t>(x.rank()), "axis"));
      // [outer, d, inner] around the normalised axis; the weight (Mul's broadcast) runs along the last dim.
      int64_t outer = 1, d = x.dim(axis), inner = 1;
      for (size_t k = 0; k < x.rank(); ++k) {
        if (k < axis)
          outer *= x.dim(k);
        else if (k > axis)
          inner *= x.dim(k);
      }
      const int64_t last = x.dim(x.rank() - 1);
      if (w && (w->dtype() != x.dtype() || w->numel() != last)) node_.fail("the weight must have the last dim of X");
      Tensor y(x.dtype(), x.shape());
      const T* px = x.data<T>();
      const T* pw = w ? w->data<T>() : nullptr;
      T* py = y.data<T>();
      parallel_for(f, outer * inner, std::max<int64_t>(1, 4096 / std::max<int64_t>(d, 1)),
                   [&](int64_t begin, int64_t end) {
                     for (int64_t r = begin; r < end; ++r) {
                       const int64_t base = (r / inner) * d * inner + r % inner;
                       if (inner == 1) {
                         contiguous_row(px + base, pw, py + base, d);
                         continue;
                       }
                       double sum = 0;
                       for (int64_t j = 0; j < d; ++j) {
                         const double v = static_cast<double>(px[base + j * inner]);
                         sum += v * v;
                       }
                       const T inv = inverse_rms<T>(sum, d);
                       for (int64_t j = 0; j < d; ++j) {
                         const int64_t at = base + j * inner;
                         py[at] = pw ? (px[at] * inv) * pw[at % last] : px[at] * inv;
                       }
                     }
                   });
      f.outputs[0] = std::move(y);
    });
  }
  double flops(const KernelIO& io) const override { return 4.0 * static_cast<double>(io.in(0).numel()); }

 private:
  // As the decomposed graph: mean, + eps, sqrt, reciprocal, each rounded to T.
  template <typename T>
  T inverse_rms(double sum, int64_t d) const {
    const T mean = static_cast<T>(d > 0 ? sum / static_cast<double>(d) : 0.0);
    return T(1) / static_cast<T>(std::sqrt(mean + static_cast<T>(epsilon_)));
  }
  // A row along the last axis (the usual RMSNorm): the squares summed in double over independent partial sums
  // (one chain waited on every add; float32 rows: nn::sum_squares, AVX2 where refrt's level has it) and the weight
  // indexed by position (not by a modulo), so both loops vectorise.
  template <typename T>
  void contiguous_row(const T* x, const T* w, T* y, int64_t d) const {
    double sum = 0;
    int64_t j = 0;
    if constexpr (std::is_same_v<T, float>) {
      sum = nn::sum_squares(x, d);
    } else {
      double lanes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      for (; j + 8 <= d; j += 8)
        for (int k = 0; k < 8; ++k) lanes[k] += static_cast<double>(x[j + k]) * static_cast<double>(x[j + k]);
      for (; j < d; ++j) sum += static_cast<double>(x[j]) * static_cast<double>(x[j]);
      for (double l : lanes) sum += l;
    }
    const T inv = inverse_rms<T>(sum, d);
    if (w) {
      for (j = 0; j < d; ++j) y[j] = (x[j] * inv) * w[j];
    } else {
      for (j = 0; j < d; ++j) y[j] = x[j] * inv;
    }
  }
  NodeDef node_;
  float epsilon_;
  int64_t axis_;
};

}  // namespace

PARITY_FUSED_KERNEL("FusedActivation", FusedActivationKernel, kFloatTypes16);
PARITY_FUSED_KERNEL("FusedRMSNorm", FusedRMSNormKernel, kFloatTypes16);

}  // namespace parity::refrt
