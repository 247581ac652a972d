// Shape and data-movement kernels. They move bytes, so one implementation serves every dtype.
#include <algorithm>
#include <cstring>
#include <limits>

#include "../src/kernel.h"

namespace parity::refrt {
namespace {

const std::vector<DType> kAllTypes = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                                      DType::kInt8,    DType::kInt16,   DType::kInt32,   DType::kInt64,
                                      DType::kUInt8,   DType::kBool};

class IdentityKernel : public Kernel {
 public:
  explicit IdentityKernel(const NodeDef&) {}
  void compute(KernelIO& io) const override { io.outputs[0] = io.in(0); }
};

class ConcatKernel : public Kernel {
 public:
  explicit ConcatKernel(const NodeDef& node) : node_(node), axis_(node.attr_int("axis", 0)) {
    if (!node.attr("axis")) node.fail("missing required attribute 'axis'");
  }
  void compute(KernelIO& io) const override {
    const Tensor& first = io.in(0);
    const int64_t rank = static_cast<int64_t>(first.rank());
    const int64_t axis = normalize_axis(axis_, rank, "axis");
    Shape out_shape = first.shape();
    out_shape[static_cast<size_t>(axis)] = 0;
    for (size_t i = 0; i < io.inputs.size(); ++i) {
      const Tensor& t = io.in(i);
      if (t.dtype() != first.dtype() || static_cast<int64_t>(t.rank()) != rank)
        node_.fail("input #" + std::to_string(i) + " differs in dtype or rank from input #0");
      for (int64_t d = 0; d < rank; ++d)
        if (d != axis && t.dim(static_cast<size_t>(d)) != first.dim(static_cast<size_t>(d)))
          node_.fail("input #" + std::to_string(i) + " has shape " + shape_str(t.shape()) + ", incompatible with " +
                     shape_str(first.shape()));
      out_shape[static_cast<size_t>(axis)] += t.dim(static_cast<size_t>(axis));
    }
    Tensor out(first.dtype(), out_shape);
    int64_t outer = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= out_shape[static_cast<size_t>(d)];
    const size_t out_row = out.numel() == 0 ? 0 : out.nbytes() / static_cast<size_t>(std::max<int64_t>(outer, 1));
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
    io.outputs[0] = std::move(out);
  }

 private:
  NodeDef node_;
  int64_t axis_;
};

class TransposeKernel : public Kernel {
 public:
  explicit TransposeKernel(const NodeDef& node) : node_(node), perm_(node.attr_ints("perm")) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    const size_t rank = x.rank();
    std::vector<int64_t> perm = perm_;
    if (perm.empty())
      for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(rank - 1 - i));
    if (perm.size() != rank) node_.fail("perm has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(rank));
    std::vector<bool> seen(rank, false);
    for (auto& p : perm) {
      p = normalize_axis(p, static_cast<int64_t>(rank), "perm entry");
      if (seen[static_cast<size_t>(p)]) node_.fail("perm repeats an axis");
      seen[static_cast<size_t>(p)] = true;
    }
    Shape out_shape(rank);
    for (size_t i = 0; i < rank; ++i) out_shape[i] = x.dim(static_cast<size_t>(perm[i]));
    Tensor out(x.dtype(), out_shape);
    const std::vector<int64_t> in_strides = row_major_strides(x.shape());
    const size_t elem = dtype_size(x.dtype());
    const char* src = static_cast<const char*>(x.raw());
    char* dst = static_cast<char*>(out.mutable_raw());
    std::vector<int64_t> index(rank, 0);
    for (int64_t o = 0; o < out.numel(); ++o) {
      int64_t off = 0;
      for (size_t d = 0; d < rank; ++d) off += index[d] * in_strides[static_cast<size_t>(perm[d])];
      std::memcpy(dst + o * elem, src + off * elem, elem);
      next_index(index, out_shape);
    }
    io.outputs[0] = std::move(out);
  }

 private:
  NodeDef node_;
  std::vector<int64_t> perm_;
};

class ReshapeKernel : public Kernel {
 public:
  explicit ReshapeKernel(const NodeDef& node) : node_(node), allowzero_(node.attr_int("allowzero", 0) != 0) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    std::vector<int64_t> shape = int64_values(io.in(1), "shape");
    int64_t infer = -1, known = 1;
    for (size_t i = 0; i < shape.size(); ++i) {
      if (shape[i] == 0 && !allowzero_) {
        if (i >= x.rank()) node_.fail("shape entry 0 at position " + std::to_string(i) + " has no input dim to copy");
        shape[i] = x.dim(i);
      }
      if (shape[i] == -1) {
        if (infer >= 0) node_.fail("shape has more than one -1");
        infer = static_cast<int64_t>(i);
      } else if (shape[i] < 0) {
        node_.fail("shape entry " + std::to_string(shape[i]) + " is invalid");
      } else {
        known *= shape[i];
      }
    }
    if (infer >= 0) {
      if (known == 0 || x.numel() % known != 0) node_.fail("cannot infer -1 reshaping " + shape_str(x.shape()));
      shape[static_cast<size_t>(infer)] = x.numel() / known;
    }
    if (checked_numel(shape) != x.numel())
      node_.fail("cannot reshape " + shape_str(x.shape()) + " to " + shape_str(shape));
    io.outputs[0] = x.reshaped(shape);
  }

 private:
  NodeDef node_;
  bool allowzero_;
};

