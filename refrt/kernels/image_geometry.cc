// Col2Im (18), AffineGrid (20), MaxUnpool (9, 11, 22) and CenterCropPad (18): the geometric
// rearrangements of images that torch's fold, affine_grid, max_unpool and center crops express.
#include <cstring>

#include "double_io.h"
#include "elementwise.h"

namespace parity::refrt {
namespace {

// Odometer step over a multi-index `at` within `dims` (row-major); false after the last one.
bool next_index(std::vector<int64_t>& at, const std::vector<int64_t>& dims) {
  for (size_t d = dims.size(); d-- > 0;) {
    if (++at[d] < dims[d]) return true;
    at[d] = 0;
  }
  return false;
}

std::vector<int64_t> int_vector_input(const NodeDef& node, const Tensor& t, const std::string& what) {
  if (t.rank() != 1) node.fail(what + " must be 1-D, got shape " + shape_str(t.shape()));
  if (t.dtype() != DType::kInt64 && t.dtype() != DType::kInt32)
    node.fail(what + " must be int32/int64, got " + dtype_name(t.dtype()));
  return int64_values(t, what);
}

// Col2Im: input [N, C * prod(block), L] of the sliding blocks of an image (as torch's unfold gives
// them), summed back into [N, C, *image_shape]; L must equal the number of block positions.
class Col2ImKernel : public Kernel {
 public:
  explicit Col2ImKernel(const NodeDef& node)
      : node_(node),
        dilations_(node.attr_ints("dilations")),
        pads_(node.attr_ints("pads")),
        strides_(node.attr_ints("strides")) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    if (!is_float_dtype(x.dtype())) fail_dtype(node_, x.dtype());
    const auto image = int_vector_input(node_, io.in(1), "image_shape");
    const auto block = int_vector_input(node_, io.in(2), "block_shape");
    const size_t r = image.size();
    if (r == 0 || block.size() != r) node_.fail("image_shape and block_shape must have the same length >= 1");
    const auto dil = dilations_.empty() ? std::vector<int64_t>(r, 1) : dilations_;
    const auto str = strides_.empty() ? std::vector<int64_t>(r, 1) : strides_;
    const auto pad = pads_.empty() ? std::vector<int64_t>(2 * r, 0) : pads_;
    if (dil.size() != r || str.size() != r || pad.size() != 2 * r)
      node_.fail("dilations/strides need " + std::to_string(r) + " values and pads " + std::to_string(2 * r));
    int64_t block_size = 1, positions = 1;
    std::vector<int64_t> cols(r);
    for (size_t d = 0; d < r; ++d) {
      if (image[d] <= 0 || block[d] <= 0 || dil[d] <= 0 || str[d] <= 0 || pad[d] < 0 || pad[d + r] < 0)
        node_.fail("image_shape, block_shape, dilations and strides must be > 0 and pads >= 0");
      // Checked: a model may carry any int64 here, and the products below must not wrap.
      int64_t padded = 0, span = 0;
      if (__builtin_add_overflow(image[d], pad[d], &padded) || __builtin_add_overflow(padded, pad[d + r], &padded) ||
          __builtin_mul_overflow(dil[d], block[d] - 1, &span))
        node_.fail("image_shape, pads, dilations and block_shape overflow int64 along dim " + std::to_string(d));
      if (span >= padded) node_.fail("the blocks do not fit the padded image along dim " + std::to_string(d));
      cols[d] = (padded - span - 1) / str[d] + 1;
      if (__builtin_mul_overflow(block_size, block[d], &block_size) ||
          __builtin_mul_overflow(positions, cols[d], &positions))
        node_.fail("the block size or the number of block positions overflows int64");
    }
    if (x.rank() != 3 || x.dim(1) % block_size != 0 || x.dim(2) != positions)
      node_.fail("input must be [N, C * " + std::to_string(block_size) + ", " + std::to_string(positions) +
                 "] for these shapes, got " + shape_str(x.shape()));
    const int64_t n = x.dim(0), c = x.dim(1) / block_size;
    Shape shape{n, c};
    shape.insert(shape.end(), image.begin(), image.end());
    const int64_t plane = checked_numel(image);
    const std::vector<double> v = float_values(x);
    std::vector<double> y = output_buffer(shape, "Col2Im output");
    for (int64_t nc = 0; nc < n * c; ++nc) {
      std::vector<int64_t> k(r, 0);
      int64_t kk = 0;
      do {
        std::vector<int64_t> p(r, 0);
        int64_t pp = 0;
        do {
          int64_t at = 0;
          bool inside = true;
          for (size_t d = 0; d < r && inside; ++d) {
            const int64_t i = p[d] * str[d] - pad[d] + k[d] * dil[d];
            inside = i >= 0 && i < image[d];
            at = at * image[d] + i;
          }
          if (inside) y[nc * plane + at] += v[(nc * block_size + kk) * positions + pp];
          ++pp;
        } while (next_index(p, cols));
        ++kk;
      } while (next_index(k, block));
    }
    io.outputs[0] = float_tensor(x.dtype(), shape, y);
  }

