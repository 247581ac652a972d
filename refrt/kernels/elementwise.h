// Internal to refrt/kernels: element access, UB-free integer arithmetic and the generic unary /
// binary kernels shared by the elementwise, logic, comparison and activation families.
//
// An op is a small struct: constructed from its node (attributes parsed once), with
//   template <typename T> static constexpr bool accepts = ...;   // which C++ element types it takes
//   R operator()(T x) const  /  R operator()(T a, T b) const       // R = T, or bool for predicates
// float16/bfloat16 run through float32 whenever the op accepts float: block by block for float -> float ops,
// through float32 copies (with_float32) for the others.
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>

#include "../src/broadcast.h"
#include "../src/dispatch.h"

namespace parity::refrt {

inline const std::vector<DType> kIntTypes = {DType::kInt8,  DType::kInt16,  DType::kInt32,  DType::kInt64,
                                             DType::kUInt8, DType::kUInt16, DType::kUInt32, DType::kUInt64};
inline const std::vector<DType> kSignedNumericTypes = {DType::kFloat32,  DType::kFloat64, DType::kFloat16,
                                                       DType::kBFloat16, DType::kInt8,    DType::kInt16,
                                                       DType::kInt32,    DType::kInt64};

// ---- element access: bool is stored as one byte, any non-zero byte is true
template <typename T>
T load(const void* p, int64_t i) {
  if constexpr (std::is_same_v<T, bool>)
    return static_cast<const uint8_t*>(p)[i] != 0;
  else
    return static_cast<const T*>(p)[i];
}
template <typename T>
void store(void* p, int64_t i, T v) {
  if constexpr (std::is_same_v<T, bool>)
    static_cast<uint8_t*>(p)[i] = v ? 1 : 0;
  else
    static_cast<T*>(p)[i] = v;
}

// dispatch_numeric plus bool (as C++ bool, read through load/store).
template <typename Fn>
bool dispatch_with_bool(DType t, Fn&& fn) {
  if (t == DType::kBool) {
    fn(bool{});
    return true;
  }
  return dispatch_numeric(t, fn);
}

template <typename T>
inline constexpr bool is_float_v = std::is_floating_point_v<T>;
template <typename T>
inline constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <typename T>
inline constexpr bool is_signed_int_v = is_int_v<T>&& std::is_signed_v<T>;
template <typename T>
inline constexpr bool is_number_v = is_float_v<T> || is_int_v<T>;

// ---- two's complement wrap-around without UB: 8/16-bit values would be promoted to (signed) int,
// where e.g. uint16 * uint16 can overflow, so compute in an unsigned type at least as wide as int.
template <typename T>
using wide_unsigned_t = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
template <typename T>
T wrap_add(T a, T b) {
  using U = wide_unsigned_t<T>;
  return static_cast<T>(U(a) + U(b));
}
template <typename T>
T wrap_sub(T a, T b) {
  using U = wide_unsigned_t<T>;
  return static_cast<T>(U(a) - U(b));
}
template <typename T>
T wrap_mul(T a, T b) {
  using U = wide_unsigned_t<T>;
  return static_cast<T>(U(a) * U(b));
}
template <typename T>
T wrap_neg(T a) {
  using U = wide_unsigned_t<T>;
  return static_cast<T>(U(0) - U(a));
}

// Arithmetic that wraps for integers and is plain IEEE for floats.
template <typename T>
T add(T a, T b) {
  if constexpr (is_int_v<T>)
    return wrap_add(a, b);
  else
    return a + b;
}
template <typename T>
T sub(T a, T b) {
  if constexpr (is_int_v<T>)
    return wrap_sub(a, b);
  else
    return a - b;
}
template <typename T>
T mul(T a, T b) {
  if constexpr (is_int_v<T>)
    return wrap_mul(a, b);
  else
    return a * b;
}

// Float -> integer by truncation toward zero. Out of range and NaN give what x86 conversion gives
// (and so numpy and ONNX Runtime): int32/int64 minimum; narrower types take the low bits of the
// int32 result; uint32 the low bits of the int64 result; uint64 is exact up to 2^64.
template <typename To, typename From>
To float_to_int(From v) {
  static_assert(is_int_v<To> && is_float_v<From>);
  const double t = std::trunc(static_cast<double>(v));
  auto to_signed = [t](auto zero) {
    using S = decltype(zero);
    const double lo = static_cast<double>(std::numeric_limits<S>::min());  // -2^(bits-1), exact
    return (t >= lo && t < -lo) ? static_cast<S>(t) : std::numeric_limits<S>::min();
  };
  if constexpr (std::is_same_v<To, int64_t>) {
    return to_signed(int64_t{});
  } else if constexpr (std::is_same_v<To, uint64_t>) {
    if (t >= 9223372036854775808.0 && t < 18446744073709551616.0) return static_cast<uint64_t>(t);
    return static_cast<uint64_t>(to_signed(int64_t{}));
  } else if constexpr (std::is_same_v<To, uint32_t>) {
    return static_cast<uint32_t>(to_signed(int64_t{}));
  } else {
    return static_cast<To>(to_signed(int32_t{}));  // modular narrowing (defined since C++20)
  }
}

// NaN-propagating min/max (numpy and ONNX Min/Max: any NaN operand gives NaN).
template <typename T>
T nan_min(T a, T b) {
  if constexpr (is_float_v<T>) {
    if (a != a) return a;
    if (b != b) return b;
  }
  return b < a ? b : a;
}
template <typename T>
T nan_max(T a, T b) {
  if constexpr (is_float_v<T>) {
    if (a != a) return a;
    if (b != b) return b;
  }
  return a < b ? b : a;
}

// The DType of C++ result type R when the input is `in` (R = bool gives kBool).
template <typename R>
DType result_dtype(DType in) {
  return std::is_same_v<R, bool> ? DType::kBool : in;
}

[[noreturn]] inline void fail_dtype(const NodeDef& node, DType t) {
  node.fail("dtype " + dtype_name(t) + " is not supported by " + node.op_type, ErrorKind::kUnsupported);
}

// Base of ops that only take float32/float64 (and float16/bfloat16 through float32).
struct FloatOp {
  explicit FloatOp(const NodeDef&) {}
  template <typename T>
  static constexpr bool accepts = is_float_v<T>;
};

// Whether Op has `void span(const float* x, float* y, int64_t n) const`: a vectorised float32 body
// (vmath) used instead of the per-element operator().
template <typename Op, typename = void>
struct has_float_span : std::false_type {};
template <typename Op>
struct has_float_span<Op, std::void_t<decltype(std::declval<const Op&>().span(
                              static_cast<const float*>(nullptr), static_cast<float*>(nullptr), int64_t{}))>>
    : std::true_type {};

// Op::span through a call whose types depend on the element type, so that a discarded `if constexpr`
// branch never names it for an Op without one (clang checks non-dependent member calls early).
template <typename Op, typename T, typename R>
void call_span(const Op& op, const T* x, R* y, int64_t n) {
  op.span(x, y, n);
}

// float16/bfloat16 elementwise ops run block by block: kHalfBlock elements widened into float32 buffers
// on the stack, computed, rounded once into the output. Materialising float32 copies of whole tensors
// (with_float32) tripled the memory traffic of these memory-bound ops.
inline constexpr int64_t kHalfBlock = 512;

// n elements of a half tensor at stride `stride` (0: one value repeated) into x, as float32.
inline void widen_strided(DType dtype, const uint16_t* p, int64_t stride, float* x, int64_t n) {
  if (stride == 1) return widen_span(dtype, p, x, n);
  const bool half = dtype == DType::kFloat16;
  if (stride == 0) {
    const float v = half ? half_to_float(p[0]) : bf16_to_float(p[0]);
    for (int64_t j = 0; j < n; ++j) x[j] = v;
    return;
  }
  for (int64_t j = 0; j < n; ++j) x[j] = half ? half_to_float(p[j * stride]) : bf16_to_float(p[j * stride]);
}

// Whether Op computes float -> float (Unary) or float, float -> float (Binary): the ops the blocked half
// paths take (predicates keep the float32 copies).
template <typename Op>
constexpr bool unary_float_to_float() {
  if constexpr (Op::template accepts<float>)
    return std::is_same_v<std::invoke_result_t<const Op&, float>, float>;
  else
    return false;
}
template <typename Op>
constexpr bool binary_float_to_float() {
  if constexpr (Op::template accepts<float>)
    return std::is_same_v<std::invoke_result_t<const Op&, float, float>, float>;
  else
    return false;
}

template <typename Op>
class UnaryKernel : public Kernel {
 public:
  explicit UnaryKernel(const NodeDef& node) : node_(node), op_(node_) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    if constexpr (unary_float_to_float<Op>())
      if (is_float16_like(x.dtype())) return half_blocks(io, x);
    if (is_float16_like(x.dtype()) && Op::template accepts<float>)
      return with_float32(io, x.dtype(), [&](KernelIO& f) { compute(f); });
    bool done = false;
    dispatch_with_bool(x.dtype(), [&](auto zero) {
      using T = decltype(zero);
      if constexpr (Op::template accepts<T>) {
        using R = std::invoke_result_t<const Op&, T>;
        Tensor out(result_dtype<R>(x.dtype()), x.shape());
        const void* px = x.raw();
        void* po = out.mutable_raw();
        // Contiguous ranges over the pool (each element depends on its own input only).
        parallel_for(io, x.numel(), 16384, [&](int64_t begin, int64_t end) {
          if constexpr (std::is_same_v<T, float> && std::is_same_v<R, float> && has_float_span<Op>::value) {
            call_span(op_, static_cast<const T*>(px) + begin, static_cast<R*>(po) + begin, end - begin);
          } else {
            for (int64_t i = begin; i < end; ++i) store<R>(po, i, op_(load<T>(px, i)));
          }
        });
        io.outputs[0] = std::move(out);
        done = true;
      }
    });
    if (!done) fail_dtype(node_, x.dtype());
  }

