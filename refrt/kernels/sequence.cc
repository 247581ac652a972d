// Sequence operators: SequenceConstruct, SequenceEmpty, SequenceAt, SequenceInsert, SequenceErase,
// SequenceLength, SplitToSequence, ConcatFromSequence. A sequence is an immutable Value (value.h);
// the ops that "modify" one build a new Value sharing the untouched elements' buffers.
#include <cstring>

#include "sequence_values.h"

namespace parity::refrt {
namespace {

// A kernel of sequences: it reads KernelIO::values.
class SequenceKernel : public Kernel {
 public:
  explicit SequenceKernel(const NodeDef& node) : node_(node) {}
  bool takes_values() const override { return true; }

 protected:
  NodeDef node_;
};

class SequenceConstructKernel : public SequenceKernel {
 public:
  using SequenceKernel::SequenceKernel;
  void compute(KernelIO& io) const override {
    if (io.inputs.empty()) node_.fail("SequenceConstruct needs at least one input");
    std::vector<Tensor> elements;
    for (size_t i = 0; i < io.inputs.size(); ++i) {
      if (io.value(i)) node_.fail("input #" + std::to_string(i) + " must be a tensor, got " + io.value(i)->describe());
      elements.push_back(io.in(i));
    }
    io.set_value(0, make_sequence(std::move(elements), DType::kUndefined, node_));
  }
};

class SequenceEmptyKernel : public SequenceKernel {
 public:
  explicit SequenceEmptyKernel(const NodeDef& node) : SequenceKernel(node) {
    const int64_t dtype = node.attr_int("dtype", static_cast<int64_t>(DType::kFloat32));
    if (!dtype_is_supported(static_cast<int>(dtype)) || dtype_size(static_cast<DType>(dtype)) == 0)
      node.fail("dtype " + std::to_string(dtype) + " is not a tensor element type refrt implements");
    dtype_ = static_cast<DType>(dtype);
  }
  void compute(KernelIO& io) const override { io.set_value(0, Value::sequence({}, dtype_)); }