// Slice (opset 10+): starts/ends/axes/steps as inputs; bounds clamp like Python slicing.
class SliceKernel : public Kernel {
 public:
  explicit SliceKernel(const NodeDef& node) : node_(node) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    const int64_t rank = static_cast<int64_t>(x.rank());
    const auto starts = int64_values(io.in(1), "starts");
    const auto ends = int64_values(io.in(2), "ends");
    std::vector<int64_t> axes, steps;
    if (io.optional(3)) axes = int64_values(*io.optional(3), "axes");
    else for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    if (io.optional(4)) steps = int64_values(*io.optional(4), "steps");
    else steps.assign(starts.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
      node_.fail("starts, ends, axes and steps differ in length");
    std::vector<int64_t> begin(static_cast<size_t>(rank), 0), step(static_cast<size_t>(rank), 1);
    Shape out_shape = x.shape();
    for (size_t i = 0; i < starts.size(); ++i) {
      const size_t axis = static_cast<size_t>(normalize_axis(axes[i], rank, "axis"));
      const int64_t dim = x.dim(axis), s = steps[i];
      if (s == 0) node_.fail("step 0 is invalid");
      int64_t b = starts[i] < 0 ? starts[i] + dim : starts[i];
      int64_t e = ends[i] < 0 && ends[i] != std::numeric_limits<int64_t>::min() ? ends[i] + dim : ends[i];
      if (ends[i] == std::numeric_limits<int64_t>::min()) e = -1;
      if (s > 0) {
        b = std::clamp<int64_t>(b, 0, dim);
        e = std::clamp<int64_t>(e, 0, dim);
        out_shape[axis] = e > b ? (e - b + s - 1) / s : 0;
      } else {
        b = std::clamp<int64_t>(b, 0, dim - 1);
        e = std::clamp<int64_t>(e, -1, dim - 1);
        out_shape[axis] = b > e ? (b - e - s - 1) / -s : 0;
      }
      begin[axis] = b;
      step[axis] = s;
    }
    Tensor out(x.dtype(), out_shape);
    const std::vector<int64_t> strides = row_major_strides(x.shape());
    const size_t elem = dtype_size(x.dtype());
    const char* src = static_cast<const char*>(x.raw());
    char* dst = static_cast<char*>(out.mutable_raw());
    std::vector<int64_t> index(static_cast<size_t>(rank), 0);
    for (int64_t o = 0; o < out.numel(); ++o) {
      int64_t off = 0;
      for (size_t d = 0; d < static_cast<size_t>(rank); ++d) off += (begin[d] + index[d] * step[d]) * strides[d];
      std::memcpy(dst + o * elem, src + off * elem, elem);
      next_index(index, out_shape);
    }
    io.outputs[0] = std::move(out);
  }

 private:
  NodeDef node_;
};

class UnsqueezeKernel : public Kernel {
 public:
  explicit UnsqueezeKernel(const NodeDef& node) : node_(node) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    const int64_t out_rank = static_cast<int64_t>(x.rank() + static_cast<size_t>(io.in(1).numel()));
    std::vector<bool> inserted(static_cast<size_t>(out_rank), false);
    for (int64_t a : int64_values(io.in(1), "axes")) {
      const size_t axis = static_cast<size_t>(normalize_axis(a, out_rank, "axis"));
      if (inserted[axis]) node_.fail("axes repeat an axis");
      inserted[axis] = true;
    }
    Shape shape;
    size_t next = 0;
    for (int64_t i = 0; i < out_rank; ++i) shape.push_back(inserted[static_cast<size_t>(i)] ? 1 : x.dim(next++));
    io.outputs[0] = x.reshaped(shape);
  }

 private:
  NodeDef node_;
};