 private:
  void half_blocks(KernelIO& io, const Tensor& x) const {
    Tensor out(x.dtype(), x.shape());
    const auto* px = static_cast<const uint16_t*>(x.raw());
    auto* po = static_cast<uint16_t*>(out.mutable_raw());
    parallel_for(io, x.numel(), 16384, [&](int64_t begin, int64_t end) {
      float a[kHalfBlock], z[kHalfBlock];
      for (int64_t b = begin; b < end; b += kHalfBlock) {
        const int64_t n = std::min(kHalfBlock, end - b);
        widen_span(x.dtype(), px + b, a, n);
        if constexpr (has_float_span<Op>::value)
          call_span(op_, static_cast<const float*>(a), z, n);
        else
          for (int64_t j = 0; j < n; ++j) z[j] = op_(a[j]);
        narrow_span(x.dtype(), z, po + b, n);
      }
    });
    io.outputs[0] = std::move(out);
  }
  NodeDef node_;
  Op op_;  // after node_: ops may keep a pointer to it for errors
};

template <typename Op>
class BinaryKernel : public Kernel {
 public:
  explicit BinaryKernel(const NodeDef& node) : node_(node), op_(node_) {}
  void compute(KernelIO& io) const override {
    const Tensor& a = io.in(0);
    const Tensor& b = io.in(1);
    if (a.dtype() != b.dtype())
      node_.fail("input dtypes differ: " + dtype_name(a.dtype()) + " and " + dtype_name(b.dtype()));
    if constexpr (binary_float_to_float<Op>())
      if (is_float16_like(a.dtype())) return half_runs(io, a, b);
    if (is_float16_like(a.dtype()) && Op::template accepts<float>)
      return with_float32(io, a.dtype(), [&](KernelIO& f) { compute(f); });
    const auto plan = plan_broadcast<2>({&a.shape(), &b.shape()}, node_);
    bool done = false;
    dispatch_with_bool(a.dtype(), [&](auto zero) {
      using T = decltype(zero);
      if constexpr (Op::template accepts<T>) {
        using R = std::invoke_result_t<const Op&, T, T>;
        Tensor out(result_dtype<R>(a.dtype()), plan.out);
        const void* pa = a.raw();
        const void* pb = b.raw();
        void* po = out.mutable_raw();
        if constexpr (is_float_v<T> && std::is_same_v<R, T>) {  // runs with fixed strides: vectorisable loops
          float_runs<T>(io, plan, static_cast<const T*>(pa), static_cast<const T*>(pb), static_cast<T*>(po));
        } else {
          for_each_broadcast(plan, [&](int64_t o, const std::array<int64_t, 2>& i) {
            store<R>(po, o, op_(load<T>(pa, i[0]), load<T>(pb, i[1])));
          });
        }
        io.outputs[0] = std::move(out);
        done = true;
      }
    });
    if (!done) fail_dtype(node_, a.dtype());
  }

