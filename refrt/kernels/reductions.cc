// Reductions: ReduceSum ReduceMean ReduceMax ReduceMin ReduceProd ReduceL1 ReduceL2 ReduceLogSum
// ReduceLogSumExp ReduceSumSquare.
//
// Axes are the `axes` attribute before opset 18 (ReduceSum: 13) and the optional second input from
// then on. No axes reduces everything, unless noop_with_empty_axes=1 (input-axes versions): then no
// axis is reduced. Reducing an empty set gives the identity: 0 for sums, 1 for Prod, -inf/+inf
// (integers: lowest/highest value) for Max/Min, -inf for LogSum and LogSumExp, NaN for a float Mean.
// Floats accumulate in double; integers wrap in their own type (as ONNX Runtime).
#include <cmath>
#include <limits>

#include "elementwise.h"

namespace parity::refrt {
namespace {

enum class Reduce { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

template <Reduce R, typename T>
using acc_t = std::conditional_t<is_float_v<T> || R == Reduce::kLogSumExp, double, T>;

template <Reduce R, typename T>
acc_t<R, T> identity() {
  using A = acc_t<R, T>;
  if constexpr (R == Reduce::kProd) return A(1);
  if constexpr (R == Reduce::kMax)
    return is_float_v<A> ? -std::numeric_limits<A>::infinity() : std::numeric_limits<A>::lowest();
  if constexpr (R == Reduce::kMin)
    return is_float_v<A> ? std::numeric_limits<A>::infinity() : std::numeric_limits<A>::max();
  return A(0);
}

template <Reduce R, typename A>
A step(A acc, A x) {
  if constexpr (R == Reduce::kMax)
    return nan_max(acc, x);
  else if constexpr (R == Reduce::kMin)
    return nan_min(acc, x);
  else if constexpr (R == Reduce::kProd)
    return mul(acc, x);
  else if constexpr (R == Reduce::kL1 && is_float_v<A>)
    return acc + std::fabs(x);
  else if constexpr (R == Reduce::kL1)
    return add(acc, x < A(0) ? wrap_neg(x) : x);
  else if constexpr (R == Reduce::kL2 || R == Reduce::kSumSquare)
    return add(acc, mul(x, x));
  else
    return add(acc, x);
}

template <typename T>
T from_double(double v) {
  if constexpr (is_int_v<T>)
    return float_to_int<T>(v);
  else
    return static_cast<T>(v);
}

template <Reduce R>
class ReduceKernel : public Kernel {
 public:
  explicit ReduceKernel(const NodeDef& node)
      : node_(node),
        axes_from_input_(node.opset >= (R == Reduce::kSum ? 13 : 18)),
        keepdims_(node.attr_int("keepdims", 1) != 0),
        noop_with_empty_axes_(node.attr_int("noop_with_empty_axes", 0) != 0),
        attr_axes_(node.attr_ints("axes")) {
    if (axes_from_input_ && node.attr("axes")) node.fail("'axes' is an input from this opset on, not an attribute");
  }

  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    if (is_float16_like(x.dtype())) return with_float32(io, x.dtype(), [&](KernelIO& f) { compute(f); });
    std::vector<int64_t> axes = attr_axes_;
    if (axes_from_input_) {
      const Tensor* t = io.optional(1);
      axes = t ? int64_values(*t, "axes") : std::vector<int64_t>{};
    }
    // No axes: reduce everything, or (noop) nothing — each element is then its own one-element set,
    // so ReduceL1 gives |x| and ReduceLogSum log(x), as the ONNX reference does.
    const bool reduce_all = axes.empty() && !(axes_from_input_ && noop_with_empty_axes_);
    const int64_t rank = static_cast<int64_t>(x.rank());
    std::vector<bool> reduced(x.rank(), reduce_all);
    for (int64_t a : axes) {
      const size_t d = static_cast<size_t>(normalize_axis(a, rank, "axes"));
      if (reduced[d]) node_.fail("axis " + std::to_string(a) + " is listed twice");
      reduced[d] = true;
    }
    Shape out_shape;
    int64_t count = 1;
    for (size_t d = 0; d < x.rank(); ++d) {
      if (!reduced[d])
        out_shape.push_back(x.dim(d));
      else if (keepdims_)
        out_shape.push_back(1);
      if (reduced[d]) count *= x.dim(d);
    }
    // Element stride in the output of each input dim (0 where reduced).
    std::vector<int64_t> out_stride(x.rank(), 0);
    for (int64_t d = rank - 1, stride = 1; d >= 0; --d)
      if (!reduced[static_cast<size_t>(d)]) {
        out_stride[static_cast<size_t>(d)] = stride;
        stride *= x.dim(static_cast<size_t>(d));
      }
    bool done = false;
    dispatch_with_bool(x.dtype(), [&](auto zero) {
      using T = decltype(zero);
      if constexpr (is_number_v<T> || (std::is_same_v<T, bool> && (R == Reduce::kMax || R == Reduce::kMin))) {
        io.outputs[0] = reduce<T>(x, out_shape, out_stride, count);
        done = true;
      }
    });
    if (!done) fail_dtype(node_, x.dtype());
  }