 private:
  NodeDef node_;
  std::vector<int64_t> dilations_, pads_, strides_;
};

// AffineGrid: for theta [N, 2, 3] (2-D) or [N, 3, 4] (3-D) and size [N, C, (D,) H, W], the sampling
// grid [N, (D,) H, W, 2 or 3] of theta applied to the normalised coordinates (x, y(, z), 1), where a dim
// of size S has points -1 + (2i + 1) / S, or -1 + 2i / (S - 1) with align_corners.
class AffineGridKernel : public Kernel {
 public:
  explicit AffineGridKernel(const NodeDef& node) : node_(node), align_(node.attr_int("align_corners", 0) != 0) {}
  void compute(KernelIO& io) const override {
    const Tensor& theta = io.in(0);
    if (!is_float_dtype(theta.dtype())) fail_dtype(node_, theta.dtype());
    const auto size = int_vector_input(node_, io.in(1), "size");
    const int64_t dims = static_cast<int64_t>(size.size()) - 2;
    if (dims != 2 && dims != 3) node_.fail("size must have 4 or 5 values, got " + std::to_string(size.size()));
    if (theta.shape() != Shape{size[0], dims, dims + 1})
      node_.fail("theta must be [" + std::to_string(size[0]) + ", " + std::to_string(dims) + ", " +
                 std::to_string(dims + 1) + "] for this size, got " + shape_str(theta.shape()));
    std::vector<int64_t> spatial(size.begin() + 2, size.end());  // (D,) H, W
    for (int64_t s : spatial)
      if (s <= 0) node_.fail("size must have spatial dims > 0");
    const int64_t points = checked_numel(spatial, "AffineGrid output");
    Shape shape{size[0]};
    shape.insert(shape.end(), spatial.begin(), spatial.end());
    shape.push_back(dims);
    const std::vector<double> th = float_values(theta);
    std::vector<double> y = output_buffer(shape, "AffineGrid output");
    const auto coord = [&](int64_t i, int64_t s) {
      if (align_) return s == 1 ? -1.0 : -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(s - 1);
      return -1.0 + (2.0 * static_cast<double>(i) + 1.0) / static_cast<double>(s);
    };
    for (int64_t b = 0; b < size[0]; ++b) {
      std::vector<int64_t> at(spatial.size(), 0);
      int64_t p = 0;
      do {
        double h[4] = {0, 0, 0, 1};  // x (innermost dim), y, z, 1
        for (int64_t d = 0; d < dims; ++d) h[d] = coord(at[dims - 1 - d], spatial[dims - 1 - d]);
        for (int64_t row = 0; row < dims; ++row) {
          double s = 0;
          for (int64_t k = 0; k <= dims; ++k) s += th[(b * dims + row) * (dims + 1) + k] * (k == dims ? 1.0 : h[k]);
          y[(b * points + p) * dims + row] = s;
        }
        ++p;
      } while (next_index(at, spatial));
    }
    io.outputs[0] = float_tensor(theta.dtype(), shape, y);
  }

 private:
  NodeDef node_;
  bool align_;
};

// MaxUnpool: X [N, C, spatial...] scattered to the flat positions `indices` (MaxPool's second
// output: indices into the whole [N, C, spatial...] tensor of the pooled shape's input) of a zero
// tensor of the inferred shape (in - 1) * stride - pads + kernel; with output_shape, that tensor is
// placed at the start of a zero tensor of output_shape (which must not be smaller), as ONNX specifies.
class MaxUnpoolKernel : public Kernel {
 public:
  explicit MaxUnpoolKernel(const NodeDef& node)
      : node_(node),
        kernel_(node.attr_ints("kernel_shape")),
        pads_(node.attr_ints("pads")),
        strides_(node.attr_ints("strides")) {
    if (kernel_.empty()) node.fail("kernel_shape is required");
  }
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    const Tensor& idx = io.in(1);
    const size_t r = kernel_.size(), size = dtype_size(x.dtype());
    if (size == 0) fail_dtype(node_, x.dtype());
    if (x.rank() != r + 2)
      node_.fail("X must have rank " + std::to_string(r + 2) + " for this kernel_shape, got " + shape_str(x.shape()));
    if (idx.dtype() != DType::kInt64 || idx.shape() != x.shape())
      node_.fail("indices must be int64 of X's shape " + shape_str(x.shape()) + ", got " + dtype_name(idx.dtype()) +
                 " " + shape_str(idx.shape()));
    const auto str = strides_.empty() ? std::vector<int64_t>(r, 1) : strides_;
    const auto pad = pads_.empty() ? std::vector<int64_t>(2 * r, 0) : pads_;
    if (str.size() != r || pad.size() != 2 * r)
      node_.fail("strides need " + std::to_string(r) + " values and pads " + std::to_string(2 * r));
    Shape inferred{x.dim(0), x.dim(1)};
    for (size_t d = 0; d < r; ++d) {
      inferred.push_back((x.dim(d + 2) - 1) * str[d] - pad[d] - pad[d + r] + kernel_[d]);
      if (inferred.back() < 0) node_.fail("the inferred output dim " + std::to_string(d + 2) + " is negative");
    }
    Shape shape = inferred;
    if (io.optional(2)) {
      shape = int_vector_input(node_, *io.optional(2), "output_shape");
      if (shape.size() != inferred.size())
        node_.fail("output_shape must have " + std::to_string(inferred.size()) + " values");
      for (size_t d = 0; d < shape.size(); ++d)
        if (shape[d] < inferred[d])
          node_.fail("output_shape " + shape_str(shape) + " is smaller than the inferred shape " + shape_str(inferred));
    }
    const int64_t total = checked_numel(inferred, "MaxUnpool output");
    Tensor out(x.dtype(), shape, /*zero=*/true);
    const auto* src = static_cast<const unsigned char*>(x.raw());
    auto* dst = static_cast<unsigned char*>(out.mutable_raw());
    const int64_t* ip = idx.data<int64_t>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      int64_t flat = ip[i];
      if (flat < 0 || flat >= total)
        node_.fail("index " + std::to_string(flat) + " at position " + std::to_string(i) + " is outside [0, " +
                   std::to_string(total) + ")");
      int64_t at = 0, stride = 1;  // the inferred-shape position mapped into output_shape
      for (size_t d = shape.size(); d-- > 0;) {
        at += (flat % inferred[d]) * stride;
        flat /= inferred[d];
        stride *= shape[d];
      }
      std::memcpy(dst + static_cast<size_t>(at) * size, src + static_cast<size_t>(i) * size, size);
    }
    io.outputs[0] = std::move(out);
  }

 private:
  NodeDef node_;
  std::vector<int64_t> kernel_, pads_, strides_;
};

