// Unary math and logic: Neg Abs Sign Reciprocal Sqrt Exp Log, trigonometric and hyperbolic
// functions, Erf Floor Ceil Round, Not BitwiseNot, IsNaN IsInf.
#include <cmath>

#include "../src/vmath.h"
#include "elementwise.h"

namespace parity::refrt {
namespace {

#define PARITY_FLOAT_UNARY(Name, expr) \
  struct Name##Op : FloatOp {          \
    using FloatOp::FloatOp;            \
    template <typename T>              \
    T operator()(T x) const {          \
      return static_cast<T>(expr);     \
    }                                  \
  }

PARITY_FLOAT_UNARY(Sqrt, std::sqrt(x));
PARITY_FLOAT_UNARY(Reciprocal, T(1) / x);
PARITY_FLOAT_UNARY(Exp, std::exp(x));
PARITY_FLOAT_UNARY(Log, std::log(x));
PARITY_FLOAT_UNARY(Sin, std::sin(x));
PARITY_FLOAT_UNARY(Cos, std::cos(x));
PARITY_FLOAT_UNARY(Tan, std::tan(x));
PARITY_FLOAT_UNARY(Asin, std::asin(x));
PARITY_FLOAT_UNARY(Acos, std::acos(x));
PARITY_FLOAT_UNARY(Atan, std::atan(x));
PARITY_FLOAT_UNARY(Sinh, std::sinh(x));
PARITY_FLOAT_UNARY(Cosh, std::cosh(x));
PARITY_FLOAT_UNARY(Asinh, std::asinh(x));
PARITY_FLOAT_UNARY(Acosh, std::acosh(x));
PARITY_FLOAT_UNARY(Atanh, std::atanh(x));
PARITY_FLOAT_UNARY(Tanh, std::tanh(x));
// float32 through vmath::erf (vectorised, within 1.31 ulp): libm's took 8 ns an element.
struct ErfOp : FloatOp {
  using FloatOp::FloatOp;
  template <typename T>
  T operator()(T x) const {
    return static_cast<T>(std::erf(x));
  }
  void span(const float* x, float* y, int64_t n) const { vmath::erf(x, y, n); }
};
PARITY_FLOAT_UNARY(Floor, std::floor(x));
PARITY_FLOAT_UNARY(Ceil, std::ceil(x));
// Halves go to the even neighbour (nearbyint in the default rounding mode), as ONNX and numpy.
PARITY_FLOAT_UNARY(Round, std::nearbyint(x));

struct NegOp {
  explicit NegOp(const NodeDef&) {}
  template <typename T>
  static constexpr bool accepts = is_float_v<T> || is_signed_int_v<T>;
  template <typename T>
  T operator()(T x) const {
    if constexpr (is_int_v<T>)
      return wrap_neg(x);  // -MIN == MIN instead of UB
    else
      return -x;
  }
};
struct AbsOp {
  explicit AbsOp(const NodeDef&) {}
  template <typename T>
  static constexpr bool accepts = is_number_v<T>;
  template <typename T>
  T operator()(T x) const {
    if constexpr (is_int_v<T>)
      return x < T(0) ? wrap_neg(x) : x;
    else
      return std::fabs(x);
  }
};
struct SignOp {
  explicit SignOp(const NodeDef&) {}
  template <typename T>
  static constexpr bool accepts = is_number_v<T>;
  template <typename T>
  T operator()(T x) const {
    if constexpr (is_float_v<T>)
      if (x != x) return x;  // NaN stays NaN
    return static_cast<T>((T(0) < x) - (x < T(0)));
  }
};
struct NotOp {
  explicit NotOp(const NodeDef&) {}
  template <typename T>
  static constexpr bool accepts = std::is_same_v<T, bool>;
  bool operator()(bool x) const { return !x; }
};
struct BitwiseNotOp {
  explicit BitwiseNotOp(const NodeDef&) {}
  template <typename T>
  static constexpr bool accepts = is_int_v<T>;
  template <typename T>
  T operator()(T x) const {
    return static_cast<T>(~x);
  }
};
struct IsNaNOp : FloatOp {
  using FloatOp::FloatOp;
  template <typename T>
  bool operator()(T x) const {
    return x != x;
  }
};
struct IsInfOp : FloatOp {
  explicit IsInfOp(const NodeDef& n)
      : FloatOp(n), negative(n.attr_int("detect_negative", 1) != 0), positive(n.attr_int("detect_positive", 1) != 0) {}
  template <typename T>
  bool operator()(T x) const {
    return std::isinf(x) && (x > 0 ? positive : negative);
  }
  bool negative, positive;
};

}  // namespace

