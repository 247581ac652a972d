// ArgMax, ArgMin (select_last_index picks the last of tied extremes, else the first) and TopK
// (ties: the lower index first). NaN: ArgMax/ArgMin return the first NaN (it propagates, as numpy's
// and torch's argmax/argmin); TopK orders NaN above every number (as numpy's sort, torch.topk and
// ONNX Runtime), so it leads with largest=1 and trails with largest=0. Both keep the comparator a
// strict weak order.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "elementwise.h"

namespace parity::refrt {
namespace {

template <typename T>
bool is_nan(T v) {
  if constexpr (is_float_v<T>)
    return v != v;
  else
    return false;
}
// Whether `a` is a strictly better arg-extreme than `b` (NaN beats everything).
template <typename T>
bool ranks_before(T a, T b, bool largest) {
  if (is_nan(a) || is_nan(b)) return is_nan(a) && !is_nan(b);
  return largest ? b < a : a < b;
}
// TopK order: NaN is the greatest value.
template <typename T>
bool topk_before(T a, T b, bool largest) {
  if (is_nan(a) || is_nan(b)) return largest ? is_nan(a) && !is_nan(b) : is_nan(b) && !is_nan(a);
  return largest ? b < a : a < b;
}

// [outer, n, inner] view of a tensor around one axis.
struct AxisSplit {
  int64_t outer = 1, n = 1, inner = 1;
  AxisSplit(const Shape& shape, size_t axis) {
    for (size_t d = 0; d < shape.size(); ++d) (d < axis ? outer : d == axis ? n : inner) *= shape[d];
  }
};

template <bool kMax>
class ArgExtremeKernel : public Kernel {
 public:
  explicit ArgExtremeKernel(const NodeDef& node)
      : node_(node),
        axis_(node.attr_int("axis", 0)),
        keepdims_(node.attr_int("keepdims", 1) != 0),
        select_last_(node.attr_int("select_last_index", 0) != 0) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    if (is_float16_like(x.dtype())) return with_float32(io, x.dtype(), [&](KernelIO& f) { compute(f); });
    const size_t axis = static_cast<size_t>(normalize_axis(axis_, static_cast<int64_t>(x.rank()), "axis"));
    if (x.dim(axis) == 0)
      node_.fail("cannot take the arg-extreme of an empty axis (shape " + shape_str(x.shape()) + ")");
    Shape out_shape = x.shape();
    if (keepdims_)
      out_shape[axis] = 1;
    else
      out_shape.erase(out_shape.begin() + static_cast<std::ptrdiff_t>(axis));
    const AxisSplit s(x.shape(), axis);
    Tensor out(DType::kInt64, out_shape);
    int64_t* po = out.data<int64_t>();
    const bool ok = dispatch_numeric(x.dtype(), [&](auto zero) {
      using T = decltype(zero);
      const T* px = x.data<T>();
      for (int64_t o = 0; o < s.outer; ++o)
        for (int64_t i = 0; i < s.inner; ++i) {
          const T* row = px + o * s.n * s.inner + i;
          int64_t best = 0;
          for (int64_t k = 1; k < s.n; ++k) {
            const T v = row[k * s.inner], b = row[best * s.inner];
            const bool tie = !ranks_before(v, b, kMax) && !ranks_before(b, v, kMax);
            if (ranks_before(v, b, kMax) || (tie && select_last_)) best = k;
          }
          po[o * s.inner + i] = best;
        }
    });
    if (!ok) fail_dtype(node_, x.dtype());
    io.outputs[0] = std::move(out);
  }

 private:
  NodeDef node_;
  int64_t axis_;
  bool keepdims_, select_last_;
};

class TopKKernel : public Kernel {
 public:
  explicit TopKKernel(const NodeDef& node)
      : node_(node),
        k_from_input_(node.opset >= 10),
        attr_k_(node.attr_int("k", -1)),
        axis_(node.attr_int("axis", -1)),
        largest_(node.attr_int("largest", 1) != 0) {
    if (!k_from_input_ && !node.attr("k")) node.fail("missing required attribute 'k'");
  }
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    if (is_float16_like(x.dtype())) return with_float32(io, x.dtype(), [&](KernelIO& f) { compute(f); });
    int64_t k = attr_k_;
    if (k_from_input_) {
      const auto values = int64_values(io.in(1), "K");
      if (values.size() != 1) node_.fail("K must hold one value, got " + std::to_string(values.size()));
      k = values[0];
    }
    if (x.rank() == 0) node_.fail("input must have rank >= 1");
    const size_t axis = static_cast<size_t>(normalize_axis(axis_, static_cast<int64_t>(x.rank()), "axis"));
    if (k < 0 || k > x.dim(axis))
      node_.fail("K = " + std::to_string(k) + " is outside [0, " + std::to_string(x.dim(axis)) + "] (axis " +
                 std::to_string(axis) + " of " + shape_str(x.shape()) + ")");
    Shape out_shape = x.shape();
    out_shape[axis] = k;
    const AxisSplit s(x.shape(), axis);
    Tensor values(x.dtype(), out_shape), indices(DType::kInt64, out_shape);
    int64_t* pi = indices.data<int64_t>();
    const bool ok = dispatch_numeric(x.dtype(), [&](auto zero) {
      using T = decltype(zero);
      const T* px = x.data<T>();
      T* pv = values.data<T>();
      std::vector<int64_t> order(static_cast<size_t>(s.n));
      for (int64_t o = 0; o < s.outer; ++o)
        for (int64_t i = 0; i < s.inner; ++i) {
          const T* row = px + o * s.n * s.inner + i;
          std::iota(order.begin(), order.end(), 0);
          std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t a, int64_t b) {
            const T va = row[a * s.inner], vb = row[b * s.inner];
            if (topk_before(va, vb, largest_)) return true;
            if (topk_before(vb, va, largest_)) return false;
            return a < b;
          });
          for (int64_t j = 0; j < k; ++j) {
            const int64_t at = o * k * s.inner + j * s.inner + i;
            pv[at] = row[order[size_t(j)] * s.inner];
            pi[at] = order[size_t(j)];
          }
        }
    });
    if (!ok) fail_dtype(node_, x.dtype());
    io.outputs[0] = std::move(values);
    if (io.outputs.size() > 1) io.outputs[1] = std::move(indices);
  }

 private:
  NodeDef node_;
  bool k_from_input_;
  int64_t attr_k_, axis_;
  bool largest_;  // `sorted` = 0 leaves the order unspecified: sorted output is valid for both
};

}  // namespace

// ArgMax/ArgMin 1 (11 negative axis, 12 select_last_index, 13 types: all accepted from 1).
PARITY_KERNEL("ArgMax", 1, ArgExtremeKernel<true>, kAllNumericTypes);
PARITY_KERNEL("ArgMin", 1, ArgExtremeKernel<false>, kAllNumericTypes);
// TopK 1: `k` attribute; 10: K input; 11: largest/sorted and negative axis (accepted from 1).
PARITY_KERNEL("TopK", 1, TopKKernel, kAllNumericTypes);
PARITY_KERNEL("TopK", 10, TopKKernel, kAllNumericTypes);

}  // namespace parity::refrt
