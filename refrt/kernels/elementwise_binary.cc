// Binary arithmetic with numpy broadcasting: Add, Sub, Mul, Div.
// Integer overflow wraps (two's complement, as ONNX Runtime and numpy do) instead of being UB.
#include <limits>
#include <type_traits>

#include "../src/broadcast.h"

namespace parity::refrt {
namespace {

template <typename T>
T wrap(std::make_unsigned_t<T> v) {
  return static_cast<T>(v);
}

template <typename Op>
class BinaryArithmeticKernel : public Kernel {
 public:
  explicit BinaryArithmeticKernel(const NodeDef& node) : node_(node) {}
  void compute(KernelIO& io) const override {
    const Tensor& a = io.in(0);
    const Tensor& b = io.in(1);
    if (a.dtype() != b.dtype())
      node_.fail("input dtypes differ: " + dtype_name(a.dtype()) + " and " + dtype_name(b.dtype()));
    const auto plan = plan_broadcast<2>({&a.shape(), &b.shape()}, node_);
    Tensor out(a.dtype(), plan.out);
    switch (a.dtype()) {
      case DType::kFloat32: run<float>(plan, a, b, out); break;
      case DType::kFloat64: run<double>(plan, a, b, out); break;
      case DType::kInt32: run<int32_t>(plan, a, b, out); break;
      case DType::kInt64: run<int64_t>(plan, a, b, out); break;
      default: node_.fail("dtype " + dtype_name(a.dtype()) + " is not implemented", ErrorKind::kUnsupported);
    }
    io.outputs[0] = std::move(out);
  }

 private:
  template <typename T>
  void run(const BroadcastPlan<2>& plan, const Tensor& a, const Tensor& b, Tensor& out) const {
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* po = out.data<T>();
    for_each_broadcast(plan, [&](int64_t o, const std::array<int64_t, 2>& i) {
      po[o] = Op::template apply<T>(pa[i[0]], pb[i[1]], node_);
    });
  }
  NodeDef node_;
};

struct AddOp {
  template <typename T>
  static T apply(T a, T b, const NodeDef&) {
    if constexpr (std::is_integral_v<T>) return wrap<T>(std::make_unsigned_t<T>(a) + std::make_unsigned_t<T>(b));
    else return a + b;
  }
};
struct SubOp {
  template <typename T>
  static T apply(T a, T b, const NodeDef&) {
    if constexpr (std::is_integral_v<T>) return wrap<T>(std::make_unsigned_t<T>(a) - std::make_unsigned_t<T>(b));
    else return a - b;
  }
};
struct MulOp {
  template <typename T>
  static T apply(T a, T b, const NodeDef&) {
    if constexpr (std::is_integral_v<T>) return wrap<T>(std::make_unsigned_t<T>(a) * std::make_unsigned_t<T>(b));
    else return a * b;
  }
};
struct DivOp {
  template <typename T>
  static T apply(T a, T b, const NodeDef& node) {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0) node.fail("integer division by zero");
      if (b == -1) return wrap<T>(std::make_unsigned_t<T>(0) - std::make_unsigned_t<T>(a));  // MIN / -1 wraps to MIN
      return a / b;  // C++ truncates toward zero, as ONNX specifies
    } else {
      return a / b;
    }
  }
};

using AddKernel = BinaryArithmeticKernel<AddOp>;
using SubKernel = BinaryArithmeticKernel<SubOp>;
using MulKernel = BinaryArithmeticKernel<MulOp>;
using DivKernel = BinaryArithmeticKernel<DivOp>;

}  // namespace

// 7: numpy broadcasting; 13 and 14 only widened the type list.
PARITY_KERNEL("Add", 7, AddKernel, kNumericTypes);
PARITY_KERNEL("Sub", 7, SubKernel, kNumericTypes);
PARITY_KERNEL("Mul", 7, MulKernel, kNumericTypes);
PARITY_KERNEL("Div", 7, DivKernel, kNumericTypes);

}  // namespace parity::refrt
