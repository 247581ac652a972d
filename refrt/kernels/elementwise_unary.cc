// Unary math and activations: Neg Abs Sqrt Exp Log Relu Sigmoid Tanh.
#include <cmath>
#include <type_traits>

#include "../src/kernel.h"

namespace parity::refrt {
namespace {

const std::vector<DType> kSignedTypes = {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64};

template <typename Op>
class UnaryKernel : public Kernel {
 public:
  explicit UnaryKernel(const NodeDef& node) : node_(node) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    Tensor out(x.dtype(), x.shape());
    switch (x.dtype()) {
      case DType::kFloat32: run<float>(x, out); return finish(io, out);
      case DType::kFloat64: run<double>(x, out); return finish(io, out);
      case DType::kInt32:
        if constexpr (Op::kIntegers) { run<int32_t>(x, out); return finish(io, out); }
        break;
      case DType::kInt64:
        if constexpr (Op::kIntegers) { run<int64_t>(x, out); return finish(io, out); }
        break;
      default: break;
    }
    node_.fail("dtype " + dtype_name(x.dtype()) + " is not implemented", ErrorKind::kUnsupported);
  }

 private:
  static void finish(KernelIO& io, Tensor& out) { io.outputs[0] = std::move(out); }
  template <typename T>
  void run(const Tensor& x, Tensor& out) const {
    const T* px = x.data<T>();
    T* po = out.data<T>();
    for (int64_t i = 0; i < x.numel(); ++i) po[i] = Op::apply(px[i]);
  }
  NodeDef node_;
};

// Integer negation wraps (-MIN == MIN) rather than being undefined.
template <typename T>
T negate(T x) {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(std::make_unsigned_t<T>(0) - std::make_unsigned_t<T>(x));
  else return -x;
}

struct NegOp {
  static constexpr bool kIntegers = true;
  template <typename T> static T apply(T x) { return negate(x); }
};
struct AbsOp {
  static constexpr bool kIntegers = true;
  template <typename T> static T apply(T x) { return x < T(0) ? negate(x) : x; }
};
struct ReluOp {
  static constexpr bool kIntegers = false;
  template <typename T> static T apply(T x) { return x > T(0) ? x : (x == x ? T(0) : x); }  // NaN stays NaN
};
struct SigmoidOp {
  static constexpr bool kIntegers = false;
  // Split by sign so that exp never overflows.
  template <typename T>
  static T apply(T x) {
    if (x >= T(0)) return T(1) / (T(1) + std::exp(-x));
    const T e = std::exp(x);
    return e / (T(1) + e);
  }
};
struct TanhOp {
  static constexpr bool kIntegers = false;
  template <typename T> static T apply(T x) { return std::tanh(x); }
};
struct ExpOp {
  static constexpr bool kIntegers = false;
  template <typename T> static T apply(T x) { return std::exp(x); }
};
struct LogOp {
  static constexpr bool kIntegers = false;
  template <typename T> static T apply(T x) { return std::log(x); }
};
struct SqrtOp {
  static constexpr bool kIntegers = false;
  template <typename T> static T apply(T x) { return std::sqrt(x); }
};

using NegKernel = UnaryKernel<NegOp>;
using AbsKernel = UnaryKernel<AbsOp>;
using ReluKernel = UnaryKernel<ReluOp>;
using SigmoidKernel = UnaryKernel<SigmoidOp>;
using TanhKernel = UnaryKernel<TanhOp>;
using ExpKernel = UnaryKernel<ExpOp>;
using LogKernel = UnaryKernel<LogOp>;
using SqrtKernel = UnaryKernel<SqrtOp>;

}  // namespace

// 6 dropped the legacy `consumed_inputs` attribute; 13 (and Relu 14) only widened the type list.
PARITY_KERNEL("Neg", 6, NegKernel, kSignedTypes);
PARITY_KERNEL("Abs", 6, AbsKernel, kSignedTypes);
PARITY_KERNEL("Relu", 6, ReluKernel, kFloatTypes);
PARITY_KERNEL("Sigmoid", 6, SigmoidKernel, kFloatTypes);
PARITY_KERNEL("Tanh", 6, TanhKernel, kFloatTypes);
PARITY_KERNEL("Exp", 6, ExpKernel, kFloatTypes);
PARITY_KERNEL("Log", 6, LogKernel, kFloatTypes);
PARITY_KERNEL("Sqrt", 6, SqrtKernel, kFloatTypes);

}  // namespace parity::refrt
