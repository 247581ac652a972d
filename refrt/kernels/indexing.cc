// Indexing: GatherElements, GatherND, NonZero, OneHot. Indices are validated before anything is
// read, so a hostile index is an error naming the node, never an out-of-bounds read.
#include <cstring>

#include "../src/dispatch.h"
#include "../src/element_values.h"
#include "../src/kernel.h"

namespace parity::refrt {
namespace {

// idx in [-dim, dim) made non-negative; otherwise a node error.
int64_t checked_index(const NodeDef& node, int64_t idx, int64_t dim, size_t axis) {
  if (idx < -dim || idx >= dim)
    node.fail("index " + std::to_string(idx) + " is out of range for axis " + std::to_string(axis) + " of size " +
              std::to_string(dim));
  return idx < 0 ? idx + dim : idx;
}

// Calls f(flat_index, multi_index) over every element of `shape` in row-major order.
template <typename F>
void for_each_index(const Shape& shape, F&& f) {
  const int64_t n = checked_numel(shape);
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    f(i, index);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
}

class GatherElementsKernel : public Kernel {
 public:
  explicit GatherElementsKernel(const NodeDef& node) : node_(node), axis_(node.attr_int("axis", 0)) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    const Tensor& index_tensor = io.in(1);
    if (x.rank() == 0) node_.fail("data must have rank >= 1");
    if (index_tensor.rank() != x.rank())
      node_.fail("indices of rank " + std::to_string(index_tensor.rank()) + " for data of rank " +
                 std::to_string(x.rank()) + " (they must be equal)");
    const size_t axis = static_cast<size_t>(normalize_axis(axis_, static_cast<int64_t>(x.rank()), "axis"));
    for (size_t d = 0; d < x.rank(); ++d)
      if (d != axis && index_tensor.dim(d) > x.dim(d))
        node_.fail("indices shape " + shape_str(index_tensor.shape()) + " exceeds data shape " + shape_str(x.shape()) +
                   " at dim " + std::to_string(d));
    const std::vector<int64_t> indices = int64_values(index_tensor, "indices");
    const std::vector<int64_t> strides = row_major_strides(x.shape());
    std::vector<int64_t> source(indices.size());
    for_each_index(index_tensor.shape(), [&](int64_t i, const std::vector<int64_t>& at) {
      int64_t off = 0;
      for (size_t d = 0; d < at.size(); ++d)
        off += (d == axis ? checked_index(node_, indices[static_cast<size_t>(i)], x.dim(d), d) : at[d]) * strides[d];
      source[static_cast<size_t>(i)] = off;
    });
    Tensor out(x.dtype(), index_tensor.shape());
    const size_t es = dtype_size(x.dtype());
    const char* src = static_cast<const char*>(x.raw());
    char* dst = out.numel() ? static_cast<char*>(out.mutable_raw()) : nullptr;
    for (size_t i = 0; i < source.size(); ++i) std::memcpy(dst + i * es, src + static_cast<size_t>(source[i]) * es, es);
    io.outputs[0] = std::move(out);
  }

 private:
  NodeDef node_;
  int64_t axis_;
};

// GatherND: indices[..., :m] address slices of data after the first batch_dims dims.
class GatherNDKernel : public Kernel {
 public:
  explicit GatherNDKernel(const NodeDef& node)
      : node_(node), batch_dims_(node.opset >= 12 ? node.attr_int("batch_dims", 0) : 0) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    const Tensor& index_tensor = io.in(1);
    const int64_t r = static_cast<int64_t>(x.rank()), q = static_cast<int64_t>(index_tensor.rank());
    const int64_t b = batch_dims_;
    if (r < 1 || q < 1) node_.fail("data and indices must have rank >= 1");
    if (b < 0 || b >= std::min(r, q))
      node_.fail("batch_dims " + std::to_string(b) + " must be in [0, min(rank(data), rank(indices)))");
    const int64_t m = index_tensor.dim(static_cast<size_t>(q - 1));
    if (m < 1 || m > r - b)
      node_.fail("indices last dim " + std::to_string(m) + " must be in [1, " + std::to_string(r - b) + "]");
    for (int64_t d = 0; d < b; ++d)
      if (x.dim(static_cast<size_t>(d)) != index_tensor.dim(static_cast<size_t>(d)))
        node_.fail("batch dim " + std::to_string(d) + " differs: data " + shape_str(x.shape()) + ", indices " +
                   shape_str(index_tensor.shape()));
    Shape out_shape(index_tensor.shape().begin(), index_tensor.shape().end() - 1);
    out_shape.insert(out_shape.end(), x.shape().begin() + b + m, x.shape().end());
    int64_t batches = 1, slice = 1;
    for (int64_t d = 0; d < b; ++d) batches *= x.dim(static_cast<size_t>(d));
    for (int64_t d = b + m; d < r; ++d) slice *= x.dim(static_cast<size_t>(d));
    const int64_t tuples = index_tensor.numel() / m;  // over all batches
    const int64_t per_batch = batches ? tuples / batches : 0;
    const std::vector<int64_t> strides = row_major_strides(x.shape());
    const int64_t batch_stride = b > 0 ? strides[static_cast<size_t>(b - 1)] : 0;
    const std::vector<int64_t> indices = int64_values(index_tensor, "indices");
    std::vector<int64_t> source(static_cast<size_t>(tuples));
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t off = (per_batch ? t / per_batch : 0) * batch_stride;
      for (int64_t k = 0; k < m; ++k) {
        const size_t axis = static_cast<size_t>(b + k);
        off += checked_index(node_, indices[static_cast<size_t>(t * m + k)], x.dim(axis), axis) * strides[axis];
      }
      source[static_cast<size_t>(t)] = off;
    }
    Tensor out(x.dtype(), out_shape);
    const size_t block = static_cast<size_t>(slice) * dtype_size(x.dtype());
    if (out.numel() > 0) {
      const char* src = static_cast<const char*>(x.raw());
      char* dst = static_cast<char*>(out.mutable_raw());
      const size_t es = dtype_size(x.dtype());
      for (size_t t = 0; t < source.size(); ++t)
        std::memcpy(dst + t * block, src + static_cast<size_t>(source[t]) * es, block);
    }
    io.outputs[0] = std::move(out);
  }

 private:
  NodeDef node_;
  int64_t batch_dims_;
};