class SqueezeKernel : public Kernel {
 public:
  explicit SqueezeKernel(const NodeDef& node) : node_(node) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    const int64_t rank = static_cast<int64_t>(x.rank());
    std::vector<bool> drop(static_cast<size_t>(rank), false);
    if (io.optional(1)) {
      for (int64_t a : int64_values(*io.optional(1), "axes")) {
        const size_t axis = static_cast<size_t>(normalize_axis(a, rank, "axis"));
        if (x.dim(axis) != 1) node_.fail("cannot squeeze axis " + std::to_string(a) + " of size " + std::to_string(x.dim(axis)));
        drop[axis] = true;
      }
    } else {
      for (size_t i = 0; i < x.rank(); ++i) drop[i] = x.dim(i) == 1;
    }
    Shape shape;
    for (size_t i = 0; i < x.rank(); ++i)
      if (!drop[i]) shape.push_back(x.dim(i));
    io.outputs[0] = x.reshaped(shape);
  }

 private:
  NodeDef node_;
};

class ShapeKernel : public Kernel {
 public:
  explicit ShapeKernel(const NodeDef& node) : start_(node.attr_int("start", 0)), end_(node.attr("end")) {
    if (end_) end_value_ = node.attr_int("end", 0);
  }
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    const int64_t rank = static_cast<int64_t>(x.rank());
    auto clampdim = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
    const int64_t b = clampdim(start_), e = end_ ? clampdim(end_value_) : rank;
    Tensor out(DType::kInt64, {std::max<int64_t>(e - b, 0)});
    for (int64_t i = b; i < e; ++i) out.data<int64_t>()[i - b] = x.dim(static_cast<size_t>(i));
    io.outputs[0] = std::move(out);
  }

 private:
  int64_t start_;
  bool end_;
  int64_t end_value_ = 0;
};

class GatherKernel : public Kernel {
 public:
  explicit GatherKernel(const NodeDef& node) : node_(node), axis_(node.attr_int("axis", 0)) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    const int64_t rank = static_cast<int64_t>(x.rank());
    if (rank == 0) node_.fail("Gather needs data of rank >= 1");
    const size_t axis = static_cast<size_t>(normalize_axis(axis_, rank, "axis"));
    const auto indices = int64_values(io.in(1), "indices");
    const int64_t dim = x.dim(axis);
    Shape out_shape(x.shape().begin(), x.shape().begin() + static_cast<int64_t>(axis));
    for (int64_t d : io.in(1).shape()) out_shape.push_back(d);
    out_shape.insert(out_shape.end(), x.shape().begin() + static_cast<int64_t>(axis) + 1, x.shape().end());
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < axis; ++d) outer *= x.dim(d);
    for (size_t d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
    Tensor out(x.dtype(), out_shape);
    const size_t block = static_cast<size_t>(inner) * dtype_size(x.dtype());
    const char* src = static_cast<const char*>(x.raw());
    char* dst = static_cast<char*>(out.mutable_raw());
    for (int64_t o = 0; o < outer; ++o)
      for (size_t j = 0; j < indices.size(); ++j) {
        int64_t idx = indices[j];
        if (idx < -dim || idx >= dim)
          node_.fail("index " + std::to_string(idx) + " is out of range for axis of size " + std::to_string(dim));
        if (idx < 0) idx += dim;
        std::memcpy(dst + (static_cast<size_t>(o) * indices.size() + j) * block,
                    src + static_cast<size_t>(o * dim + idx) * block, block);
      }
    io.outputs[0] = std::move(out);
  }

 private:
  NodeDef node_;
  int64_t axis_;
};

class FlattenKernel : public Kernel {
 public:
  explicit FlattenKernel(const NodeDef& node) : axis_(node.attr_int("axis", 1)) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    const int64_t rank = static_cast<int64_t>(x.rank());
    const int64_t axis = axis_ == rank ? rank : normalize_axis(axis_, std::max<int64_t>(rank, 1), "axis");
    int64_t outer = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x.dim(static_cast<size_t>(d));
    io.outputs[0] = x.reshaped({outer, outer == 0 ? 0 : x.numel() / outer});
  }

 private:
  int64_t axis_;
};

}  // namespace

PARITY_KERNEL("Identity", 16, IdentityKernel, kAllTypes);
PARITY_KERNEL("Concat", 13, ConcatKernel, kAllTypes);
PARITY_KERNEL("Transpose", 13, TransposeKernel, kAllTypes);
PARITY_KERNEL("Reshape", 14, ReshapeKernel, kAllTypes);
PARITY_KERNEL("Slice", 13, SliceKernel, kAllTypes);
PARITY_KERNEL("Unsqueeze", 13, UnsqueezeKernel, kAllTypes);
PARITY_KERNEL("Squeeze", 13, SqueezeKernel, kAllTypes);
PARITY_KERNEL("Shape", 15, ShapeKernel, kAllTypes);
PARITY_KERNEL("Gather", 13, GatherKernel, kAllTypes);
PARITY_KERNEL("Flatten", 13, FlattenKernel, kAllTypes);

}  // namespace parity::refrt
