// Cast among float32, float64, int32, int64 and bool.
// Float -> int truncates toward zero; NaN and out-of-range values give the integer minimum (what x86
// hardware, numpy and ONNX Runtime produce) instead of C++ undefined behaviour.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "../src/kernel.h"

namespace parity::refrt {
namespace {

const std::vector<DType> kCastTypes = {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64, DType::kBool};

bool castable(DType t) {
  for (DType c : kCastTypes)
    if (c == t) return true;
  return false;
}

struct BoolByte {  // storage of bool: one byte, non-zero = true
  uint8_t v;
};

template <typename To, typename From>
To convert(From v) {
  if constexpr (std::is_same_v<From, BoolByte>) {
    return static_cast<To>(v.v != 0 ? 1 : 0);
  } else if constexpr (std::is_same_v<To, BoolByte>) {
    return BoolByte{static_cast<uint8_t>(v != From(0) ? 1 : 0)};  // NaN != 0: true
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    const From t = std::trunc(v);
    const From lo = static_cast<From>(std::numeric_limits<To>::min());  // -2^(bits-1), exact
    if (!(t >= lo && t < -lo)) return std::numeric_limits<To>::min();
    return static_cast<To>(t);
  } else if constexpr (std::is_same_v<From, double> && std::is_same_v<To, float>) {
    // IEEE overflow threshold of round-to-nearest: beyond it the result is +-inf.
    static const double overflow = std::ldexp(1.0, 128) - std::ldexp(1.0, 103);
    constexpr float inf = std::numeric_limits<float>::infinity();
    if (std::fabs(v) >= overflow) return v > 0 ? inf : -inf;  // NaN fails the test and stays NaN below
    return static_cast<float>(v);
  } else {
    return static_cast<To>(v);  // widening, int -> float, or int narrowing (modular since C++20)
  }
}

template <typename To, typename From>
void convert_all(const Tensor& x, Tensor& out) {
  const From* src = static_cast<const From*>(x.raw());
  To* dst = static_cast<To*>(out.mutable_raw());
  for (int64_t i = 0; i < x.numel(); ++i) dst[i] = convert<To>(src[i]);
}

template <typename To>
void convert_from(const Tensor& x, Tensor& out) {
  switch (x.dtype()) {
    case DType::kFloat32: return convert_all<To, float>(x, out);
    case DType::kFloat64: return convert_all<To, double>(x, out);
    case DType::kInt32: return convert_all<To, int32_t>(x, out);
    case DType::kInt64: return convert_all<To, int64_t>(x, out);
    case DType::kBool: return convert_all<To, BoolByte>(x, out);
    default: break;
  }
}

class CastKernel : public Kernel {
 public:
  explicit CastKernel(const NodeDef& node) : node_(node), to_(static_cast<DType>(node.attr_int("to", 0))) {
    if (!node.attr("to")) node.fail("missing required attribute 'to'");
    if (!castable(to_))
      node.fail("cast to " + dtype_name(to_) + " is not implemented (float32, float64, int32, int64, bool are)",
                ErrorKind::kUnsupported);
  }
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    if (!castable(x.dtype()))
      node_.fail("cast from " + dtype_name(x.dtype()) + " is not implemented", ErrorKind::kUnsupported);
    if (x.dtype() == to_) {
      io.outputs[0] = x;
      return;
    }
    Tensor out(to_, x.shape());
    switch (to_) {
      case DType::kFloat32: convert_from<float>(x, out); break;
      case DType::kFloat64: convert_from<double>(x, out); break;
      case DType::kInt32: convert_from<int32_t>(x, out); break;
      case DType::kInt64: convert_from<int64_t>(x, out); break;
      default: convert_from<BoolByte>(x, out); break;
    }
    io.outputs[0] = std::move(out);
  }

 private:
  NodeDef node_;
  DType to_;
};

}  // namespace

// Cast 6: `to` is an int dtype; 9, 13, 19 (saturate, float8 only) and later only widened types.
PARITY_KERNEL("Cast", 6, CastKernel, kCastTypes);

}  // namespace parity::refrt
