// Shape-only ops: Reshape, Squeeze, Unsqueeze, Flatten, Shape, Size, Identity. Apart from Shape they
// return the input's buffer under a new shape (no copy; kernels never write into inputs).
#include <algorithm>

#include "../src/kernel.h"

namespace parity::refrt {
namespace {

class IdentityKernel : public Kernel {
 public:
  explicit IdentityKernel(const NodeDef&) {}
  void compute(KernelIO& io) const override {
    if (const auto& v = io.value(0))
      io.set_value(0, v);  // a sequence or optional (opset 14, 16)
    else
      io.outputs[0] = io.in(0);
  }
  bool takes_values() const override { return true; }
};

class ReshapeKernel : public Kernel {
 public:
  // allowzero exists from opset 14; before it, 0 always copies the input dim.
  explicit ReshapeKernel(const NodeDef& node)
      : node_(node), allowzero_(node.opset >= 14 && node.attr_int("allowzero", 0) != 0) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    const Tensor& shape_tensor = io.in(1);
    if (shape_tensor.rank() != 1) node_.fail("shape must be 1-D, got shape " + shape_str(shape_tensor.shape()));
    std::vector<int64_t> shape = int64_values(shape_tensor, "shape");
    int64_t infer = -1;
    bool has_zero = false;
    for (size_t i = 0; i < shape.size(); ++i) {
      if (shape[i] == 0 && !allowzero_) {
        if (i >= x.rank()) node_.fail("shape entry 0 at position " + std::to_string(i) + " has no input dim to copy");
        shape[i] = x.dim(i);
      }
      if (shape[i] == -1) {
        if (infer >= 0) node_.fail("shape " + shape_str(shape) + " has more than one -1");
        infer = static_cast<int64_t>(i);
      } else if (shape[i] < 0) {
        node_.fail("shape entry " + std::to_string(shape[i]) + " is invalid");
      }
      has_zero = has_zero || shape[i] == 0;
    }
    // Product of the known entries; an overflow means far more elements than the input has.
    int64_t known = 1;
    for (size_t i = 0; i < shape.size() && !has_zero; ++i)
      if (static_cast<int64_t>(i) != infer && __builtin_mul_overflow(known, shape[i], &known))
        node_.fail("cannot reshape " + shape_str(x.shape()) + " to " + shape_str(shape));
    if (has_zero) known = 0;
    if (infer >= 0) {
      if (allowzero_ && has_zero) node_.fail("with allowzero=1, shape cannot hold both 0 and -1");
      if (known == 0 || x.numel() % known != 0)
        node_.fail("cannot infer the -1 entry reshaping " + shape_str(x.shape()) + " to " + shape_str(shape));
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

// No axes (or an empty list, as ONNX Runtime reads it): drop every dim of size 1.
Tensor squeeze(const NodeDef& node, const Tensor& x, const std::vector<int64_t>* axes) {
  const int64_t rank = static_cast<int64_t>(x.rank());
  std::vector<bool> drop(x.rank(), false);
  if (axes && !axes->empty()) {
    for (int64_t a : *axes) {
      const size_t axis = static_cast<size_t>(normalize_axis(a, rank, "axis"));
      if (x.dim(axis) != 1)
        node.fail("cannot squeeze axis " + std::to_string(a) + " of size " + std::to_string(x.dim(axis)));
      drop[axis] = true;
    }
  } else {
    for (size_t i = 0; i < x.rank(); ++i) drop[i] = x.dim(i) == 1;
  }
  Shape shape;
  for (size_t i = 0; i < x.rank(); ++i)
    if (!drop[i]) shape.push_back(x.dim(i));
  return x.reshaped(shape);
}

// Axes index the output, whose rank is the input's plus the number of axes.
Tensor unsqueeze(const NodeDef& node, const Tensor& x, const std::vector<int64_t>& axes) {
  const int64_t out_rank = static_cast<int64_t>(x.rank() + axes.size());
  std::vector<bool> inserted(static_cast<size_t>(out_rank), false);
  for (int64_t a : axes) {
    const size_t axis = static_cast<size_t>(normalize_axis(a, out_rank, "axis"));
    if (inserted[axis]) node.fail("axes repeat axis " + std::to_string(axis));
    inserted[axis] = true;
  }
  Shape shape;
  size_t next = 0;
  for (size_t i = 0; i < inserted.size(); ++i) shape.push_back(inserted[i] ? 1 : x.dim(next++));
  return x.reshaped(shape);
}

// Squeeze/Unsqueeze 13+: axes are an (optional for Squeeze) input.
class SqueezeKernel : public Kernel {
 public:
  explicit SqueezeKernel(const NodeDef& node) : node_(node) {}
  void compute(KernelIO& io) const override {
    const Tensor* axes = io.optional(1);
    const std::vector<int64_t> values = axes ? int64_values(*axes, "axes") : std::vector<int64_t>{};
    io.outputs[0] = squeeze(node_, io.in(0), axes ? &values : nullptr);
  }

 private:
  NodeDef node_;
};

class UnsqueezeKernel : public Kernel {
 public:
  explicit UnsqueezeKernel(const NodeDef& node) : node_(node) {}
  void compute(KernelIO& io) const override {
    io.outputs[0] = unsqueeze(node_, io.in(0), int64_values(io.in(1), "axes"));
  }

 private:
  NodeDef node_;
};

// Squeeze/Unsqueeze 1 and 11: axes are an attribute.
class SqueezeAttributeKernel : public Kernel {
 public:
  explicit SqueezeAttributeKernel(const NodeDef& node) : node_(node), axes_(node.attr_ints("axes")) {}
  void compute(KernelIO& io) const override {
    io.outputs[0] = squeeze(node_, io.in(0), node_.attr("axes") ? &axes_ : nullptr);
  }

 private:
  NodeDef node_;
  std::vector<int64_t> axes_;
};

class UnsqueezeAttributeKernel : public Kernel {
 public:
  explicit UnsqueezeAttributeKernel(const NodeDef& node) : node_(node), axes_(node.attr_ints("axes")) {
    if (!node.attr("axes")) node.fail("missing required attribute 'axes'");
  }
  void compute(KernelIO& io) const override { io.outputs[0] = unsqueeze(node_, io.in(0), axes_); }

 private:
  NodeDef node_;
  std::vector<int64_t> axes_;
};

// 2-D result: dims before `axis` times dims from `axis` on.
class FlattenKernel : public Kernel {
 public:
  explicit FlattenKernel(const NodeDef& node) : axis_(node.attr_int("axis", 1)) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    const int64_t rank = static_cast<int64_t>(x.rank());
    if (axis_ < -rank || axis_ > rank)
      throw Error({"refrt"}, "axis " + std::to_string(axis_) + " is out of range for rank " + std::to_string(rank));
    const size_t axis = static_cast<size_t>(axis_ < 0 ? axis_ + rank : axis_);
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < x.rank(); ++d) (d < axis ? outer : inner) *= x.dim(d);
    io.outputs[0] = x.reshaped({outer, inner});
  }

