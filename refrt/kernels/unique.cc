// Unique (11): the distinct elements of the flattened input, or the distinct slices along `axis`,
// sorted ascending (lexicographically for slices; sorted=1, the default) or in order of first
// occurrence (sorted=0). Optional outputs: indices (first occurrence in the input), inverse_indices
// (for each input element or slice, its position in Y) and counts. NaNs compare equal to each other
// and after every number, as numpy's unique does.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "elementwise.h"

namespace parity::refrt {
namespace {

template <typename T>
int compare_values(T a, T b) {
  if constexpr (is_float_v<T>) {
    const bool na = a != a, nb = b != b;
    if (na || nb) return na == nb ? 0 : (na ? 1 : -1);
  }
  return a < b ? -1 : (b < a ? 1 : 0);
}

class UniqueKernel : public Kernel {
 public:
  explicit UniqueKernel(const NodeDef& node)
      : node_(node),
        has_axis_(node.attr("axis") != nullptr),
        axis_(node.attr_int("axis", 0)),
        sorted_(node.attr_int("sorted", 1) != 0) {}

  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    if (is_float16_like(x.dtype())) {
      // Ordering and equality of the widened values are those of the 16-bit ones; Y is gathered
      // from the original bytes.
      const Tensor wide = widen_to_float32(x);
      return run(io, x, wide);
    }
    run(io, x, x);
  }

 private:
  void run(KernelIO& io, const Tensor& x, const Tensor& keys) const {
    size_t axis = 0;
    int64_t outer = 1, n = x.numel(), inner = 1;
    if (has_axis_) {
      if (x.rank() == 0) node_.fail("axis is given but the input is a scalar");
      axis = static_cast<size_t>(normalize_axis(axis_, static_cast<int64_t>(x.rank()), "axis"));
      n = x.dim(axis);
      for (size_t d = 0; d < x.rank(); ++d) {
        if (d < axis) outer *= x.dim(d);
        if (d > axis) inner *= x.dim(d);
      }
    }
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    bool ok = dispatch_with_bool(keys.dtype(), [&](auto zero) {
      using T = decltype(zero);
      const void* p = keys.raw();
      auto cmp = [&](int64_t a, int64_t b) {  // slice a vs slice b, lexicographic over (outer, inner)
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t i = 0; i < inner; ++i) {
            const int c = compare_values(load<T>(p, (o * n + a) * inner + i), load<T>(p, (o * n + b) * inner + i));
            if (c) return c;
          }
        return 0;
      };
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return cmp(a, b) < 0; });
      build_outputs(io, x, axis, outer, n, inner, order, cmp);
    });
    if (!ok) fail_dtype(node_, x.dtype());
  }

  template <typename Cmp>
  void build_outputs(KernelIO& io, const Tensor& x, size_t axis, int64_t outer, int64_t n, int64_t inner,
                     const std::vector<int64_t>& order, const Cmp& cmp) const {
    // Groups of equal slices in sorted order; each group's first member is its first occurrence.
    std::vector<int64_t> first, count, group(static_cast<size_t>(n));
    for (size_t k = 0; k < order.size(); ++k) {
      if (k == 0 || cmp(order[k - 1], order[k]) != 0) {
        first.push_back(order[k]);
        count.push_back(0);
      }
      group[order[k]] = static_cast<int64_t>(first.size()) - 1;
      ++count.back();
    }
    const int64_t u = static_cast<int64_t>(first.size());
    std::vector<int64_t> rank(static_cast<size_t>(u));  // group -> output position
    std::iota(rank.begin(), rank.end(), 0);
    if (!sorted_) {
      std::vector<int64_t> by_first(rank);
      std::sort(by_first.begin(), by_first.end(), [&](int64_t a, int64_t b) { return first[a] < first[b]; });
      for (int64_t pos = 0; pos < u; ++pos) rank[by_first[pos]] = pos;
    }
    std::vector<int64_t> indices(static_cast<size_t>(u)), counts(static_cast<size_t>(u)),
        inverse(static_cast<size_t>(n));
    for (int64_t g = 0; g < u; ++g) {
      indices[rank[g]] = first[g];
      counts[rank[g]] = count[g];
    }
    for (int64_t i = 0; i < n; ++i) inverse[i] = rank[group[i]];
    Shape shape = has_axis_ ? x.shape() : Shape{u};
    if (has_axis_) shape[axis] = u;
    Tensor y(x.dtype(), shape);
    const size_t size = dtype_size(x.dtype()), row = static_cast<size_t>(inner) * size;
    const auto* src = static_cast<const unsigned char*>(x.raw());
    auto* dst = static_cast<unsigned char*>(y.mutable_raw());
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k = 0; k < u; ++k)
        std::memcpy(dst + static_cast<size_t>(o * u + k) * row, src + static_cast<size_t>(o * n + indices[k]) * row,
                    row);
    io.outputs[0] = std::move(y);
    const auto vec = [](const std::vector<int64_t>& v) {
      Tensor t(DType::kInt64, {static_cast<int64_t>(v.size())});
      std::copy(v.begin(), v.end(), t.data<int64_t>());
      return t;
    };
    if (io.outputs.size() > 1) io.outputs[1] = vec(indices);
    if (io.outputs.size() > 2) io.outputs[2] = vec(inverse);
    if (io.outputs.size() > 3) io.outputs[3] = vec(counts);
  }

  NodeDef node_;
  bool has_axis_;
  int64_t axis_;
  bool sorted_;
};

}  // namespace

PARITY_KERNEL("Unique", 11, UniqueKernel, kAllTypes);

}  // namespace parity::refrt
