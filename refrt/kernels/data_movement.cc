// Data movement: Concat, Transpose, Slice, Gather. They move bytes, so one implementation serves
// every dtype.
#include <algorithm>
#include <cstring>
#include <limits>

#include "../src/kernel.h"
#include "../src/strided_copy.h"

namespace parity::refrt {
namespace {

class ConcatKernel : public Kernel {
 public:
  explicit ConcatKernel(const NodeDef& node) : node_(node), axis_(node.attr_int("axis", 0)) {
    if (!node.attr("axis")) node.fail("missing required attribute 'axis'");
  }
  void compute(KernelIO& io) const override {
    const Tensor& first = io.in(0);
    const int64_t rank = static_cast<int64_t>(first.rank());
    const size_t axis = static_cast<size_t>(normalize_axis(axis_, rank, "axis"));
    Shape out_shape = first.shape();
    out_shape[axis] = 0;
    for (size_t i = 0; i < io.inputs.size(); ++i) {
      const Tensor& t = io.in(i);
      if (t.dtype() != first.dtype() || t.rank() != first.rank())
        node_.fail("input #" + std::to_string(i) + " (" + dtype_name(t.dtype()) + " " + shape_str(t.shape()) +
                   ") differs in dtype or rank from input #0 (" + dtype_name(first.dtype()) + " " +
                   shape_str(first.shape()) + ")");
      for (size_t d = 0; d < first.rank(); ++d)
        if (d != axis && t.dim(d) != first.dim(d))
          node_.fail("input #" + std::to_string(i) + " has shape " + shape_str(t.shape()) + ", incompatible with " +
                     shape_str(first.shape()) + " outside axis " + std::to_string(axis));
      out_shape[axis] += t.dim(axis);
    }
    Tensor out(first.dtype(), out_shape);
    if (out.numel() > 0) {
      int64_t outer = 1;
      for (size_t d = 0; d < axis; ++d) outer *= out_shape[d];
      const size_t out_row = out.nbytes() / static_cast<size_t>(outer);  // bytes of one outer slice
      char* dst = static_cast<char*>(out.mutable_raw());
      size_t col = 0;
      for (size_t i = 0; i < io.inputs.size(); ++i) {
        const Tensor& t = io.in(i);
        if (t.numel() == 0) continue;
        const size_t row = t.nbytes() / static_cast<size_t>(outer);
        const char* src = static_cast<const char*>(t.raw());
        for (int64_t o = 0; o < outer; ++o) std::memcpy(dst + o * out_row + col, src + o * row, row);
        col += row;
      }
    }
    io.outputs[0] = std::move(out);
  }

 private:
  NodeDef node_;
  int64_t axis_;
};

class TransposeKernel : public Kernel {
 public:
  explicit TransposeKernel(const NodeDef& node)
      : node_(node), perm_(node.attr_ints("perm")), has_perm_(node.attr("perm") != nullptr) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    const size_t rank = x.rank();
    std::vector<int64_t> reversed;  // the default perm: the dims reversed
    if (!has_perm_)
      for (size_t i = 0; i < rank; ++i) reversed.push_back(static_cast<int64_t>(rank - 1 - i));
    const std::vector<int64_t>& perm = has_perm_ ? perm_ : reversed;
    if (perm.size() != rank)
      node_.fail("perm has " + std::to_string(perm.size()) + " entries for an input of rank " + std::to_string(rank));
    // Few allocations: a small transformer block runs eight transposes of 320 floats a run.
    std::vector<bool> seen(rank, false);
    Shape out_shape(rank);
    std::vector<int64_t> strides(rank);
    for (size_t i = 0; i < rank; ++i) {
      const auto p = static_cast<size_t>(normalize_axis(perm[i], static_cast<int64_t>(rank), "perm entry"));
      if (seen[p]) node_.fail("perm repeats axis " + std::to_string(p));
      seen[p] = true;
      out_shape[i] = x.dim(p);
      int64_t stride = 1;  // x's row-major stride of dim p
      for (size_t d = p + 1; d < rank; ++d) stride *= x.dim(d);
      strides[i] = stride;
    }
    Tensor out(x.dtype(), std::move(out_shape));
    strided_copy(io, x.raw(), 0, strides, out.mutable_raw(), out.shape(), dtype_size(x.dtype()));
    io.outputs[0] = std::move(out);
  }

