// LRN (local response normalization across channels), as in AlexNet / GoogLeNet.
#include <cmath>

#include "../src/dispatch.h"

namespace parity::refrt {
namespace {

// LRN: y = x / (bias + alpha / size * sum of x^2 over a channel window) ^ beta.
class LrnKernel : public Kernel {
 public:
  explicit LrnKernel(const NodeDef& node)
      : node_(node), alpha_(node.attr_float("alpha", 1e-4f)), beta_(node.attr_float("beta", 0.75f)),
        bias_(node.attr_float("bias", 1.0f)), size_(node.attr_int("size", 0)) {
    if (size_ < 1) node.fail("size must be >= 1");
  }
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    if (is_float16_like(x.dtype())) return with_float32(io, x.dtype(), [&](KernelIO& f) { compute(f); });
    if (x.rank() < 2) node_.fail("X must have rank >= 2");
    const int64_t n = x.dim(0), c = x.dim(1), inner = c ? x.numel() / (n * c) : 0;
    const int64_t lo = (size_ - 1) / 2, hi = size_ - 1 - lo;  // window [ch - floor, ch + ceil]
    Tensor out(x.dtype(), x.shape());
    if (!dispatch_float(x.dtype(), [&](auto tag) {
          using T = decltype(tag);
          const T* px = x.data<T>();
          T* py = out.data<T>();
          for (int64_t img = 0; img < n; ++img)
            for (int64_t ch = 0; ch < c; ++ch)
              for (int64_t i = 0; i < inner; ++i) {
                double sum = 0;
                for (int64_t k = std::max<int64_t>(0, ch - lo); k <= std::min(c - 1, ch + hi); ++k) {
                  const double v = static_cast<double>(px[(img * c + k) * inner + i]);
                  sum += v * v;
                }
                const int64_t at = (img * c + ch) * inner + i;
                py[at] = static_cast<T>(static_cast<double>(px[at]) /
                                        std::pow(bias_ + alpha_ / static_cast<double>(size_) * sum, static_cast<double>(beta_)));
              }
        }))
      node_.fail("dtype " + dtype_name(x.dtype()) + " is not implemented", ErrorKind::kUnsupported);
    io.outputs[0] = std::move(out);
  }

 private:
  NodeDef node_;
  float alpha_, beta_, bias_;
  int64_t size_;
};

}  // namespace

PARITY_KERNEL("LRN", 1, LrnKernel, kFloatTypes16);
PARITY_KERNEL("LRN", 13, LrnKernel, kFloatTypes16);

}  // namespace parity::refrt
