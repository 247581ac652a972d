// Elementwise kernels: binary arithmetic with numpy broadcasting, and unary math/activations.
#include <cmath>

#include "../src/kernel.h"

namespace parity::refrt {
namespace {

const std::vector<DType> kArithTypes = {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64};
const std::vector<DType> kFloatTypes = {DType::kFloat32, DType::kFloat64};

// Calls f(out_index, a_index, b_index) for every output element of a broadcast.
template <typename F>
void for_each_broadcast(const Shape& out, const Shape& a, const Shape& b, F f) {
  const int64_t n = checked_numel(out);
  if (a == out && b == out) {
    for (int64_t i = 0; i < n; ++i) f(i, i, i);
    return;
  }
  const size_t rank = out.size();
  if (rank == 0) {  // both scalars were handled above; this also keeps GCC 12's -Wfree-nonheap-object quiet
    f(0, 0, 0);
    return;
  }
  // Element strides of a and b in the output's index space (0 on broadcast dims).
  std::vector<int64_t> sa(rank, 0), sb(rank, 0);
  for (int64_t i = static_cast<int64_t>(rank) - 1, ea = 1, eb = 1; i >= 0; --i) {
    const size_t oi = static_cast<size_t>(i);
    const int64_t ia = i - static_cast<int64_t>(rank - a.size());
    const int64_t ib = i - static_cast<int64_t>(rank - b.size());
    if (ia >= 0) {
      sa[oi] = a[static_cast<size_t>(ia)] == 1 ? 0 : ea;
      ea *= a[static_cast<size_t>(ia)];
    }
    if (ib >= 0) {
      sb[oi] = b[static_cast<size_t>(ib)] == 1 ? 0 : eb;
      eb *= b[static_cast<size_t>(ib)];
    }
  }
  std::vector<int64_t> index(rank, 0);
  int64_t ia = 0, ib = 0;
  for (int64_t i = 0; i < n; ++i) {
    f(i, ia, ib);
    for (int64_t d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
      const size_t k = static_cast<size_t>(d);
      ++index[k];
      ia += sa[k];
      ib += sb[k];
      if (index[k] < out[k]) break;
      ia -= sa[k] * index[k];
      ib -= sb[k] * index[k];
      index[k] = 0;
    }
  }
}

template <typename Op>
class BinaryKernel : public Kernel {
 public:
  explicit BinaryKernel(const NodeDef& node) : node_(node) {}
  void compute(KernelIO& io) const override {
    const Tensor& a = io.in(0);
    const Tensor& b = io.in(1);
    if (a.dtype() != b.dtype())
      node_.fail("input dtypes differ: " + dtype_name(a.dtype()) + " and " + dtype_name(b.dtype()));
    Tensor out(a.dtype(), broadcast_shapes(a.shape(), b.shape(), &node_));
    switch (a.dtype()) {
      case DType::kFloat32: run<float>(a, b, out); break;
      case DType::kFloat64: run<double>(a, b, out); break;
      case DType::kInt32: run<int32_t>(a, b, out); break;
      case DType::kInt64: run<int64_t>(a, b, out); break;
      default: node_.fail("dtype " + dtype_name(a.dtype()) + " is not supported");
    }
    io.outputs[0] = std::move(out);
  }

 private:
  template <typename T>
  void run(const Tensor& a, const Tensor& b, Tensor& out) const {
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* po = out.data<T>();
    for_each_broadcast(out.shape(), a.shape(), b.shape(),
                       [&](int64_t o, int64_t i, int64_t j) { po[o] = Op::template apply<T>(pa[i], pb[j], node_); });
  }
  NodeDef node_;
};

struct AddOp { template <typename T> static T apply(T a, T b, const NodeDef&) { return a + b; } };
struct SubOp { template <typename T> static T apply(T a, T b, const NodeDef&) { return a - b; } };
struct MulOp { template <typename T> static T apply(T a, T b, const NodeDef&) { return a * b; } };
struct DivOp {
  template <typename T>
  static T apply(T a, T b, const NodeDef& node) {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0) node.fail("integer division by zero");
      return a / b;  // C++ integer division truncates toward zero, as ONNX specifies
    } else {
      return a / b;
    }
  }
};

using AddKernel = BinaryKernel<AddOp>;
using SubKernel = BinaryKernel<SubOp>;
using MulKernel = BinaryKernel<MulOp>;
using DivKernel = BinaryKernel<DivOp>;

template <typename Op>
class UnaryKernel : public Kernel {
 public:
  explicit UnaryKernel(const NodeDef& node) : node_(node) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    Tensor out(x.dtype(), x.shape());
    if (x.dtype() == DType::kFloat32) run<float>(x, out);
    else if (x.dtype() == DType::kFloat64) run<double>(x, out);
    else node_.fail("dtype " + dtype_name(x.dtype()) + " is not supported");
    io.outputs[0] = std::move(out);
  }

 private:
  template <typename T>
  void run(const Tensor& x, Tensor& out) const {
    const T* px = x.data<T>();
    T* po = out.data<T>();
    for (int64_t i = 0; i < x.numel(); ++i) po[i] = Op::apply(px[i]);
  }
  NodeDef node_;
};

struct ReluOp { template <typename T> static T apply(T x) { return x > T(0) ? x : T(0); } };
struct SigmoidOp {
  // Split by sign so that exp never overflows.
  template <typename T>
  static T apply(T x) {
    if (x >= T(0)) return T(1) / (T(1) + std::exp(-x));
    const T e = std::exp(x);
    return e / (T(1) + e);
  }
};
struct TanhOp { template <typename T> static T apply(T x) { return std::tanh(x); } };
struct ExpOp { template <typename T> static T apply(T x) { return std::exp(x); } };
struct LogOp { template <typename T> static T apply(T x) { return std::log(x); } };
struct NegOp { template <typename T> static T apply(T x) { return -x; } };
struct AbsOp { template <typename T> static T apply(T x) { return std::abs(x); } };
struct SqrtOp { template <typename T> static T apply(T x) { return std::sqrt(x); } };

using ReluKernel = UnaryKernel<ReluOp>;
using SigmoidKernel = UnaryKernel<SigmoidOp>;
using TanhKernel = UnaryKernel<TanhOp>;
using ExpKernel = UnaryKernel<ExpOp>;
using LogKernel = UnaryKernel<LogOp>;
using NegKernel = UnaryKernel<NegOp>;
using AbsKernel = UnaryKernel<AbsOp>;
using SqrtKernel = UnaryKernel<SqrtOp>;

}  // namespace

PARITY_KERNEL("Add", 14, AddKernel, kArithTypes);
PARITY_KERNEL("Sub", 14, SubKernel, kArithTypes);
PARITY_KERNEL("Mul", 14, MulKernel, kArithTypes);
PARITY_KERNEL("Div", 14, DivKernel, kArithTypes);
PARITY_KERNEL("Relu", 14, ReluKernel, kFloatTypes);
PARITY_KERNEL("Sigmoid", 13, SigmoidKernel, kFloatTypes);
PARITY_KERNEL("Tanh", 13, TanhKernel, kFloatTypes);
PARITY_KERNEL("Exp", 13, ExpKernel, kFloatTypes);
PARITY_KERNEL("Log", 13, LogKernel, kFloatTypes);
PARITY_KERNEL("Neg", 13, NegKernel, kFloatTypes);
PARITY_KERNEL("Abs", 13, AbsKernel, kFloatTypes);
PARITY_KERNEL("Sqrt", 13, SqrtKernel, kFloatTypes);

}  // namespace parity::refrt
