// DepthToSpace and SpaceToDepth: a reshape to 6-D, a transpose, a reshape back (one strided copy).
#include <limits>

#include "../src/kernel.h"
#include "../src/strided_copy.h"

namespace parity::refrt {
namespace {

// x viewed as `view` (same element count), permuted by `perm`, returned with shape `out_shape`.
Tensor permuted(const Tensor& x, const Shape& view, const std::vector<int64_t>& perm, const Shape& out_shape) {
  const std::vector<int64_t> view_strides = row_major_strides(view);
  Shape shape(perm.size());
  std::vector<int64_t> strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    shape[i] = view[static_cast<size_t>(perm[i])];
    strides[i] = view_strides[static_cast<size_t>(perm[i])];
  }
  Tensor out(x.dtype(), out_shape);
  strided_copy(x.raw(), 0, strides, out.mutable_raw(), shape, dtype_size(x.dtype()));
  return out;
}

int64_t block_size(const NodeDef& node) {
  const int64_t b = node.attr_int("blocksize", 0);
  if (!node.attr("blocksize")) node.fail("missing required attribute 'blocksize'");
  if (b < 1) node.fail("blocksize " + std::to_string(b) + " must be positive");
  return b;
}

class DepthToSpaceKernel : public Kernel {
 public:
  explicit DepthToSpaceKernel(const NodeDef& node) : node_(node), block_(block_size(node)) {
    const Attribute* mode = node.opset >= 11 ? node.attr("mode", Attribute::Type::kString) : nullptr;
    const std::string m = mode ? mode->s : "DCR";
    if (m != "DCR" && m != "CRD") node.fail("mode '" + m + "' must be DCR or CRD");
    crd_ = m == "CRD";
  }
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    if (x.rank() != 4) node_.fail("input must be 4-D [N, C, H, W], got " + shape_str(x.shape()));
    const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3), b = block_;
    // b > c / b first (b * b > c): b * b cannot overflow after it.
    if (b > c / b || c % (b * b) != 0)
      node_.fail("channels " + std::to_string(c) + " are not divisible by blocksize^2 (blocksize " + std::to_string(b) +
                 ")");
    const int64_t oc = c / (b * b);
    const Shape out_shape{n, oc, h * b, w * b};
    io.outputs[0] = crd_ ? permuted(x, {n, oc, b, b, h, w}, {0, 1, 4, 2, 5, 3}, out_shape)
                         : permuted(x, {n, b, b, oc, h, w}, {0, 3, 4, 1, 5, 2}, out_shape);
  }

 private:
  NodeDef node_;
  int64_t block_;
  bool crd_ = false;
};

class SpaceToDepthKernel : public Kernel {
 public:
  explicit SpaceToDepthKernel(const NodeDef& node) : node_(node), block_(block_size(node)) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    if (x.rank() != 4) node_.fail("input must be 4-D [N, C, H, W], got " + shape_str(x.shape()));
    const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3), b = block_;
    if (h % b != 0 || w % b != 0)
      node_.fail("spatial dims " + std::to_string(h) + "x" + std::to_string(w) + " are not divisible by blocksize " +
                 std::to_string(b));
    // Empty spatial dims leave c * b * b unbounded by the input's size: check it fits.
    if (b > std::numeric_limits<int64_t>::max() / b || (c > 0 && b * b > std::numeric_limits<int64_t>::max() / c))
      node_.fail("output channels " + std::to_string(c) + " x blocksize^2 overflow (blocksize " + std::to_string(b) +
                 ")");
    io.outputs[0] = permuted(x, {n, c, h / b, b, w / b, b}, {0, 3, 5, 1, 2, 4}, {n, c * b * b, h / b, w / b});
  }

 private:
  NodeDef node_;
  int64_t block_;
};

}  // namespace

// DepthToSpace 1 (DCR); 11 mode attribute; 13 widened types.
PARITY_KERNEL("DepthToSpace", 1, DepthToSpaceKernel, kAllTypes);
PARITY_KERNEL("DepthToSpace", 11, DepthToSpaceKernel, kAllTypes);
// SpaceToDepth 1; 13 widened types.
PARITY_KERNEL("SpaceToDepth", 1, SpaceToDepthKernel, kAllTypes);

}  // namespace parity::refrt