 private:
  DType dtype_ = DType::kFloat32;
};

class SequenceAtKernel : public SequenceKernel {
 public:
  using SequenceKernel::SequenceKernel;
  void compute(KernelIO& io) const override {
    const Value& seq = sequence_input(io, 0, node_);
    const int64_t n = static_cast<int64_t>(seq.tensors.size());
    const int64_t p = sequence_position(io.in(1), -n, n - 1, n, node_);
    io.outputs[0] = seq.tensors[static_cast<size_t>(p)];
  }
};

class SequenceInsertKernel : public SequenceKernel {
 public:
  using SequenceKernel::SequenceKernel;
  void compute(KernelIO& io) const override {
    const Value& seq = sequence_input(io, 0, node_);
    if (io.value(1)) node_.fail("the inserted value must be a tensor, got " + io.value(1)->describe());
    const Tensor& t = io.in(1);
    const int64_t n = static_cast<int64_t>(seq.tensors.size());
    const int64_t p = io.optional(2) ? sequence_position(*io.optional(2), -n, n, n, node_) : n;
    std::vector<Tensor> elements = seq.tensors;
    elements.insert(elements.begin() + p, t);
    io.set_value(0, make_sequence(std::move(elements), seq.elem_type, node_));
  }
};

class SequenceEraseKernel : public SequenceKernel {
 public:
  using SequenceKernel::SequenceKernel;
  void compute(KernelIO& io) const override {
    const Value& seq = sequence_input(io, 0, node_);
    const int64_t n = static_cast<int64_t>(seq.tensors.size());
    if (n == 0) node_.fail("cannot erase from an empty sequence");
    const int64_t p = io.optional(1) ? sequence_position(*io.optional(1), -n, n - 1, n, node_) : n - 1;
    std::vector<Tensor> elements = seq.tensors;
    elements.erase(elements.begin() + p);
    io.set_value(0, Value::sequence(std::move(elements), seq.elem_type));
  }
};

class SequenceLengthKernel : public SequenceKernel {
 public:
  using SequenceKernel::SequenceKernel;
  void compute(KernelIO& io) const override {
    const Value& seq = sequence_input(io, 0, node_);
    io.outputs[0] = Tensor::scalar<int64_t>(DType::kInt64, static_cast<int64_t>(seq.tensors.size()));
  }
};

// Bytes of `x` between [start, start + size) along `axis`, as a tensor of `shape`.
Tensor copy_range(const Tensor& x, size_t axis, int64_t start, int64_t size, Shape shape) {
  int64_t outer = 1, inner = static_cast<int64_t>(dtype_size(x.dtype()));
  for (size_t d = 0; d < axis; ++d) outer *= x.dim(d);
  for (size_t d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
  Tensor out(x.dtype(), std::move(shape));
  const size_t row = static_cast<size_t>(size * inner);
  if (row == 0 || outer == 0) return out;
  const auto* src = static_cast<const unsigned char*>(x.raw());
  auto* dst = static_cast<unsigned char*>(out.mutable_raw());
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(dst + static_cast<size_t>(o) * row, src + static_cast<size_t>((o * x.dim(axis) + start) * inner), row);
  return out;
}

class SplitToSequenceKernel : public SequenceKernel {
 public:
  explicit SplitToSequenceKernel(const NodeDef& node)
      : SequenceKernel(node), axis_(node.attr_int("axis", 0)), keepdims_(node.attr_int("keepdims", 1) != 0) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    if (x.rank() == 0) node_.fail("input must have rank >= 1");
    const size_t axis = static_cast<size_t>(normalize_axis(axis_, static_cast<int64_t>(x.rank()), "axis"));
    const int64_t dim = x.dim(axis);
    const Tensor* split = io.optional(1);
    const std::vector<int64_t> sizes = split ? split_sizes(*split, dim) : std::vector<int64_t>(pieces(dim), 1);
    const bool squeeze = !split && !keepdims_;
    if (sizes.size() > kMaxPieces)
      node_.fail("the split makes " + std::to_string(sizes.size()) + " tensors, more than refrt's limit of " +
                 std::to_string(kMaxPieces) + " for one sequence");
    std::vector<Tensor> elements;
    int64_t start = 0;
    for (int64_t size : sizes) {
      Shape shape = x.shape();
      if (squeeze)
        shape.erase(shape.begin() + static_cast<std::ptrdiff_t>(axis));
      else
        shape[axis] = size;
      elements.push_back(copy_range(x, axis, start, size, std::move(shape)));
      start += size;
    }
    io.set_value(0, make_sequence(std::move(elements), x.dtype(), node_));
  }

 private:
  // A scalar: pieces of that length, the last one shorter; 1-D: the lengths, summing to the axis.
  std::vector<int64_t> split_sizes(const Tensor& split, int64_t dim) const {
    const std::vector<int64_t> v = int64_values(split, "split");
    if (split.rank() == 0) {
      if (v[0] <= 0) node_.fail("a scalar split must be positive, got " + std::to_string(v[0]));
      std::vector<int64_t> sizes(pieces(dim / v[0]), v[0]);
      if (dim % v[0]) sizes.push_back(dim % v[0]);
      return sizes;
    }
    if (split.rank() != 1) node_.fail("split must be a scalar or 1-D, got shape " + shape_str(split.shape()));
    int64_t total = 0;
    for (int64_t s : v) {
      if (s < 0) node_.fail("split entry " + std::to_string(s) + " is negative");
      if (__builtin_add_overflow(total, s, &total)) node_.fail("split sizes overflow");
    }
    if (total != dim)
      node_.fail("split sizes sum to " + std::to_string(total) + ", the axis has " + std::to_string(dim));
    return v;
  }

  // An axis of zero-element tensors may be any length: a count of pieces is checked before it is allocated.
  static constexpr size_t kMaxPieces = size_t{1} << 20;
  size_t pieces(int64_t n) const {
    if (n > static_cast<int64_t>(kMaxPieces))
      node_.fail("the split makes " + std::to_string(n) + " tensors, more than refrt's limit of " +
                 std::to_string(kMaxPieces) + " for one sequence");
    return static_cast<size_t>(n);
  }

  int64_t axis_;
  bool keepdims_;
};

class ConcatFromSequenceKernel : public SequenceKernel {
 public:
  explicit ConcatFromSequenceKernel(const NodeDef& node)
      : SequenceKernel(node), new_axis_(node.attr_int("new_axis", 0) != 0) {
    if (!node.attr("axis", Attribute::Type::kInt)) node.fail("the attribute 'axis' is required");
    axis_ = node.attr_int("axis", 0);
  }
  void compute(KernelIO& io) const override {
    const Value& seq = sequence_input(io, 0, node_);
    if (seq.tensors.empty()) node_.fail("cannot concatenate an empty sequence (its shape is unknown)");
    const Tensor& first = seq.tensors[0];
    const int64_t rank = static_cast<int64_t>(first.rank()) + (new_axis_ ? 1 : 0);
    if (rank == 0) node_.fail("cannot concatenate scalars without new_axis=1");
    const size_t axis = static_cast<size_t>(normalize_axis(axis_, rank, "axis"));
    Shape out_shape = first.shape();
    if (new_axis_)
      out_shape.insert(out_shape.begin() + static_cast<std::ptrdiff_t>(axis), 0);
    else
      out_shape[axis] = 0;
    for (size_t k = 0; k < seq.tensors.size(); ++k) {
      const Tensor& t = seq.tensors[k];
      if (t.dtype() != first.dtype())
        node_.fail("element #" + std::to_string(k) + " is " + dtype_name(t.dtype()) + ", element #0 " +
                   dtype_name(first.dtype()));
      Shape s = t.shape();
      if (new_axis_) s.insert(s.begin() + static_cast<std::ptrdiff_t>(std::min(axis, s.size())), 1);
      bool same = s.size() == out_shape.size();
      for (size_t d = 0; same && d < s.size(); ++d) same = d == axis || s[d] == out_shape[d];
      if (!same)
        node_.fail("element #" + std::to_string(k) + " has shape " + shape_str(t.shape()) + ", element #0 " +
                   shape_str(first.shape()) + ": they must agree except along axis " + std::to_string(axis));
      if (__builtin_add_overflow(out_shape[axis], s[axis], &out_shape[axis]))
        node_.fail("the concatenated axis overflows");
    }
    io.outputs[0] = concat(seq.tensors, axis, out_shape);
  }