// 6 dropped the legacy `consumed_inputs` attribute; 13 only widened the type lists.
PARITY_KERNEL("Neg", 6, UnaryKernel<NegOp>, kSignedNumericTypes);
PARITY_KERNEL("Abs", 6, UnaryKernel<AbsOp>, kAllNumericTypes);
PARITY_KERNEL("Sqrt", 6, UnaryKernel<SqrtOp>, kFloatTypes16);
PARITY_KERNEL("Reciprocal", 6, UnaryKernel<ReciprocalOp>, kFloatTypes16);
PARITY_KERNEL("Exp", 6, UnaryKernel<ExpOp>, kFloatTypes16);
PARITY_KERNEL("Log", 6, UnaryKernel<LogOp>, kFloatTypes16);
PARITY_KERNEL("Floor", 6, UnaryKernel<FloorOp>, kFloatTypes16);
PARITY_KERNEL("Ceil", 6, UnaryKernel<CeilOp>, kFloatTypes16);
PARITY_KERNEL("Tanh", 6, UnaryKernel<TanhOp>, kFloatTypes16);
PARITY_KERNEL("Sin", 7, UnaryKernel<SinOp>, kFloatTypes16);
PARITY_KERNEL("Cos", 7, UnaryKernel<CosOp>, kFloatTypes16);
PARITY_KERNEL("Tan", 7, UnaryKernel<TanOp>, kFloatTypes16);
PARITY_KERNEL("Asin", 7, UnaryKernel<AsinOp>, kFloatTypes16);
PARITY_KERNEL("Acos", 7, UnaryKernel<AcosOp>, kFloatTypes16);
PARITY_KERNEL("Atan", 7, UnaryKernel<AtanOp>, kFloatTypes16);
PARITY_KERNEL("Sinh", 9, UnaryKernel<SinhOp>, kFloatTypes16);
PARITY_KERNEL("Cosh", 9, UnaryKernel<CoshOp>, kFloatTypes16);
PARITY_KERNEL("Asinh", 9, UnaryKernel<AsinhOp>, kFloatTypes16);
PARITY_KERNEL("Acosh", 9, UnaryKernel<AcoshOp>, kFloatTypes16);
PARITY_KERNEL("Atanh", 9, UnaryKernel<AtanhOp>, kFloatTypes16);
PARITY_KERNEL("Erf", 9, UnaryKernel<ErfOp>, kFloatTypes16);
PARITY_KERNEL("Sign", 9, UnaryKernel<SignOp>, kAllNumericTypes);
PARITY_KERNEL("Round", 11, UnaryKernel<RoundOp>, kFloatTypes16);
PARITY_KERNEL("Not", 1, UnaryKernel<NotOp>, {DType::kBool});
PARITY_KERNEL("BitwiseNot", 18, UnaryKernel<BitwiseNotOp>, kIntTypes);
PARITY_KERNEL("IsNaN", 9, UnaryKernel<IsNaNOp>, kFloatTypes16);
PARITY_KERNEL("IsInf", 10, UnaryKernel<IsInfOp>, kFloatTypes16);

}  // namespace parity::refrt
