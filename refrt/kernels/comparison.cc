// Comparisons (Equal, Less, Greater) -> bool, and Where(condition, X, Y), all with numpy broadcasting.
#include <cstring>

#include "../src/broadcast.h"

namespace parity::refrt {
namespace {

const std::vector<DType> kEqualTypes = {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64, DType::kBool};

template <typename Op>
class CompareKernel : public Kernel {
 public:
  explicit CompareKernel(const NodeDef& node) : node_(node) {}
  void compute(KernelIO& io) const override {
    const Tensor& a = io.in(0);
    const Tensor& b = io.in(1);
    if (a.dtype() != b.dtype())
      node_.fail("input dtypes differ: " + dtype_name(a.dtype()) + " and " + dtype_name(b.dtype()));
    const auto plan = plan_broadcast<2>({&a.shape(), &b.shape()}, node_);
    Tensor out(DType::kBool, plan.out);
    switch (a.dtype()) {
      case DType::kFloat32: run<float>(plan, a, b, out); break;
      case DType::kFloat64: run<double>(plan, a, b, out); break;
      case DType::kInt32: run<int32_t>(plan, a, b, out); break;
      case DType::kInt64: run<int64_t>(plan, a, b, out); break;
      case DType::kBool:
        if (Op::kBool) {
          run<bool_byte>(plan, a, b, out);
          break;
        }
        [[fallthrough]];
      default: node_.fail("dtype " + dtype_name(a.dtype()) + " is not implemented", ErrorKind::kUnsupported);
    }
    io.outputs[0] = std::move(out);
  }

 private:
  // Bool is stored as one byte; any non-zero byte is true.
  struct bool_byte {
    uint8_t v;
    bool operator==(const bool_byte& o) const { return (v != 0) == (o.v != 0); }
    bool operator<(const bool_byte& o) const { return (v != 0) < (o.v != 0); }
  };
  template <typename T>
  void run(const BroadcastPlan<2>& plan, const Tensor& a, const Tensor& b, Tensor& out) const {
    const T* pa = static_cast<const T*>(a.raw());
    const T* pb = static_cast<const T*>(b.raw());
    uint8_t* po = out.data<uint8_t>();
    for_each_broadcast(plan, [&](int64_t o, const std::array<int64_t, 2>& i) { po[o] = Op::apply(pa[i[0]], pb[i[1]]); });
  }
  NodeDef node_;
};

// NaN compares false everywhere, as IEEE (and numpy) say.
struct EqualOp {
  static constexpr bool kBool = true;
  template <typename T> static uint8_t apply(const T& a, const T& b) { return a == b; }
};
struct LessOp {
  static constexpr bool kBool = false;
  template <typename T> static uint8_t apply(const T& a, const T& b) { return a < b; }
};
struct GreaterOp {
  static constexpr bool kBool = false;
  template <typename T> static uint8_t apply(const T& a, const T& b) { return b < a; }
};

using EqualKernel = CompareKernel<EqualOp>;
using LessKernel = CompareKernel<LessOp>;
using GreaterKernel = CompareKernel<GreaterOp>;

// Where moves bytes, so one implementation serves every dtype of X and Y.
class WhereKernel : public Kernel {
 public:
  explicit WhereKernel(const NodeDef& node) : node_(node) {}
  void compute(KernelIO& io) const override {
    const Tensor& cond = io.in(0);
    const Tensor& x = io.in(1);
    const Tensor& y = io.in(2);
    if (cond.dtype() != DType::kBool) node_.fail("condition must be bool, got " + dtype_name(cond.dtype()));
    if (x.dtype() != y.dtype())
      node_.fail("X and Y dtypes differ: " + dtype_name(x.dtype()) + " and " + dtype_name(y.dtype()));
    const auto plan = plan_broadcast<3>({&cond.shape(), &x.shape(), &y.shape()}, node_);
    Tensor out(x.dtype(), plan.out);
    const size_t elem = dtype_size(x.dtype());
    const uint8_t* pc = cond.data<uint8_t>();
    const char* px = static_cast<const char*>(x.raw());
    const char* py = static_cast<const char*>(y.raw());
    char* po = static_cast<char*>(out.mutable_raw());
    for_each_broadcast(plan, [&](int64_t o, const std::array<int64_t, 3>& i) {
      const char* src = pc[i[0]] ? px + static_cast<size_t>(i[1]) * elem : py + static_cast<size_t>(i[2]) * elem;
      std::memcpy(po + static_cast<size_t>(o) * elem, src, elem);
    });
    io.outputs[0] = std::move(out);
  }

 private:
  NodeDef node_;
};

}  // namespace

// Equal 7: numpy broadcasting; 11 added floats (accepted here from 7: a superset), 13/19 widened types.
PARITY_KERNEL("Equal", 7, EqualKernel, kEqualTypes);
// Less/Greater 7: numpy broadcasting; 9 and 13 widened types.
PARITY_KERNEL("Less", 7, LessKernel, kNumericTypes);
PARITY_KERNEL("Greater", 7, GreaterKernel, kNumericTypes);
// Where 9 introduced the op; 16 widened types.
PARITY_KERNEL("Where", 9, WhereKernel, kAllTypes);

}  // namespace parity::refrt
