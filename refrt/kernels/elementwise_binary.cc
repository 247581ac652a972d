// Binary arithmetic with numpy broadcasting: Add Sub Mul Div Mod Pow, BitShift, BitwiseAnd/Or/Xor.
// Integer overflow wraps (two's complement, as ONNX Runtime and numpy do) instead of being UB;
// integer division or modulo by zero is a node error, not a crash.
#include <cmath>

#include "elementwise.h"

namespace parity::refrt {
namespace {

struct NumberOp {
  explicit NumberOp(const NodeDef& node) : node(&node) {}
  template <typename T>
  static constexpr bool accepts = is_number_v<T>;
  const NodeDef* node;
};

struct AddOp : NumberOp {
  using NumberOp::NumberOp;
  template <typename T>
  T operator()(T a, T b) const {
    return add(a, b);
  }
};
struct SubOp : NumberOp {
  using NumberOp::NumberOp;
  template <typename T>
  T operator()(T a, T b) const {
    return sub(a, b);
  }
};
struct MulOp : NumberOp {
  using NumberOp::NumberOp;
  template <typename T>
  T operator()(T a, T b) const {
    return mul(a, b);
  }
};
struct DivOp : NumberOp {
  using NumberOp::NumberOp;
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (is_int_v<T>) {
      if (b == 0) node->fail("integer division by zero");
      if constexpr (std::is_signed_v<T>)
        if (b == -1) return wrap_neg(a);  // MIN / -1 wraps to MIN (plain a / b would be UB)
      return static_cast<T>(a / b);       // C++ truncates toward zero, as ONNX specifies
    } else {
      return a / b;
    }
  }
};

// fmod=0 (integers only): the remainder takes the divisor's sign (Python %); fmod=1: C fmod, the
// dividend's sign.
struct ModOp : NumberOp {
  explicit ModOp(const NodeDef& n) : NumberOp(n), fmod(n.attr_int("fmod", 0) != 0) {}
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (is_int_v<T>) {
      if (b == 0) node->fail("integer modulo by zero");
      if constexpr (std::is_signed_v<T>)
        if (b == -1) return 0;  // MIN % -1 would be UB
      const T r = static_cast<T>(a % b);
      if (!fmod && r != 0 && ((r < 0) != (b < 0))) return static_cast<T>(r + b);
      return r;
    } else {
      if (!fmod) node->fail("Mod on floating point inputs requires fmod=1 (ONNX spec)");
      return static_cast<T>(std::fmod(a, b));
    }
  }
  bool fmod;
};

struct BitwiseOp {
  explicit BitwiseOp(const NodeDef&) {}
  template <typename T>
  static constexpr bool accepts = is_int_v<T>;
};
struct BitwiseAndOp : BitwiseOp {
  using BitwiseOp::BitwiseOp;
  template <typename T>
  T operator()(T a, T b) const {
    return static_cast<T>(a & b);
  }
};
struct BitwiseOrOp : BitwiseOp {
  using BitwiseOp::BitwiseOp;
  template <typename T>
  T operator()(T a, T b) const {
    return static_cast<T>(a | b);
  }
};
struct BitwiseXorOp : BitwiseOp {
  using BitwiseOp::BitwiseOp;
  template <typename T>
  T operator()(T a, T b) const {
    return static_cast<T>(a ^ b);
  }
};

// Unsigned only. A shift by the bit width or more gives 0 (as numpy) instead of C++ UB.
struct BitShiftOp {
  explicit BitShiftOp(const NodeDef& n) {
    const Attribute* d = n.attr("direction", Attribute::Type::kString);
    if (!d || (d->s != "LEFT" && d->s != "RIGHT")) n.fail("attribute 'direction' must be \"LEFT\" or \"RIGHT\"");
    left = d->s == "LEFT";
  }
  template <typename T>
  static constexpr bool accepts = is_int_v<T>&& std::is_unsigned_v<T>;
  template <typename T>
  T operator()(T a, T b) const {
    if (b >= sizeof(T) * 8) return 0;
    using U = wide_unsigned_t<T>;
    return static_cast<T>(left ? U(a) << b : U(a) >> b);
  }
  bool left = true;
};