 private:
  NodeDef node_;
  std::vector<int64_t> perm_;
  bool has_perm_;
};

// Python-style slicing of `x` along `axes`; bounds are clamped, steps may be negative.
Tensor slice_tensor(const KernelIO& io, const NodeDef& node, const Tensor& x, const std::vector<int64_t>& starts,
                    const std::vector<int64_t>& ends, std::vector<int64_t> axes, std::vector<int64_t> steps) {
  const int64_t rank = static_cast<int64_t>(x.rank());
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    node.fail("starts, ends, axes and steps differ in length (" + std::to_string(starts.size()) + ", " +
              std::to_string(ends.size()) + ", " + std::to_string(axes.size()) + ", " + std::to_string(steps.size()) +
              ")");
  const std::vector<int64_t> in_strides = row_major_strides(x.shape());
  Shape out_shape = x.shape();
  std::vector<int64_t> strides = in_strides;
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  int64_t offset = 0;
  for (size_t i = 0; i < starts.size(); ++i) {
    const size_t axis = static_cast<size_t>(normalize_axis(axes[i], rank, "axis"));
    if (seen[axis]) node.fail("axes repeat axis " + std::to_string(axis));
    seen[axis] = true;
    const int64_t dim = x.dim(axis), s = steps[i];
    if (s == 0) node.fail("step 0 is invalid");
    int64_t b = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t e = ends[i] < 0 ? ends[i] + dim : ends[i];
    uint64_t count = 0;
    if (dim > 0 && s > 0) {
      b = std::clamp<int64_t>(b, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      count = e > b ? static_cast<uint64_t>(e - b - 1) / static_cast<uint64_t>(s) + 1 : 0;
    } else if (dim > 0) {
      b = std::clamp<int64_t>(b, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      const uint64_t magnitude = static_cast<uint64_t>(-(s + 1)) + 1;  // |s| without overflow at INT64_MIN
      count = b > e ? static_cast<uint64_t>(b - e - 1) / magnitude + 1 : 0;
    }
    out_shape[axis] = static_cast<int64_t>(count);
    if (count > 0) offset += b * in_strides[axis];
    // With one element the step is never taken; otherwise |step| < dim, so the product fits.
    strides[axis] = count > 1 ? s * in_strides[axis] : in_strides[axis];
  }
  Tensor out(x.dtype(), out_shape);
  strided_copy(io, x.raw(), offset, strides, out.mutable_raw(), out_shape, dtype_size(x.dtype()));
  return out;
}

// Slice 10+: starts, ends, axes, steps are inputs.
class SliceKernel : public Kernel {
 public:
  explicit SliceKernel(const NodeDef& node) : node_(node) {}
  void compute(KernelIO& io) const override {
    const Tensor* axes = io.optional(3);
    const Tensor* steps = io.optional(4);
    io.outputs[0] = slice_tensor(io, node_, io.in(0), int64_values(io.in(1), "starts"), int64_values(io.in(2), "ends"),
                                 axes ? int64_values(*axes, "axes") : std::vector<int64_t>{},
                                 steps ? int64_values(*steps, "steps") : std::vector<int64_t>{});
  }

 private:
  NodeDef node_;
};

// Slice 1: starts, ends, axes are attributes; no steps.
class SliceAttributesKernel : public Kernel {
 public:
  explicit SliceAttributesKernel(const NodeDef& node)
      : node_(node), starts_(node.attr_ints("starts")), ends_(node.attr_ints("ends")), axes_(node.attr_ints("axes")) {
    if (!node.attr("starts") || !node.attr("ends")) node.fail("missing required attribute 'starts' or 'ends'");
  }
  void compute(KernelIO& io) const override {
    io.outputs[0] = slice_tensor(io, node_, io.in(0), starts_, ends_, axes_, {});
  }

 private:
  NodeDef node_;
  std::vector<int64_t> starts_, ends_, axes_;
};

class GatherKernel : public Kernel {
 public:
  explicit GatherKernel(const NodeDef& node) : node_(node), axis_(node.attr_int("axis", 0)) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    const Tensor& index_tensor = io.in(1);
    if (x.rank() == 0) node_.fail("data must have rank >= 1");
    const size_t axis = static_cast<size_t>(normalize_axis(axis_, static_cast<int64_t>(x.rank()), "axis"));
    std::vector<int64_t> indices = int64_values(index_tensor, "indices");
    const int64_t dim = x.dim(axis);
    for (auto& idx : indices) {  // checked before any copy, even when the output is empty
      if (idx < -dim || idx >= dim)
        node_.fail("index " + std::to_string(idx) + " is out of range for axis " + std::to_string(axis) + " of size " +
                   std::to_string(dim));
      if (idx < 0) idx += dim;
    }
    Shape out_shape(x.shape().begin(), x.shape().begin() + static_cast<std::ptrdiff_t>(axis));
    out_shape.insert(out_shape.end(), index_tensor.shape().begin(), index_tensor.shape().end());
    out_shape.insert(out_shape.end(), x.shape().begin() + static_cast<std::ptrdiff_t>(axis) + 1, x.shape().end());
    Tensor out(x.dtype(), out_shape);
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < axis; ++d) outer *= x.dim(d);
    for (size_t d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
    const size_t block = static_cast<size_t>(inner) * dtype_size(x.dtype());
    if (out.numel() > 0) {
      const char* src = static_cast<const char*>(x.raw());
      char* dst = static_cast<char*>(out.mutable_raw());
      for (int64_t o = 0; o < outer; ++o)
        for (size_t j = 0; j < indices.size(); ++j)
          std::memcpy(dst + (static_cast<size_t>(o) * indices.size() + j) * block,
                      src + static_cast<size_t>(o * dim + indices[j]) * block, block);
    }
    io.outputs[0] = std::move(out);
  }

 private:
  NodeDef node_;
  int64_t axis_;
};

}  // namespace

// Concat 4: axis required; 11 allowed negative axes (accepted from 4: a superset); 13 widened types.
PARITY_KERNEL("Concat", 4, ConcatKernel, kAllTypes);
// Transpose: same semantics since 1; later versions widened types.
PARITY_KERNEL("Transpose", 1, TransposeKernel, kAllTypes);
// Slice 1: attributes; 10: inputs with steps; 11 negative axes, 13 types.
PARITY_KERNEL("Slice", 1, SliceAttributesKernel, kAllTypes);
PARITY_KERNEL("Slice", 10, SliceKernel, kAllTypes);
// Gather 1; 11 defined negative indices (accepted from 1); 13 widened types.
PARITY_KERNEL("Gather", 1, GatherKernel, kAllTypes);

}  // namespace parity::refrt