 private:
  static Tensor concat(const std::vector<Tensor>& parts, size_t axis, const Shape& out_shape) {
    Tensor out(parts[0].dtype(), out_shape);
    int64_t outer = 1, inner = static_cast<int64_t>(dtype_size(out.dtype()));
    for (size_t d = 0; d < axis; ++d) outer *= out_shape[d];
    for (size_t d = axis + 1; d < out_shape.size(); ++d) inner *= out_shape[d];
    const size_t out_row = static_cast<size_t>(out_shape[axis] * inner);
    if (out.numel() == 0) return out;
    auto* dst = static_cast<unsigned char*>(out.mutable_raw());
    size_t offset = 0;
    for (const Tensor& t : parts) {
      const size_t row = static_cast<size_t>(t.numel() / std::max<int64_t>(outer, 1)) * dtype_size(t.dtype());
      const auto* src = static_cast<const unsigned char*>(t.raw());
      for (int64_t o = 0; o < outer && row; ++o)
        std::memcpy(dst + static_cast<size_t>(o) * out_row + offset, src + static_cast<size_t>(o) * row, row);
      offset += row;
    }
    return out;
  }

  int64_t axis_ = 0;
  bool new_axis_;
};

}  // namespace

// All since opset 11 (SplitToSequence, ConcatFromSequence too); later versions only widened types.
PARITY_KERNEL("SequenceConstruct", 11, SequenceConstructKernel, kAllTypes);
PARITY_KERNEL("SequenceEmpty", 11, SequenceEmptyKernel, kAllTypes);
PARITY_KERNEL("SequenceAt", 11, SequenceAtKernel, kAllTypes);
PARITY_KERNEL("SequenceInsert", 11, SequenceInsertKernel, kAllTypes);
PARITY_KERNEL("SequenceErase", 11, SequenceEraseKernel, kAllTypes);
PARITY_KERNEL("SequenceLength", 11, SequenceLengthKernel, kAllTypes);
PARITY_KERNEL("SplitToSequence", 11, SplitToSequenceKernel, kAllTypes);
PARITY_KERNEL("ConcatFromSequence", 11, ConcatFromSequenceKernel, kAllTypes);

}  // namespace parity::refrt