// CenterCropPad: each listed axis cropped or zero-padded to its target length, centred (a crop
// starts at floor((in - out) / 2), a pad at floor((out - in) / 2)). Any dtype.
class CenterCropPadKernel : public Kernel {
 public:
  explicit CenterCropPadKernel(const NodeDef& node) : node_(node), axes_(node.attr_ints("axes")) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    const size_t size = dtype_size(x.dtype());
    if (size == 0) fail_dtype(node_, x.dtype());
    const auto target = int_vector_input(node_, io.in(1), "shape");
    const int64_t rank = static_cast<int64_t>(x.rank());
    std::vector<int64_t> axes = axes_;
    if (axes.empty())
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    if (axes.size() != target.size())
      node_.fail("shape has " + std::to_string(target.size()) + " values for " + std::to_string(axes.size()) + " axes");
    Shape shape = x.shape();
    std::vector<int64_t> src_start(x.rank(), 0), dst_start(x.rank(), 0), copy(x.shape());
    std::vector<bool> seen(x.rank(), false);
    for (size_t k = 0; k < axes.size(); ++k) {
      const size_t a = static_cast<size_t>(normalize_axis(axes[k], rank, "axes"));
      if (seen[a]) node_.fail("axis " + std::to_string(axes[k]) + " is listed twice");
      seen[a] = true;
      if (target[k] < 0) node_.fail("shape values must be >= 0, got " + std::to_string(target[k]));
      const int64_t in = x.dim(a), want = target[k];
      shape[a] = want;
      copy[a] = std::min(in, want);
      if (want < in)
        src_start[a] = (in - want) / 2;
      else
        dst_start[a] = (want - in) / 2;
    }
    Tensor out(x.dtype(), shape, /*zero=*/true);
    if (checked_numel(copy) > 0) {
      const auto sst = row_major_strides(x.shape()), dstr = row_major_strides(shape);
      const auto* src = static_cast<const unsigned char*>(x.raw());
      auto* dst = static_cast<unsigned char*>(out.mutable_raw());
      std::vector<int64_t> at(x.rank(), 0);
      do {
        int64_t s = 0, t = 0;
        for (size_t d = 0; d < x.rank(); ++d) {
          s += (at[d] + src_start[d]) * sst[d];
          t += (at[d] + dst_start[d]) * dstr[d];
        }
        std::memcpy(dst + static_cast<size_t>(t) * size, src + static_cast<size_t>(s) * size, size);
      } while (next_index(at, copy));
    }
    io.outputs[0] = std::move(out);
  }

 private:
  NodeDef node_;
  std::vector<int64_t> axes_;
};

}  // namespace

PARITY_KERNEL("Col2Im", 18, Col2ImKernel, kFloatTypes16);
PARITY_KERNEL("AffineGrid", 20, AffineGridKernel, kFloatTypes16);
PARITY_KERNEL("MaxUnpool", 9, MaxUnpoolKernel, kAllNumericTypes);
PARITY_KERNEL("MaxUnpool", 11, MaxUnpoolKernel, kAllNumericTypes);
PARITY_KERNEL("CenterCropPad", 18, CenterCropPadKernel, kAllTypes);

}  // namespace parity::refrt
