// Activations: Relu LeakyRelu PRelu Elu Selu Celu Gelu Sigmoid HardSigmoid HardSwish Softplus
// Softsign Mish ThresholdedRelu Shrink. Attributes are read once, as float (ONNX stores them so).
#include <algorithm>
#include <cmath>
#include <string>

#include "../src/vmath.h"
#include "elementwise.h"

namespace parity::refrt {
namespace {

// A float op with one float attribute `alpha` (default given per op).
struct AlphaOp : FloatOp {
  AlphaOp(const NodeDef& n, float fallback) : FloatOp(n), alpha(n.attr_float("alpha", fallback)) {}
  float alpha;
};

struct ReluOp {
  explicit ReluOp(const NodeDef&) {}
  template <typename T>
  static constexpr bool accepts = is_float_v<T> || is_signed_int_v<T>;
  template <typename T>
  T operator()(T x) const {
    return x < T(0) ? T(0) : x;
  }  // NaN stays NaN
};
struct LeakyReluOp : AlphaOp {
  explicit LeakyReluOp(const NodeDef& n) : AlphaOp(n, 0.01f) {}
  template <typename T>
  T operator()(T x) const {
    return x < T(0) ? static_cast<T>(alpha) * x : x;
  }
};
struct EluOp : AlphaOp {
  explicit EluOp(const NodeDef& n) : AlphaOp(n, 1.0f) {}
  template <typename T>
  T operator()(T x) const {
    return x < T(0) ? static_cast<T>(alpha) * std::expm1(x) : x;
  }
};
struct CeluOp : AlphaOp {
  explicit CeluOp(const NodeDef& n) : AlphaOp(n, 1.0f) {
    if (alpha == 0) n.fail("attribute 'alpha' must not be 0");
  }
  template <typename T>
  T operator()(T x) const {
    const T a = static_cast<T>(alpha);
    return x < T(0) ? a * std::expm1(x / a) : x;
  }
};
struct SeluOp : FloatOp {
  explicit SeluOp(const NodeDef& n)
      : FloatOp(n),
        alpha(n.attr_float("alpha", 1.67326319217681884765625f)),
        gamma(n.attr_float("gamma", 1.05070102214813232421875f)) {}
  template <typename T>
  T operator()(T x) const {
    return static_cast<T>(gamma) * (x > T(0) ? x : static_cast<T>(alpha) * std::expm1(x));
  }
  float alpha, gamma;
};
struct ThresholdedReluOp : AlphaOp {
  explicit ThresholdedReluOp(const NodeDef& n) : AlphaOp(n, 1.0f) {}
  template <typename T>
  T operator()(T x) const {
    return x > static_cast<T>(alpha) ? x : T(0);
  }
};
struct SigmoidOp : FloatOp {
  using FloatOp::FloatOp;
  // float32: vmath's vectorised sigmoid (the same split by sign, its exp within 2 ulp).
  void span(const float* x, float* y, int64_t n) const {
    std::copy(x, x + n, y);
    vmath::sigmoid(y, n);
  }
  // Split by sign so that exp never overflows.
  template <typename T>
  T operator()(T x) const {
    if (x >= T(0)) return T(1) / (T(1) + std::exp(-x));
    const T e = std::exp(x);
    return e / (T(1) + e);
  }
};
struct HardSigmoidOp : FloatOp {
  explicit HardSigmoidOp(const NodeDef& n)
      : FloatOp(n), alpha(n.attr_float("alpha", 0.2f)), beta(n.attr_float("beta", 0.5f)) {}
  template <typename T>
  T operator()(T x) const {
    const T v = static_cast<T>(alpha) * x + static_cast<T>(beta);
    return v > T(1) ? T(1) : (v < T(0) ? T(0) : v);
  }
  float alpha, beta;
};
// The spec defines HardSwish as x * HardSigmoid(x) with alpha = 1/6 as a float attribute, so a
// float64 input sees float32(1/6), as in ONNX Runtime.
struct HardSwishOp : FloatOp {
  using FloatOp::FloatOp;
  template <typename T>
  T operator()(T x) const {
    const T v = static_cast<T>(1.0f / 6.0f) * x + T(0.5);
    return x * (v > T(1) ? T(1) : (v < T(0) ? T(0) : v));
  }
};
// log(1 + e^x) without overflow for large x.
template <typename T>
T softplus(T x) {
  return x > T(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}
struct SoftplusOp : FloatOp {
  using FloatOp::FloatOp;
  template <typename T>
  T operator()(T x) const {
    return softplus(x);
  }
};
struct SoftsignOp : FloatOp {
  using FloatOp::FloatOp;
  template <typename T>
  T operator()(T x) const {
    return x / (T(1) + std::fabs(x));
  }
};
struct MishOp : FloatOp {
  using FloatOp::FloatOp;
  template <typename T>
  T operator()(T x) const {
    return x * std::tanh(softplus(x));
  }
};
struct GeluOp : FloatOp {
  explicit GeluOp(const NodeDef& n) : FloatOp(n) {
    const Attribute* a = n.attr("approximate", Attribute::Type::kString);
    if (a && a->s != "none" && a->s != "tanh")
      n.fail("attribute 'approximate' must be \"none\" or \"tanh\", got \"" + a->s + "\"");
    tanh_approximation = a && a->s == "tanh";
  }
  // A standalone Gelu computes in double (correctly rounded float32 results: tests/python/test_qdq_islands.py
  // holds refrt to that); after a product it is the product's epilogue instead (optimize/activation_match.cc).
  template <typename T>
  T operator()(T x) const {
    if (tanh_approximation) {
      const double inner = std::sqrt(2.0 / M_PI) * (x + 0.044715 * double(x) * x * x);
      return static_cast<T>(0.5 * x * (1.0 + std::tanh(inner)));
    }
    return static_cast<T>(0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))));
  }
  bool tanh_approximation = false;
};

