// ScatterND and ScatterElements (and Scatter 9, the old name of ScatterElements): a copy of data
// with updates written (or combined with a reduction) at validated indices, in index order.
#include <algorithm>
#include <cstring>

#include "../src/dispatch.h"
#include "../src/kernel.h"

namespace parity::refrt {
namespace {

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

Reduction parse_reduction(const NodeDef& node) {
  const Attribute* a = node.attr("reduction", Attribute::Type::kString);
  const std::string r = a ? a->s : "none";
  if (r == "none") return Reduction::kNone;
  if (node.opset >= 16 && r == "add") return Reduction::kAdd;
  if (node.opset >= 16 && r == "mul") return Reduction::kMul;
  if (node.opset >= 18 && r == "max") return Reduction::kMax;
  if (node.opset >= 18 && r == "min") return Reduction::kMin;
  node.fail("reduction '" + r + "' is not defined at opset " + std::to_string(node.opset));
}

template <typename T>
T combine(Reduction r, T a, T b) {
  switch (r) {
    case Reduction::kAdd:
      return static_cast<T>(a + b);
    case Reduction::kMul:
      return static_cast<T>(a * b);
    case Reduction::kMax:
      return std::max(a, b);
    case Reduction::kMin:
      return std::min(a, b);
    case Reduction::kNone:
      break;
  }
  return b;
}

// Applies dst[k] = combine(dst[k], src[k]) for `count` elements of dtype `t`. float16/bfloat16 round
// after every update (as float16 arithmetic does); bool: add = or, mul = and, max = or, min = and.
void reduce_into(Reduction r, DType t, void* dst, const void* src, int64_t count) {
  const size_t es = dtype_size(t);
  if (r == Reduction::kNone) {
    std::memcpy(dst, src, static_cast<size_t>(count) * es);
    return;
  }
  if (t == DType::kBool) {
    auto* d = static_cast<uint8_t*>(dst);
    const auto* s = static_cast<const uint8_t*>(src);
    const bool is_or = r == Reduction::kAdd || r == Reduction::kMax;
    for (int64_t k = 0; k < count; ++k) d[k] = is_or ? (d[k] || s[k]) : (d[k] && s[k]);
    return;
  }
  if (is_float16_like(t)) {
    const bool half = t == DType::kFloat16;
    auto* d = static_cast<uint16_t*>(dst);
    const auto* s = static_cast<const uint16_t*>(src);
    for (int64_t k = 0; k < count; ++k) {
      const float a = half ? half_to_float(d[k]) : bf16_to_float(d[k]);
      const float b = half ? half_to_float(s[k]) : bf16_to_float(s[k]);
      const float c = combine(r, a, b);
      d[k] = half ? float_to_half(c) : float_to_bf16(c);
    }
    return;
  }
  dispatch_numeric(t, [&](auto tag) {
    using T = decltype(tag);
    // Integer add/mul in uint64 so overflow wraps (defined, as numpy's does) before truncating to T.
    using Wide = std::conditional_t<std::is_integral_v<T>, uint64_t, T>;
    auto* d = static_cast<T*>(dst);
    const auto* s = static_cast<const T*>(src);
    for (int64_t k = 0; k < count; ++k) {
      if (r == Reduction::kAdd || r == Reduction::kMul)
        d[k] = static_cast<T>(combine<Wide>(r, static_cast<Wide>(d[k]), static_cast<Wide>(s[k])));
      else
        d[k] = combine(r, d[k], s[k]);
    }
  });
}

int64_t checked_index(const NodeDef& node, int64_t idx, int64_t dim, size_t axis) {
  if (idx < -dim || idx >= dim)
    node.fail("index " + std::to_string(idx) + " is out of range for axis " + std::to_string(axis) + " of size " +
              std::to_string(dim));
  return idx < 0 ? idx + dim : idx;
}

class ScatterNDKernel : public Kernel {
 public:
  explicit ScatterNDKernel(const NodeDef& node) : node_(node), reduction_(parse_reduction(node)) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    const Tensor& index_tensor = io.in(1);
    const Tensor& updates = io.in(2);
    if (updates.dtype() != x.dtype())
      node_.fail("updates are " + dtype_name(updates.dtype()) + ", data is " + dtype_name(x.dtype()));
    if (x.rank() < 1 || index_tensor.rank() < 1) node_.fail("data and indices must have rank >= 1");
    const int64_t k = index_tensor.shape().back();
    if (k < 1 || k > static_cast<int64_t>(x.rank()))
      node_.fail("indices last dim " + std::to_string(k) + " must be in [1, " + std::to_string(x.rank()) + "]");
    Shape want(index_tensor.shape().begin(), index_tensor.shape().end() - 1);
    want.insert(want.end(), x.shape().begin() + k, x.shape().end());
    if (updates.shape() != want)
      node_.fail("updates have shape " + shape_str(updates.shape()) + ", expected " + shape_str(want));
    const std::vector<int64_t> indices = int64_values(index_tensor, "indices");
    const std::vector<int64_t> strides = row_major_strides(x.shape());
    const int64_t tuples = index_tensor.numel() / k;
    const int64_t slice = k == static_cast<int64_t>(x.rank()) ? 1 : strides[static_cast<size_t>(k - 1)];
    std::vector<int64_t> target(static_cast<size_t>(tuples));
    for (int64_t t = 0; t < tuples; ++t) {  // all validated before the output is touched
      int64_t off = 0;
      for (int64_t j = 0; j < k; ++j) {
        const size_t axis = static_cast<size_t>(j);
        off += checked_index(node_, indices[static_cast<size_t>(t * k + j)], x.dim(axis), axis) * strides[axis];
      }
      target[static_cast<size_t>(t)] = off;
    }
    Tensor out = x.clone();
    if (out.numel() > 0 && slice > 0) {
      const size_t es = dtype_size(x.dtype());
      char* dst = static_cast<char*>(out.mutable_raw());
      const char* src = static_cast<const char*>(updates.raw());
      for (int64_t t = 0; t < tuples; ++t)
        reduce_into(reduction_, x.dtype(), dst + static_cast<size_t>(target[static_cast<size_t>(t)]) * es,
                    src + static_cast<size_t>(t * slice) * es, slice);
    }
    io.outputs[0] = std::move(out);
  }

