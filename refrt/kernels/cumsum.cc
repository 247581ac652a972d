// CumSum(x, axis) with `exclusive` (each output excludes its own element) and `reverse` (sums run
// from the end). Accumulates sequentially in the input type, as numpy's cumsum; integers wrap.
#include "elementwise.h"

namespace parity::refrt {
namespace {

class CumSumKernel : public Kernel {
 public:
  explicit CumSumKernel(const NodeDef& node)
      : node_(node), exclusive_(node.attr_int("exclusive", 0) != 0), reverse_(node.attr_int("reverse", 0) != 0) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    if (is_float16_like(x.dtype())) return with_float32(io, x.dtype(), [&](KernelIO& f) { compute(f); });
    const auto axis_values = int64_values(io.in(1), "axis");
    if (axis_values.size() != 1 || io.in(1).rank() > 1)
      node_.fail("axis must be a scalar, got shape " + shape_str(io.in(1).shape()));
    if (x.rank() == 0) node_.fail("input must have rank >= 1");
    const size_t axis = static_cast<size_t>(normalize_axis(axis_values[0], static_cast<int64_t>(x.rank()), "axis"));
    int64_t outer = 1, n = x.dim(axis), inner = 1;
    for (size_t d = 0; d < x.rank(); ++d) {
      if (d < axis) outer *= x.dim(d);
      if (d > axis) inner *= x.dim(d);
    }
    Tensor out(x.dtype(), x.shape());
    const bool ok = dispatch_numeric(x.dtype(), [&](auto zero) {
      using T = decltype(zero);
      const T* px = x.data<T>();
      T* py = out.data<T>();
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          T sum = 0;
          for (int64_t step = 0; step < n; ++step) {
            const int64_t k = reverse_ ? n - 1 - step : step;
            const int64_t at = (o * n + k) * inner + i;
            if (exclusive_) {
              py[at] = sum;
              sum = add(sum, px[at]);
            } else {
              sum = add(sum, px[at]);
              py[at] = sum;
            }
          }
        }
    });
    if (!ok) fail_dtype(node_, x.dtype());
    io.outputs[0] = std::move(out);
  }

 private:
  NodeDef node_;
  bool exclusive_, reverse_;
};

}  // namespace

// 11 introduced CumSum; 14 added float16/bfloat16.
PARITY_KERNEL("CumSum", 11, CumSumKernel, kAllNumericTypes);

}  // namespace parity::refrt
