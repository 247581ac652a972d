// Expand and Tile: both read the input with stride 0 along repeated dims (one strided copy, any dtype).
// Absurd target sizes fail on checked_numel or the allocation limit before anything is written.
#include "../src/kernel.h"
#include "../src/strided_copy.h"

namespace parity::refrt {
namespace {

class ExpandKernel : public Kernel {
 public:
  explicit ExpandKernel(const NodeDef& node) : node_(node) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    const Tensor& shape_tensor = io.in(1);
    if (shape_tensor.rank() != 1) node_.fail("shape must be 1-D, got shape " + shape_str(shape_tensor.shape()));
    const std::vector<int64_t> target = int64_values(shape_tensor, "shape");
    for (int64_t d : target)
      if (d < 0) node_.fail("shape " + shape_str(target) + " has a negative dim");
    const Shape out_shape = broadcast_shapes(x.shape(), target, &node_);
    checked_numel(out_shape, "expanded shape");
    // Input strides aligned right with the output; 0 where the input dim is 1 (or absent).
    const std::vector<int64_t> in_strides = row_major_strides(x.shape());
    std::vector<int64_t> strides(out_shape.size(), 0);
    for (size_t i = 0; i < x.rank(); ++i) {
      const size_t od = out_shape.size() - x.rank() + i;
      strides[od] = x.dim(i) == 1 ? 0 : in_strides[i];
    }
    Tensor out(x.dtype(), out_shape);
    strided_copy(io, x.raw(), 0, strides, out.mutable_raw(), out_shape, dtype_size(x.dtype()));
    io.outputs[0] = std::move(out);
  }

 private:
  NodeDef node_;
};

class TileKernel : public Kernel {
 public:
  explicit TileKernel(const NodeDef& node) : node_(node) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    const std::vector<int64_t> repeats = int64_values(io.in(1), "repeats");
    if (repeats.size() != x.rank())
      node_.fail("repeats has " + std::to_string(repeats.size()) + " entries for an input of rank " +
                 std::to_string(x.rank()));
    // View the output as [r0, d0, r1, d1, ...]: stride 0 over each repeat, the input's over each dim.
    const std::vector<int64_t> in_strides = row_major_strides(x.shape());
    Shape view_shape, out_shape;
    std::vector<int64_t> strides;
    for (size_t i = 0; i < x.rank(); ++i) {
      if (repeats[i] < 0) node_.fail("repeats entry " + std::to_string(repeats[i]) + " is negative");
      view_shape.insert(view_shape.end(), {repeats[i], x.dim(i)});
      strides.insert(strides.end(), {0, in_strides[i]});
      int64_t dim = 0;
      if (__builtin_mul_overflow(repeats[i], x.dim(i), &dim))
        node_.fail("tiling " + shape_str(x.shape()) + " by " + shape_str(repeats) + " overflows");
      out_shape.push_back(dim);
    }
    checked_numel(out_shape, "tiled shape");
    Tensor out(x.dtype(), out_shape);
    strided_copy(x.raw(), 0, strides, out.mutable_raw(), view_shape, dtype_size(x.dtype()));
    io.outputs[0] = std::move(out);
  }

 private:
  NodeDef node_;
};

}  // namespace

// Expand 8; 13 widened types.
PARITY_KERNEL("Expand", 8, ExpandKernel, kAllTypes);
// Tile 6 (repeats as input); 13 widened types.
PARITY_KERNEL("Tile", 6, TileKernel, kAllTypes);

}  // namespace parity::refrt