 private:
  NodeDef node_;
  Reduction reduction_;
};

class ScatterElementsKernel : public Kernel {
 public:
  explicit ScatterElementsKernel(const NodeDef& node)
      : node_(node), axis_(node.attr_int("axis", 0)), reduction_(parse_reduction(node)) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    const Tensor& index_tensor = io.in(1);
    const Tensor& updates = io.in(2);
    if (updates.dtype() != x.dtype())
      node_.fail("updates are " + dtype_name(updates.dtype()) + ", data is " + dtype_name(x.dtype()));
    if (x.rank() == 0) node_.fail("data must have rank >= 1");
    if (index_tensor.rank() != x.rank() || updates.shape() != index_tensor.shape())
      node_.fail("indices " + shape_str(index_tensor.shape()) + " and updates " + shape_str(updates.shape()) +
                 " must have one shape, of the rank of data " + shape_str(x.shape()));
    const size_t axis = static_cast<size_t>(normalize_axis(axis_, static_cast<int64_t>(x.rank()), "axis"));
    for (size_t d = 0; d < x.rank(); ++d)
      if (d != axis && index_tensor.dim(d) > x.dim(d))
        node_.fail("indices shape " + shape_str(index_tensor.shape()) + " exceeds data shape " + shape_str(x.shape()) +
                   " at dim " + std::to_string(d));
    const std::vector<int64_t> indices = int64_values(index_tensor, "indices");
    const std::vector<int64_t> strides = row_major_strides(x.shape());
    std::vector<int64_t> target(indices.size()), at(x.rank(), 0);
    for (size_t i = 0; i < indices.size(); ++i) {
      int64_t off = 0;
      for (size_t d = 0; d < at.size(); ++d)
        off += (d == axis ? checked_index(node_, indices[i], x.dim(d), d) : at[d]) * strides[d];
      target[i] = off;
      for (size_t d = at.size(); d-- > 0;) {
        if (++at[d] < index_tensor.dim(d)) break;
        at[d] = 0;
      }
    }
    Tensor out = x.clone();
    if (out.numel() > 0) {
      const size_t es = dtype_size(x.dtype());
      char* dst = static_cast<char*>(out.mutable_raw());
      const char* src = static_cast<const char*>(updates.raw());
      for (size_t i = 0; i < target.size(); ++i)
        reduce_into(reduction_, x.dtype(), dst + static_cast<size_t>(target[i]) * es, src + i * es, 1);
    }
    io.outputs[0] = std::move(out);
  }

 private:
  NodeDef node_;
  int64_t axis_;
  Reduction reduction_;
};

}  // namespace

// ScatterND 11; 13 types; 16 reduction add/mul; 18 max/min.
PARITY_KERNEL("ScatterND", 11, ScatterNDKernel, kAllTypes);
PARITY_KERNEL("ScatterND", 16, ScatterNDKernel, kAllTypes);
PARITY_KERNEL("ScatterND", 18, ScatterNDKernel, kAllTypes);
// ScatterElements 11; 13 types; 16 reduction add/mul; 18 max/min. Scatter 9 is the same op (deprecated at 11).
PARITY_KERNEL("Scatter", 9, ScatterElementsKernel, kAllTypes);
PARITY_KERNEL("ScatterElements", 11, ScatterElementsKernel, kAllTypes);
PARITY_KERNEL("ScatterElements", 16, ScatterElementsKernel, kAllTypes);
PARITY_KERNEL("ScatterElements", 18, ScatterElementsKernel, kAllTypes);

}  // namespace parity::refrt