// Pow: base and exponent may have different types (opset 12+); the result has the base's type.
class PowKernel : public Kernel {
 public:
  explicit PowKernel(const NodeDef& node) : node_(node) {}
  void compute(KernelIO& io) const override {
    const Tensor& base = io.in(0);
    Tensor exponent_f32;
    const Tensor* exponent = &io.in(1);
    if (is_float16_like(exponent->dtype()) && exponent->dtype() != base.dtype()) {
      exponent_f32 = widen_to_float32(*exponent);
      exponent = &exponent_f32;
    }
    if (is_float16_like(base.dtype())) {
      KernelIO sub{{&base, exponent}, {}};
      sub.outputs.resize(1);
      with_float32(sub, base.dtype(), [&](KernelIO& f) { compute(f); });
      io.outputs[0] = std::move(sub.outputs[0]);
      return;
    }
    const auto plan = plan_broadcast<2>({&base.shape(), &exponent->shape()}, node_);
    if (plan.out == base.shape() && exponent->numel() == 1 && scalar_exponent(io, base, *exponent)) return;
    bool done = false;
    dispatch_numeric(base.dtype(), [&](auto b0) {
      using B = decltype(b0);
      dispatch_numeric(exponent->dtype(), [&](auto e0) {
        using E = decltype(e0);
        Tensor out(base.dtype(), plan.out);
        const B* pb = base.data<B>();
        const E* pe = exponent->data<E>();
        B* po = out.data<B>();
        for_each_broadcast(
            plan, [&](int64_t o, const std::array<int64_t, 2>& i) { po[o] = power<B, E>(pb[i[0]], pe[i[1]]); });
        io.outputs[0] = std::move(out);
        done = true;
      });
    });
    if (!done)
      node_.fail(
          "base " + dtype_name(base.dtype()) + " with exponent " + dtype_name(exponent->dtype()) + " is not supported",
          ErrorKind::kUnsupported);
  }

 private:
  // A float base and one float exponent (RMSNorm's x ** 2): one pass split over the pool. x ** 2 of a
  // float is x * x: the product of two floats is exact in double, so rounding it once to float is
  // what std::pow in double then rounding gives. Other exponents keep std::pow.
  static bool scalar_exponent(KernelIO& io, const Tensor& base, const Tensor& exponent) {
    if ((base.dtype() != DType::kFloat32 && base.dtype() != DType::kFloat64) ||
        (exponent.dtype() != DType::kFloat32 && exponent.dtype() != DType::kFloat64))
      return false;
    const double e =
        exponent.dtype() == DType::kFloat32 ? static_cast<double>(*exponent.data<float>()) : *exponent.data<double>();
    Tensor out(base.dtype(), base.shape());
    dispatch_float(base.dtype(), [&](auto zero) {
      using B = decltype(zero);
      const B* pb = base.data<B>();
      B* po = out.data<B>();
      const bool square = e == 2.0 && std::is_same_v<B, float>;
      parallel_for(io, base.numel(), 16384, [&](int64_t begin, int64_t end) {
        if (square) {
          for (int64_t i = begin; i < end; ++i) po[i] = pb[i] * pb[i];
        } else {
          for (int64_t i = begin; i < end; ++i) po[i] = static_cast<B>(std::pow(static_cast<double>(pb[i]), e));
        }
      });
    });
    io.outputs[0] = std::move(out);
    return true;
  }
  template <typename B, typename E>
  static B power(B base, E exponent) {
    if constexpr (is_int_v<B> && is_int_v<E>) {
      // Exact, wrapping exponentiation by squaring. A negative exponent gives the truncated real
      // result: 1 for base 1, +-1 for base -1, otherwise 0.
      if constexpr (std::is_signed_v<E>) {
        if (exponent < 0) {
          if (base == 1) return 1;
          if constexpr (std::is_signed_v<B>)
            if (base == -1) return (exponent % 2 == 0) ? 1 : -1;
          return 0;
        }
      }
      B result = 1;
      auto e = static_cast<std::make_unsigned_t<E>>(exponent);
      while (e) {
        if (e & 1u) result = wrap_mul(result, base);
        base = wrap_mul(base, base);
        e >>= 1;
      }
      return result;
    } else {
      const double r = std::pow(static_cast<double>(base), static_cast<double>(exponent));
      if constexpr (is_int_v<B>)
        return float_to_int<B>(r);
      else
        return static_cast<B>(r);
    }
  }
  NodeDef node_;
};

}  // namespace

// 7: numpy broadcasting; 13 and 14 only widened the type list.
PARITY_KERNEL("Add", 7, BinaryKernel<AddOp>, kAllNumericTypes);
PARITY_KERNEL("Sub", 7, BinaryKernel<SubOp>, kAllNumericTypes);
PARITY_KERNEL("Mul", 7, BinaryKernel<MulOp>, kAllNumericTypes);
PARITY_KERNEL("Div", 7, BinaryKernel<DivOp>, kAllNumericTypes);
// Mod 10; 13 widened types.
PARITY_KERNEL("Mod", 10, BinaryKernel<ModOp>, kAllNumericTypes);
// Pow 7; 12 allowed base and exponent of different (and integer) types: accepted from 7 (a superset).
PARITY_KERNEL("Pow", 7, PowKernel, kAllNumericTypes);
PARITY_KERNEL("BitShift", 11, BinaryKernel<BitShiftOp>,
              {DType::kUInt8, DType::kUInt16, DType::kUInt32, DType::kUInt64});
PARITY_KERNEL("BitwiseAnd", 18, BinaryKernel<BitwiseAndOp>, kIntTypes);
PARITY_KERNEL("BitwiseOr", 18, BinaryKernel<BitwiseOrOp>, kIntTypes);
PARITY_KERNEL("BitwiseXor", 18, BinaryKernel<BitwiseXorOp>, kIntTypes);

}  // namespace parity::refrt