// Shrink: x + bias below -lambd, x - bias above lambd, 0 between (computed in double, integers
// converted back without UB).
struct ShrinkOp {
  explicit ShrinkOp(const NodeDef& n) : bias(n.attr_float("bias", 0.0f)), lambd(n.attr_float("lambd", 0.5f)) {}
  template <typename T>
  static constexpr bool accepts = is_number_v<T>;
  template <typename T>
  T operator()(T x) const {
    const double v = static_cast<double>(x);
    const double y = v < -double(lambd) ? v + double(bias) : (v > double(lambd) ? v - double(bias) : 0.0);
    if constexpr (is_int_v<T>)
      return float_to_int<T>(y);
    else
      return static_cast<T>(y);
  }
  float bias, lambd;
};

// PRelu: y = x < 0 ? slope * x : x, slope broadcast to x.
struct PReluOp {
  explicit PReluOp(const NodeDef&) {}
  template <typename T>
  static constexpr bool accepts = is_number_v<T>;
  template <typename T>
  T operator()(T x, T slope) const {
    return x < T(0) ? mul(slope, x) : x;
  }
};

// PRelu broadcasts the slope to X only (unidirectional): the output always has X's shape.
class PReluKernel : public BinaryKernel<PReluOp> {
 public:
  explicit PReluKernel(const NodeDef& node) : BinaryKernel<PReluOp>(node), node_(node) {}
  void compute(KernelIO& io) const override {
    const Shape& x = io.in(0).shape();
    const Shape& slope = io.in(1).shape();
    if (broadcast_shapes(x, slope, &node_) != x)
      node_.fail("slope of shape " + shape_str(slope) + " does not broadcast to X of shape " + shape_str(x));
    BinaryKernel<PReluOp>::compute(io);
  }

 private:
  NodeDef node_;
};

}  // namespace

// Relu 6 (14 added signed integers; accepted from 6). Others: the since-version of their current
// semantics; later versions only widened types.
PARITY_KERNEL("Relu", 6, UnaryKernel<ReluOp>, kSignedNumericTypes);
PARITY_KERNEL("LeakyRelu", 6, UnaryKernel<LeakyReluOp>, kFloatTypes16);
PARITY_KERNEL("Elu", 6, UnaryKernel<EluOp>, kFloatTypes16);
PARITY_KERNEL("Selu", 6, UnaryKernel<SeluOp>, kFloatTypes16);
PARITY_KERNEL("Celu", 12, UnaryKernel<CeluOp>, kFloatTypes16);
PARITY_KERNEL("ThresholdedRelu", 10, UnaryKernel<ThresholdedReluOp>, kFloatTypes16);
PARITY_KERNEL("Sigmoid", 6, UnaryKernel<SigmoidOp>, kFloatTypes16);
PARITY_KERNEL("HardSigmoid", 6, UnaryKernel<HardSigmoidOp>, kFloatTypes16);
PARITY_KERNEL("HardSwish", 14, UnaryKernel<HardSwishOp>, kFloatTypes16);
PARITY_KERNEL("Softplus", 1, UnaryKernel<SoftplusOp>, kFloatTypes16);
PARITY_KERNEL("Softsign", 1, UnaryKernel<SoftsignOp>, kFloatTypes16);
PARITY_KERNEL("Mish", 18, UnaryKernel<MishOp>, kFloatTypes16);
PARITY_KERNEL("Gelu", 20, UnaryKernel<GeluOp>, kFloatTypes16);
PARITY_KERNEL("Shrink", 9, UnaryKernel<ShrinkOp>, kAllNumericTypes);
// PRelu 7: slope broadcast to x (numpy rules); 9 added integer types.
PARITY_KERNEL("PRelu", 7, PReluKernel, kAllNumericTypes);

}  // namespace parity::refrt