 private:
  // Calls f(out_offset, x_i) for every element of x in row-major order.
  template <typename T, typename F>
  static void for_each_element(const Tensor& x, const std::vector<int64_t>& out_stride, F&& f) {
    const void* px = x.raw();
    std::vector<int64_t> index(x.rank(), 0);
    int64_t off = 0;
    for (int64_t i = 0; i < x.numel(); ++i) {
      f(off, load<T>(px, i));
      for (size_t d = x.rank(); d-- > 0;) {
        off += out_stride[d];
        if (++index[d] < x.dim(d)) break;
        off -= out_stride[d] * x.dim(d);
        index[d] = 0;
      }
    }
  }

  template <typename T>
  Tensor reduce(const Tensor& x, const Shape& out_shape, const std::vector<int64_t>& out_stride, int64_t count) const {
    using A = acc_t<R, T>;
    Tensor out(x.dtype(), out_shape);
    const int64_t n = out.numel();
    void* po = out.mutable_raw();
    std::vector<A> acc(static_cast<size_t>(n), identity<R, T>());
    if constexpr (R == Reduce::kLogSumExp) {
      // log(sum(exp(x - max))) + max: exp never overflows. An infinite or NaN max is the answer.
      std::vector<A> max(static_cast<size_t>(n), -std::numeric_limits<A>::infinity());
      for_each_element<T>(x, out_stride, [&](int64_t o, T v) { max[size_t(o)] = nan_max(max[size_t(o)], A(v)); });
      for_each_element<T>(x, out_stride, [&](int64_t o, T v) {
        if (std::isfinite(max[size_t(o)])) acc[size_t(o)] += std::exp(A(v) - max[size_t(o)]);
      });
      for (int64_t o = 0; o < n; ++o) {
        const A m = max[size_t(o)];
        store<T>(po, o, from_double<T>(std::isfinite(m) ? std::log(acc[size_t(o)]) + m : m));
      }
      return out;
    } else {
      // Reduced dims all trailing (global pooling, last-axis statistics): each output reads one
      // contiguous run (float sums in four double partial sums, the rest in visiting order).
      bool trailing = n > 0 && count > 0 && n * count == x.numel();
      for (size_t d = 1; trailing && d < x.rank(); ++d) trailing = !(out_stride[d - 1] == 0 && out_stride[d] != 0);
      if (trailing && !std::is_same_v<T, bool>) {
        const void* px = x.raw();
        for (int64_t o = 0; o < n; ++o) {
          if constexpr ((R == Reduce::kSum || R == Reduce::kMean) && is_float_v<T>) {
            // Four double partial sums: independent adds instead of one dependency chain.
            const T* row = static_cast<const T*>(px) + o * count;
            double part[4] = {0, 0, 0, 0};
            int64_t j = 0;
            for (; j + 4 <= count; j += 4)
              for (int k = 0; k < 4; ++k) part[k] += static_cast<double>(row[j + k]);
            double a = (part[0] + part[1]) + (part[2] + part[3]);
            for (; j < count; ++j) a += static_cast<double>(row[j]);
            acc[size_t(o)] = a;
          } else {
            A a = identity<R, T>();
            for (int64_t j = o * count, e = j + count; j < e; ++j) a = step<R, A>(a, A(load<T>(px, j)));
            acc[size_t(o)] = a;
          }
        }
      } else {
        for_each_element<T>(x, out_stride, [&](int64_t o, T v) { acc[size_t(o)] = step<R, A>(acc[size_t(o)], A(v)); });
      }
      if (R == Reduce::kMean && count == 0 && !is_float_v<A> && n > 0)
        node_.fail("ReduceMean of an empty set is undefined for integer inputs");
      for (int64_t o = 0; o < n; ++o) {
        const A a = acc[size_t(o)];
        if constexpr (R == Reduce::kMean) {
          if constexpr (is_float_v<A>)
            store<T>(po, o, static_cast<T>(a / static_cast<double>(count)));
          else if constexpr (std::is_signed_v<A>)
            store<T>(po, o, static_cast<T>(static_cast<int64_t>(a) / count));
          else
            store<T>(po, o, static_cast<T>(static_cast<uint64_t>(a) / static_cast<uint64_t>(count)));
        } else if constexpr (R == Reduce::kL2) {
          store<T>(po, o, from_double<T>(std::sqrt(static_cast<double>(a))));
        } else if constexpr (R == Reduce::kLogSum) {
          store<T>(po, o, from_double<T>(std::log(static_cast<double>(a))));
        } else {
          store<T>(po, o, static_cast<T>(a));
        }
      }
      return out;
    }
  }

