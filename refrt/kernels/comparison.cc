// Comparisons (Equal Less LessOrEqual Greater GreaterOrEqual) and logic (And Or Xor) -> bool, and
// Where(condition, X, Y), all with numpy broadcasting. NaN compares false everywhere (IEEE, numpy).
#include <cstdint>
#include <cstring>

#include "elementwise.h"

namespace parity::refrt {
namespace {

struct CompareOp {
  explicit CompareOp(const NodeDef&) {}
  template <typename T>
  static constexpr bool accepts = is_number_v<T>;
};
struct EqualOp {
  explicit EqualOp(const NodeDef&) {}
  template <typename T>
  static constexpr bool accepts = is_number_v<T> || std::is_same_v<T, bool>;
  template <typename T>
  bool operator()(T a, T b) const {
    return a == b;
  }
};
struct LessOp : CompareOp {
  using CompareOp::CompareOp;
  template <typename T>
  bool operator()(T a, T b) const {
    return a < b;
  }
};
struct LessOrEqualOp : CompareOp {
  using CompareOp::CompareOp;
  template <typename T>
  bool operator()(T a, T b) const {
    return a <= b;
  }
};
struct GreaterOp : CompareOp {
  using CompareOp::CompareOp;
  template <typename T>
  bool operator()(T a, T b) const {
    return a > b;
  }
};
struct GreaterOrEqualOp : CompareOp {
  using CompareOp::CompareOp;
  template <typename T>
  bool operator()(T a, T b) const {
    return a >= b;
  }
};

struct LogicOp {
  explicit LogicOp(const NodeDef&) {}
  template <typename T>
  static constexpr bool accepts = std::is_same_v<T, bool>;
};
struct AndOp : LogicOp {
  using LogicOp::LogicOp;
  bool operator()(bool a, bool b) const { return a && b; }
};
struct OrOp : LogicOp {
  using LogicOp::LogicOp;
  bool operator()(bool a, bool b) const { return a || b; }
};
struct XorOp : LogicOp {
  using LogicOp::LogicOp;
  bool operator()(bool a, bool b) const { return a != b; }
};

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
    switch (elem) {  // the value types of every size but 16 (complex128) and strings
      case 1:
        return select<uint8_t>(io, plan, pc, px, py, std::move(out));
      case 2:
        return select<uint16_t>(io, plan, pc, px, py, std::move(out));
      case 4:
        return select<uint32_t>(io, plan, pc, px, py, std::move(out));
      case 8:
        return select<uint64_t>(io, plan, pc, px, py, std::move(out));
      default:
        break;
    }
    char* po = static_cast<char*>(out.mutable_raw());
    for_each_broadcast(plan, [&](int64_t o, const std::array<int64_t, 3>& i) {
      const char* src = pc[i[0]] ? px + static_cast<size_t>(i[1]) * elem : py + static_cast<size_t>(i[2]) * elem;
      std::memcpy(po + static_cast<size_t>(o) * elem, src, elem);
    });
    io.outputs[0] = std::move(out);
  }

 private:
  // z[j] = (c[j] != 0) != flip ? v[j] : k: one operand a scalar. Branch-free (a mask of all ones or zeros per
  // element), so that the compiler vectorises it and a random mask costs no mispredicted branches (the branchy
  // loop took 5 ns an element on a random [512, 512] mask).
  template <typename U>
  static void select_with_scalar(const uint8_t* c, const U* v, U k, U* z, int64_t len, bool flip) {
    const U flip_mask = flip ? ~U(0) : U(0);
    for (int64_t j = 0; j < len; ++j) {
      const U m = (c[j] != 0 ? ~U(0) : U(0)) ^ flip_mask;
      z[j] = static_cast<U>((v[j] & m) | (k & static_cast<U>(~m)));
    }
  }

  template <typename U>
  static void select_both(const uint8_t* c, const U* x, const U* y, U* z, int64_t len) {
    for (int64_t j = 0; j < len; ++j) {
      const U m = c[j] != 0 ? ~U(0) : U(0);
      z[j] = static_cast<U>((x[j] & m) | (y[j] & static_cast<U>(~m)));
    }
  }

  // Elements moved as unsigned integers of their size, by output ranges over the pool, each range as
  // runs in which the three operands move by fixed strides (broadcast.h).
  template <typename U>
  static void select(KernelIO& io, const BroadcastPlan<3>& plan, const uint8_t* pc, const void* x_raw,
                     const void* y_raw, Tensor out) {
    const U* px = static_cast<const U*>(x_raw);
    const U* py = static_cast<const U*>(y_raw);
    U* po = static_cast<U*>(out.mutable_raw());
    parallel_for(io, plan.numel, 16384, [&](int64_t begin, int64_t end) {
      for_each_broadcast_run(plan, begin, end, [&](int64_t o, const auto& i, int64_t len, const auto& s) {
        const uint8_t* c = pc + i[0];
        const U* x = px + i[1];
        const U* y = py + i[2];
        U* z = po + o;
        if (s[0] == 1 && s[1] == 1 && s[2] == 1)
          select_both(c, x, y, z, len);
        else if (s[0] == 1 && s[1] == 1 && s[2] == 0)  // a mask: Where(keep, scores, -inf), a loop that vectorises
          select_with_scalar(c, x, *y, z, len, false);
        else if (s[0] == 1 && s[1] == 0 && s[2] == 1)  // Where(drop, fill, scores)
          select_with_scalar(c, y, *x, z, len, true);
        else
          for (int64_t j = 0; j < len; ++j) z[j] = c[j * s[0]] ? x[j * s[1]] : y[j * s[2]];
      });
    });
    io.outputs[0] = std::move(out);
  }
  NodeDef node_;
};

}  // namespace

// Equal 7: numpy broadcasting; 11 added floats (accepted here from 7: a superset), 13/19 widened types.
PARITY_KERNEL("Equal", 7, BinaryKernel<EqualOp>, kAllTypes);
// Less/Greater 7: numpy broadcasting; 9 and 13 widened types. LessOrEqual/GreaterOrEqual 12; 16 widened.
PARITY_KERNEL("Less", 7, BinaryKernel<LessOp>, kAllNumericTypes);
PARITY_KERNEL("Greater", 7, BinaryKernel<GreaterOp>, kAllNumericTypes);
PARITY_KERNEL("LessOrEqual", 12, BinaryKernel<LessOrEqualOp>, kAllNumericTypes);
PARITY_KERNEL("GreaterOrEqual", 12, BinaryKernel<GreaterOrEqualOp>, kAllNumericTypes);
// And/Or/Xor 7: numpy broadcasting.
PARITY_KERNEL("And", 7, BinaryKernel<AndOp>, {DType::kBool});
PARITY_KERNEL("Or", 7, BinaryKernel<OrOp>, {DType::kBool});
PARITY_KERNEL("Xor", 7, BinaryKernel<XorOp>, {DType::kBool});
// Where 9 introduced the op; 16 widened types.
PARITY_KERNEL("Where", 9, WhereKernel, kAllTypes);

}  // namespace parity::refrt
