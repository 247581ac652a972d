// Nodes made by refrt's load-time passes (graph_optimize.h), private domain com.parity.refrt:
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
  explicit FusedRMSNormKernel(const NodeDef& node) : node_(node), epsilon_(node.attr_float("epsilon", 1e-6f)) {}
  void compute(KernelIO& io) const override {
    nn::run_float(node_, io, io.in(0).dtype(), [&](auto tag, KernelIO& f) {
      using T = decltype(tag);
      const Tensor& x = f.in(0);
      const Tensor* w = f.optional(1);
      if (x.rank() == 0) node_.fail("X must have rank >= 1");
      const int64_t d = x.dim(x.rank() - 1);
      if (w && (w->dtype() != x.dtype() || w->numel() != d)) node_.fail("the weight must have the last dim of X");
      Tensor y(x.dtype(), x.shape());
      const T* px = x.data<T>();
      const T* pw = w ? w->data<T>() : nullptr;
      T* py = y.data<T>();
      const int64_t rows = d == 0 ? 0 : x.numel() / d;
      parallel_for(f, rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(d, 1)), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const T* xr = px + r * d;
          T* yr = py + r * d;
          double sum = 0;
          for (int64_t j = 0; j < d; ++j) sum += static_cast<double>(xr[j]) * static_cast<double>(xr[j]);
          // As the decomposed graph: mean, + eps, sqrt, reciprocal, each rounded to T.
          const T mean = static_cast<T>(sum / static_cast<double>(d));
          const T inv = T(1) / static_cast<T>(std::sqrt(mean + static_cast<T>(epsilon_)));
          if (pw)
            for (int64_t j = 0; j < d; ++j) yr[j] = (xr[j] * inv) * pw[j];
          else
            for (int64_t j = 0; j < d; ++j) yr[j] = xr[j] * inv;
        }
      });
      f.outputs[0] = std::move(y);
    });
  }
  double flops(const KernelIO& io) const override { return 4.0 * static_cast<double>(io.in(0).numel()); }

 private:
  NodeDef node_;
  float epsilon_;
};

}  // namespace

PARITY_FUSED_KERNEL("FusedActivation", FusedActivationKernel, kFloatTypes16);
PARITY_FUSED_KERNEL("FusedRMSNorm", FusedRMSNormKernel, kFloatTypes16);

}  // namespace parity::refrt