  NodeDef node_;
  bool axes_from_input_, keepdims_, noop_with_empty_axes_;
  std::vector<int64_t> attr_axes_;
};

}  // namespace

// 1 (11 allowed negative axes: accepted from 1): `axes` attribute; ReduceSum 13 and the others 18:
// `axes` input and noop_with_empty_axes. Max/Min 20 added bool.
PARITY_KERNEL("ReduceSum", 1, ReduceKernel<Reduce::kSum>, kAllNumericTypes);
PARITY_KERNEL("ReduceSum", 13, ReduceKernel<Reduce::kSum>, kAllNumericTypes);
PARITY_KERNEL("ReduceMean", 1, ReduceKernel<Reduce::kMean>, kAllNumericTypes);
PARITY_KERNEL("ReduceMean", 18, ReduceKernel<Reduce::kMean>, kAllNumericTypes);
PARITY_KERNEL("ReduceMax", 1, ReduceKernel<Reduce::kMax>, kAllNumericTypes);
PARITY_KERNEL("ReduceMax", 18, ReduceKernel<Reduce::kMax>, kAllNumericTypes);
PARITY_KERNEL("ReduceMin", 1, ReduceKernel<Reduce::kMin>, kAllNumericTypes);
PARITY_KERNEL("ReduceMin", 18, ReduceKernel<Reduce::kMin>, kAllNumericTypes);
PARITY_KERNEL("ReduceProd", 1, ReduceKernel<Reduce::kProd>, kAllNumericTypes);
PARITY_KERNEL("ReduceProd", 18, ReduceKernel<Reduce::kProd>, kAllNumericTypes);
PARITY_KERNEL("ReduceL1", 1, ReduceKernel<Reduce::kL1>, kAllNumericTypes);
PARITY_KERNEL("ReduceL1", 18, ReduceKernel<Reduce::kL1>, kAllNumericTypes);
PARITY_KERNEL("ReduceL2", 1, ReduceKernel<Reduce::kL2>, kAllNumericTypes);
PARITY_KERNEL("ReduceL2", 18, ReduceKernel<Reduce::kL2>, kAllNumericTypes);
PARITY_KERNEL("ReduceLogSum", 1, ReduceKernel<Reduce::kLogSum>, kAllNumericTypes);
PARITY_KERNEL("ReduceLogSum", 18, ReduceKernel<Reduce::kLogSum>, kAllNumericTypes);
PARITY_KERNEL("ReduceLogSumExp", 1, ReduceKernel<Reduce::kLogSumExp>, kAllNumericTypes);
PARITY_KERNEL("ReduceLogSumExp", 18, ReduceKernel<Reduce::kLogSumExp>, kAllNumericTypes);
PARITY_KERNEL("ReduceSumSquare", 1, ReduceKernel<Reduce::kSumSquare>, kAllNumericTypes);
PARITY_KERNEL("ReduceSumSquare", 18, ReduceKernel<Reduce::kSumSquare>, kAllNumericTypes);

}  // namespace parity::refrt