 private:
  int64_t axis_;
};

// Shape 15 added start/end (clamped, negative from the back).
class ShapeKernel : public Kernel {
 public:
  explicit ShapeKernel(const NodeDef& node)
      : start_(node.opset >= 15 ? node.attr_int("start", 0) : 0),
        has_end_(node.opset >= 15 && node.attr("end")),
        end_(has_end_ ? node.attr_int("end", 0) : 0) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    const int64_t rank = static_cast<int64_t>(x.rank());
    auto clamp_dim = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
    const int64_t b = clamp_dim(start_), e = has_end_ ? clamp_dim(end_) : rank;
    Tensor out(DType::kInt64, {std::max<int64_t>(e - b, 0)});
    for (int64_t i = b; i < e; ++i) out.data<int64_t>()[i - b] = x.dim(static_cast<size_t>(i));
    io.outputs[0] = std::move(out);
  }

 private:
  int64_t start_;
  bool has_end_;
  int64_t end_;
};

class SizeKernel : public Kernel {
 public:
  explicit SizeKernel(const NodeDef&) {}
  void compute(KernelIO& io) const override {
    io.outputs[0] = Tensor::scalar<int64_t>(DType::kInt64, io.in(0).numel());
  }
};

}  // namespace

// Size 1; 13 widened types; 19 and 21 only widened types again.
PARITY_KERNEL("Size", 1, SizeKernel, kAllTypes);
// Identity, Flatten: same semantics since 1 (Flatten 11 allowed negative axes: accepted from 1).
PARITY_KERNEL("Identity", 1, IdentityKernel, kAllTypes);
PARITY_KERNEL("Flatten", 1, FlattenKernel, kAllTypes);
// Reshape 5: shape as input; 14: allowzero.
PARITY_KERNEL("Reshape", 5, ReshapeKernel, kAllTypes);
PARITY_KERNEL("Reshape", 14, ReshapeKernel, kAllTypes);
// Squeeze/Unsqueeze 1 (11: negative axes, accepted from 1): axes attribute; 13: axes input.
PARITY_KERNEL("Squeeze", 1, SqueezeAttributeKernel, kAllTypes);
PARITY_KERNEL("Squeeze", 13, SqueezeKernel, kAllTypes);
PARITY_KERNEL("Unsqueeze", 1, UnsqueezeAttributeKernel, kAllTypes);
PARITY_KERNEL("Unsqueeze", 13, UnsqueezeKernel, kAllTypes);
// Shape 1; 15: start/end.
PARITY_KERNEL("Shape", 1, ShapeKernel, kAllTypes);
PARITY_KERNEL("Shape", 15, ShapeKernel, kAllTypes);

}  // namespace parity::refrt