 private:
  // float16/bfloat16: float_runs' runs, each in blocks widened on the stack and rounded once.
  void half_runs(KernelIO& io, const Tensor& a, const Tensor& b) const {
    const auto plan = plan_broadcast<2>({&a.shape(), &b.shape()}, node_);
    Tensor out(a.dtype(), plan.out);
    const DType dt = a.dtype();
    const auto* pa = static_cast<const uint16_t*>(a.raw());
    const auto* pb = static_cast<const uint16_t*>(b.raw());
    auto* po = static_cast<uint16_t*>(out.mutable_raw());
    parallel_for(io, plan.numel, 16384, [&](int64_t begin, int64_t end) {
      float x[kHalfBlock], y[kHalfBlock], z[kHalfBlock];
      for_each_broadcast_run(
          plan, begin, end,
          [&](int64_t o, const std::array<int64_t, 2>& i, int64_t len, const std::array<int64_t, 2>& s) {
            for (int64_t j0 = 0; j0 < len; j0 += kHalfBlock) {
              const int64_t n = std::min(kHalfBlock, len - j0);
              widen_strided(dt, pa + i[0] + j0 * s[0], s[0], x, n);
              widen_strided(dt, pb + i[1] + j0 * s[1], s[1], y, n);
              for (int64_t j = 0; j < n; ++j) z[j] = op_(x[j], y[j]);
              narrow_span(dt, z, po + o + j0, n);
            }
          });
    });
    io.outputs[0] = std::move(out);
  }
  // Output ranges over the pool (each element depends on its own inputs only), each range as runs in
  // which both operands move by fixed strides.
  template <typename T>
  void float_runs(const KernelIO& io, const BroadcastPlan<2>& plan, const T* ta, const T* tb, T* to) const {
    parallel_for(io, plan.numel, 16384, [&](int64_t begin, int64_t end) {
      for_each_broadcast_run(
          plan, begin, end,
          [&](int64_t o, const std::array<int64_t, 2>& i, int64_t len, const std::array<int64_t, 2>& s) {
            const T* x = ta + i[0];
            const T* y = tb + i[1];
            T* z = to + o;
            if (s[0] == 1 && s[1] == 1)
              for (int64_t j = 0; j < len; ++j) z[j] = op_(x[j], y[j]);
            else if (s[0] == 1 && s[1] == 0)
              for (int64_t j = 0; j < len; ++j) z[j] = op_(x[j], y[0]);
            else if (s[0] == 0 && s[1] == 1)
              for (int64_t j = 0; j < len; ++j) z[j] = op_(x[0], y[j]);
            else
              for (int64_t j = 0; j < len; ++j) z[j] = op_(x[j * s[0]], y[j * s[1]]);
          });
    });
  }
  NodeDef node_;
  Op op_;
};

}  // namespace parity::refrt
