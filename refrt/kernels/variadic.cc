// Variadic elementwise ops over 1..N inputs with numpy broadcasting: Min Max Sum Mean.
// Min/Max propagate NaN (numpy fmin/fmax would not; ONNX and numpy minimum/maximum do).
#include "elementwise.h"

namespace parity::refrt {
namespace {

struct MinOp {
  template <typename T>
  static constexpr bool accepts = is_number_v<T>;
  static constexpr bool kMean = false;
  template <typename T>
  static T apply(T a, T b) {
    return nan_min(a, b);
  }
};
struct MaxOp {
  template <typename T>
  static constexpr bool accepts = is_number_v<T>;
  static constexpr bool kMean = false;
  template <typename T>
  static T apply(T a, T b) {
    return nan_max(a, b);
  }
};
struct SumOp {
  template <typename T>
  static constexpr bool accepts = is_number_v<T>;
  static constexpr bool kMean = false;
  template <typename T>
  static T apply(T a, T b) {
    return add(a, b);
  }
};
struct MeanOp {
  template <typename T>
  static constexpr bool accepts = is_float_v<T>;
  static constexpr bool kMean = true;
  template <typename T>
  static T apply(T a, T b) {
    return a + b;
  }
};

template <typename Op>
class VariadicKernel : public Kernel {
 public:
  explicit VariadicKernel(const NodeDef& node) : node_(node) {}
  void compute(KernelIO& io) const override {
    if (io.inputs.empty()) node_.fail("needs at least one input");
    const DType dtype = io.in(0).dtype();
    Shape out_shape = io.in(0).shape();
    for (size_t k = 1; k < io.inputs.size(); ++k) {
      if (io.in(k).dtype() != dtype)
        node_.fail("input " + std::to_string(k) + " is " + dtype_name(io.in(k).dtype()) + ", input 0 is " +
                   dtype_name(dtype));
      out_shape = broadcast_shapes(out_shape, io.in(k).shape(), &node_);
    }
    if (is_float16_like(dtype) && Op::template accepts<float>)
      return with_float32(io, dtype, [&](KernelIO& f) { compute(f); });
    bool done = false;
    dispatch_numeric(dtype, [&](auto zero) {
      using T = decltype(zero);
      if constexpr (Op::template accepts<T>) {
        Tensor out(dtype, out_shape);
        T* po = out.data<T>();
        for (size_t k = 0; k < io.inputs.size(); ++k) {
          const T* px = io.in(k).template data<T>();
          const auto plan = plan_broadcast<2>({&out_shape, &io.in(k).shape()}, node_);
          for_each_broadcast(plan, [&](int64_t o, const std::array<int64_t, 2>& i) {
            po[o] = k == 0 ? px[i[1]] : Op::apply(po[o], px[i[1]]);
          });
        }
        if constexpr (Op::kMean) {
          const T n = static_cast<T>(io.inputs.size());
          for (int64_t i = 0; i < out.numel(); ++i) po[i] /= n;
        }
        io.outputs[0] = std::move(out);
        done = true;
      }
    });
    if (!done) fail_dtype(node_, dtype);
  }

 private:
  NodeDef node_;
};

}  // namespace

// 6: same shapes; 8: numpy broadcasting (accepted from 6: a superset). Min/Max 12 and 13 widened types.
PARITY_KERNEL("Min", 6, VariadicKernel<MinOp>, kAllNumericTypes);
PARITY_KERNEL("Max", 6, VariadicKernel<MaxOp>, kAllNumericTypes);
PARITY_KERNEL("Sum", 6, VariadicKernel<SumOp>, kFloatTypes16);
PARITY_KERNEL("Mean", 6, VariadicKernel<MeanOp>, kFloatTypes16);

}  // namespace parity::refrt
