// Softmax. Opset 13: along one axis (default -1). Opsets 1 and 11: the input is seen as 2-D
// [prod(dims before axis), prod(dims from axis)] (default axis 1) and each row is normalised.
#include <algorithm>
#include <cmath>

#include "../src/kernel.h"

namespace parity::refrt {
namespace {

// Softmax over n elements spaced `inner` apart, for each of outer x inner positions.
// Subtracting the max keeps exp in range; sums accumulate in double.
template <typename T>
void softmax(const T* x, T* y, int64_t outer, int64_t n, int64_t inner) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const T* xs = x + o * n * inner + i;
      T* ys = y + o * n * inner + i;
      T max = xs[0];
      for (int64_t k = 1; k < n; ++k) max = std::max(max, xs[k * inner]);
      double sum = 0;
      for (int64_t k = 0; k < n; ++k) {
        ys[k * inner] = static_cast<T>(std::exp(static_cast<double>(xs[k * inner]) - static_cast<double>(max)));
        sum += static_cast<double>(ys[k * inner]);
      }
      for (int64_t k = 0; k < n; ++k) ys[k * inner] = static_cast<T>(static_cast<double>(ys[k * inner]) / sum);
    }
}

class SoftmaxKernel : public Kernel {
 public:
  explicit SoftmaxKernel(const NodeDef& node)
      : node_(node), coerce_2d_(node.opset < 13), axis_(node.attr_int("axis", coerce_2d_ ? 1 : -1)) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    const int64_t rank = static_cast<int64_t>(x.rank());
    if (rank == 0) node_.fail("input must have rank >= 1");
    if (x.dtype() != DType::kFloat32 && x.dtype() != DType::kFloat64)
      node_.fail("dtype " + dtype_name(x.dtype()) + " is not implemented", ErrorKind::kUnsupported);
    // Coerced 2-D form also accepts axis == rank (one column per row).
    const size_t axis = static_cast<size_t>(coerce_2d_ && axis_ == rank ? rank : normalize_axis(axis_, rank, "axis"));
    int64_t outer = 1, n = 1, inner = 1;
    for (size_t d = 0; d < x.rank(); ++d) {
      if (d < axis) outer *= x.dim(d);
      else if (d == axis || coerce_2d_) n *= x.dim(d);
      else inner *= x.dim(d);
    }
    Tensor out(x.dtype(), x.shape());
    if (out.numel() > 0) {
      if (x.dtype() == DType::kFloat32) softmax(x.data<float>(), out.data<float>(), outer, n, inner);
      else softmax(x.data<double>(), out.data<double>(), outer, n, inner);
    }
    io.outputs[0] = std::move(out);
  }

 private:
  NodeDef node_;
  bool coerce_2d_;
  int64_t axis_;
};

}  // namespace

// 1 (11 allowed negative axes: accepted from 1): coerced 2-D; 13: single axis.
PARITY_KERNEL("Softmax", 1, SoftmaxKernel, kFloatTypes);
PARITY_KERNEL("Softmax", 13, SoftmaxKernel, kFloatTypes);

}  // namespace parity::refrt