bool element_is_nonzero(const Tensor& x, int64_t i) {
  switch (x.dtype()) {
    case DType::kFloat16:
    case DType::kBFloat16:
      return (x.data<uint16_t>()[i] & 0x7fffu) != 0;  // -0 is zero
    case DType::kFloat32:
      return x.data<float>()[i] != 0.0f;
    case DType::kFloat64:
      return x.data<double>()[i] != 0.0;
    default:
      break;
  }
  const auto* p = static_cast<const unsigned char*>(x.raw()) + static_cast<size_t>(i) * dtype_size(x.dtype());
  for (size_t b = 0; b < dtype_size(x.dtype()); ++b)
    if (p[b]) return true;
  return false;
}

// NonZero: [rank, count] int64 coordinates in row-major order (a scalar counts as rank 1, like numpy's atleast_1d).
class NonZeroKernel : public Kernel {
 public:
  explicit NonZeroKernel(const NodeDef&) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    const Shape shape = x.rank() == 0 ? Shape{1} : x.shape();
    std::vector<int64_t> hits;
    for (int64_t i = 0; i < x.numel(); ++i)
      if (element_is_nonzero(x, i)) hits.push_back(i);
    const int64_t count = static_cast<int64_t>(hits.size());
    Tensor out(DType::kInt64, {static_cast<int64_t>(shape.size()), count});
    int64_t* po = out.numel() ? out.data<int64_t>() : nullptr;
    for (int64_t h = 0; h < count; ++h) {
      int64_t rest = hits[static_cast<size_t>(h)];
      for (size_t d = shape.size(); d-- > 0;) {
        po[static_cast<int64_t>(d) * count + h] = rest % shape[d];
        rest /= shape[d];
      }
    }
    io.outputs[0] = std::move(out);
  }
};

// OneHot: output has a new axis of size depth; indices outside [-depth, depth) give all off values.
class OneHotKernel : public Kernel {
 public:
  explicit OneHotKernel(const NodeDef& node) : node_(node), axis_(node.attr_int("axis", -1)) {}
  void compute(KernelIO& io) const override {
    const Tensor& index_tensor = io.in(0);
    const Tensor& depth_tensor = io.in(1);
    const Tensor& values = io.in(2);
    if (depth_tensor.numel() != 1)
      node_.fail("depth must have one element, has " + std::to_string(depth_tensor.numel()));
    if (values.numel() != 2)
      node_.fail("values must have two elements [off, on], has " + std::to_string(values.numel()));
    const int64_t depth = element_as_int64(depth_tensor, 0, "depth");
    if (depth < 1) node_.fail("depth " + std::to_string(depth) + " must be positive");
    const int64_t out_rank = static_cast<int64_t>(index_tensor.rank()) + 1;
    const size_t axis = static_cast<size_t>(normalize_axis(axis_, out_rank, "axis"));
    Shape out_shape = index_tensor.shape();
    out_shape.insert(out_shape.begin() + static_cast<std::ptrdiff_t>(axis), depth);
    Tensor out(values.dtype(), out_shape);  // an absurd depth fails here, on the allocation limit
    const size_t es = dtype_size(values.dtype());
    const auto* off = static_cast<const unsigned char*>(values.raw());
    if (out.numel() == 0) {
      io.outputs[0] = std::move(out);
      return;
    }
    fill_elements(out.mutable_raw(), out.numel(), off, es);
    int64_t inner = 1;
    for (size_t d = axis; d < index_tensor.rank(); ++d) inner *= index_tensor.dim(d);
    auto* dst = static_cast<unsigned char*>(out.mutable_raw());
    for (int64_t i = 0; i < index_tensor.numel(); ++i) {
      int64_t idx = element_as_int64(index_tensor, i, "index");
      if (idx < -depth || idx >= depth) continue;
      if (idx < 0) idx += depth;
      const int64_t outer_i = i / inner, inner_i = i % inner;
      std::memcpy(dst + static_cast<size_t>((outer_i * depth + idx) * inner + inner_i) * es, off + es, es);
    }
    io.outputs[0] = std::move(out);
  }

 private:
  NodeDef node_;
  int64_t axis_;
};

}  // namespace

// GatherElements 11; 13 widened types.
PARITY_KERNEL("GatherElements", 11, GatherElementsKernel, kAllTypes);
// GatherND 11; 12 batch_dims; 13 widened types.
PARITY_KERNEL("GatherND", 11, GatherNDKernel, kAllTypes);
PARITY_KERNEL("GatherND", 12, GatherNDKernel, kAllTypes);
// NonZero 9; 13 widened types.
PARITY_KERNEL("NonZero", 9, NonZeroKernel, kAllTypes);
// OneHot 9; 11 defined negative indices (counted from the back; accepted from 9).
PARITY_KERNEL("OneHot", 9, OneHotKernel, kAllTypes);
PARITY_KERNEL("OneHot", 11, OneHotKernel, kAllTypes);

}  // namespace parity::refrt
