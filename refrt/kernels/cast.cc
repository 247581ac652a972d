// Cast and CastLike among float32/64, float16, bfloat16, int8/16/32/64, uint8/16/32/64 and bool.
// Float -> int truncates toward zero; NaN and out-of-range values follow float_to_int (x86, numpy and
// ONNX Runtime agree) instead of C++ undefined behaviour. float16/bfloat16 convert through float32
// (round to nearest even); float8 and string are not supported.
#include <cmath>
#include <cstring>
#include <limits>

#include "elementwise.h"

namespace parity::refrt {
namespace {

const std::vector<DType> kCastTypes = kAllTypes;

bool castable(DType t) {
  for (DType c : kCastTypes)
    if (c == t) return true;
  return false;
}

// Storage wrappers for the 16-bit floats.
struct Half {
  uint16_t bits;
};
struct BFloat {
  uint16_t bits;
};

template <typename T>
inline constexpr bool is_half_like_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat>;

// double -> float rounded to odd (truncate, then set the last bit if anything was dropped). Rounding
// that to float16/bfloat16 (>= 2 bits narrower) to nearest even equals rounding the double directly,
// which a plain double -> float -> half would not (double rounding at ties).
inline float to_float_round_odd(double d) {
  float f = static_cast<float>(d);
  if (!std::isfinite(f) || static_cast<double>(f) == d) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits |= 1u;
  std::memcpy(&f, &bits, 4);
  return f;
}

// A value on its way to float16/bfloat16, as float32 that rounds correctly (see above).
template <typename From>
float to_float_for_half(From v) {
  if constexpr (std::is_same_v<From, float> || std::is_same_v<From, bool>)
    return static_cast<float>(v);
  else
    return to_float_round_odd(static_cast<double>(v));  // ints above 2^53 round once more (documented)
}

template <typename To, typename From>
To convert(From v) {
  if constexpr (std::is_same_v<From, Half>) {
    return convert<To>(half_to_float(v.bits));
  } else if constexpr (std::is_same_v<From, BFloat>) {
    return convert<To>(bf16_to_float(v.bits));
  } else if constexpr (std::is_same_v<To, Half>) {
    return Half{float_to_half(to_float_for_half(v))};
  } else if constexpr (std::is_same_v<To, BFloat>) {
    return BFloat{float_to_bf16(to_float_for_half(v))};
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);  // NaN != 0: true
  } else if constexpr (is_float_v<From> && is_int_v<To>) {
    return float_to_int<To>(v);
  } else if constexpr (std::is_same_v<From, double> && std::is_same_v<To, float>) {
    // IEEE overflow threshold of round-to-nearest: beyond it the result is +-inf.
    static const double overflow = std::ldexp(1.0, 128) - std::ldexp(1.0, 103);
    constexpr float inf = std::numeric_limits<float>::infinity();
    if (std::fabs(v) >= overflow) return v > 0 ? inf : -inf;  // NaN fails the test and stays NaN below
    return static_cast<float>(v);
  } else {
    return static_cast<To>(v);  // widening, int -> float, bool -> number, int narrowing (modular since C++20)
  }
}

template <typename To, typename From>
void convert_all(const Tensor& x, Tensor& out) {
  const void* src = x.raw();
  void* dst = out.mutable_raw();
  for (int64_t i = 0; i < x.numel(); ++i) {
    if constexpr (std::is_same_v<From, bool>) {
      store<To>(dst, i, convert<To>(load<bool>(src, i)));
    } else if constexpr (std::is_same_v<To, bool>) {
      store<bool>(dst, i, convert<bool>(static_cast<const From*>(src)[i]));
    } else {
      static_cast<To*>(dst)[i] = convert<To>(static_cast<const From*>(src)[i]);
    }
  }
}

// Calls fn(T{}) for every cast dtype, 16-bit floats as Half/BFloat.
template <typename Fn>
void dispatch_cast(DType t, Fn&& fn) {
  switch (t) {
    case DType::kFloat16:
      return fn(Half{});
    case DType::kBFloat16:
      return fn(BFloat{});
    default:
      dispatch_with_bool(t, fn);
  }
}

class CastKernel : public Kernel {
 public:
  // Cast: the target is the `to` attribute; CastLike: the dtype of input 1, known at run.
  explicit CastKernel(const NodeDef& node) : node_(node), like_(node.op_type == "CastLike") {
    if (like_) return;
    if (!node.attr("to", Attribute::Type::kInt)) node.fail("missing required attribute 'to'");
    to_ = static_cast<DType>(node.attr_int("to", 0));
    if (!castable(to_))
      node.fail("cast to " + dtype_name(to_) + " is not supported (float8, string and complex are not)",
                ErrorKind::kUnsupported);
  }
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    const DType to = like_ ? io.in(1).dtype() : to_;
    if (!castable(x.dtype()))
      node_.fail("cast from " + dtype_name(x.dtype()) + " is not supported", ErrorKind::kUnsupported);
    if (!castable(to)) node_.fail("cast to " + dtype_name(to) + " is not supported", ErrorKind::kUnsupported);
    if (x.dtype() == to) {
      io.outputs[0] = x;
      return;
    }
    // float16 / bfloat16 <-> float32, the casts around a half model's float32 islands (RMSNorm, softmax): the
    // vectorised conversions every half kernel uses, over the pool (the same values: widening is exact, narrowing
    // rounds float32 to nearest even once, as below; a scalar loop took 0.25 ms for a [512, 512] activation).
    if (x.dtype() == DType::kFloat32 && is_float16_like(to)) {
      io.outputs[0] = narrow_from_float32(x, to, &io);
      return;
    }
    if (is_float16_like(x.dtype()) && to == DType::kFloat32) {
      io.outputs[0] = widen_to_float32(x, &io);
      return;
    }
    Tensor out(to, x.shape());
    dispatch_cast(to, [&](auto to_zero) {
      dispatch_cast(x.dtype(), [&](auto from_zero) { convert_all<decltype(to_zero), decltype(from_zero)>(x, out); });
    });
    io.outputs[0] = std::move(out);
  }

 private:
  NodeDef node_;
  bool like_;
  DType to_ = DType::kUndefined;
};

}  // namespace

// Cast 6: `to` is an int dtype; 9, 13, 19 (saturate, float8 only), 21 and 23 only widened types.
PARITY_KERNEL("Cast", 6, CastKernel, kCastTypes);
// CastLike 15: target dtype from input 1; 19 and 21 widened types.
PARITY_KERNEL("CastLike", 15, CastKernel, kCastTypes);

}  // namespace parity::refrt
