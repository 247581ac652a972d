// ConvTranspose: the adjoint of Conv. Per image and group, one GEMM W_g^T X_g gives the column matrix
// [M/group * kernel, in], which col2im scatters into the output. Output size from pads (+ output_padding)
// or from output_shape / auto_pad, which then determine the pads (ONNX's formula).
#include <algorithm>

#include "im2col.h"

namespace parity::refrt {
namespace {

using nn::AutoPad;
using nn::WindowGeometry;

class ConvTransposeKernel : public Kernel {
 public:
  explicit ConvTransposeKernel(const NodeDef& node)
      : node_(node),
        attrs_(nn::parse_window_attrs(node)),
        group_(node.attr_int("group", 1)),
        output_padding_(node.attr_ints("output_padding")),
        output_shape_(node.attr_ints("output_shape")) {
    if (group_ <= 0) node.fail("group must be positive, got " + std::to_string(group_));
  }

  void compute(KernelIO& io) const override {
    nn::run_float(node_, io, io.in(0).dtype(), [&](auto tag, KernelIO& f) { run<decltype(tag)>(f); });
  }

  double flops(const KernelIO& io) const override {  // 2 * input elements * (M/group * kernel volume)
    const Tensor& w = io.in(1);
    return w.dim(0) == 0 ? 0 : 2.0 * static_cast<double>(io.in(0).numel()) * static_cast<double>(w.numel() / w.dim(0));
  }

 private:
  // The geometry of the equivalent forward conv: its "input" is our output, its "output" our input.
  WindowGeometry geometry(const std::vector<int64_t>& in, const std::vector<int64_t>& kernel) const {
    const size_t r = in.size();
    WindowGeometry g;
    g.out = in;
    g.kernel = kernel;
    g.stride = attrs_.strides.empty() ? std::vector<int64_t>(r, 1) : attrs_.strides;
    g.dilation = attrs_.dilations.empty() ? std::vector<int64_t>(r, 1) : attrs_.dilations;
    const std::vector<int64_t> out_pad = output_padding_.empty() ? std::vector<int64_t>(r, 0) : output_padding_;
    if (g.stride.size() != r || g.dilation.size() != r || out_pad.size() != r ||
        (!attrs_.pads.empty() && attrs_.pads.size() != 2 * r) ||
        (!output_shape_.empty() && output_shape_.size() != r && output_shape_.size() != r + 2))
      node_.fail("strides, dilations, output_padding, pads or output_shape do not match spatial rank " +
                 std::to_string(r));
    g.in.resize(r);
    g.pad_begin.assign(r, 0);
    g.pad_end.assign(r, 0);
    for (size_t d = 0; d < r; ++d) {
      if (g.stride[d] <= 0 || g.dilation[d] <= 0 || kernel[d] <= 0)
        node_.fail("strides, dilations and kernel dims must be positive");
      const int64_t full = g.stride[d] * (in[d] - 1) + out_pad[d] + (kernel[d] - 1) * g.dilation[d] + 1;
      const bool same = attrs_.auto_pad == AutoPad::kSameUpper || attrs_.auto_pad == AutoPad::kSameLower;
      if (!output_shape_.empty() || same) {
        const int64_t target =
            !output_shape_.empty() ? output_shape_[output_shape_.size() - r + d] : in[d] * g.stride[d];
        // A target larger than the full output gives negative pads: extra (bias-only) positions.
        const int64_t total = full - target, half = total >= 0 ? total / 2 : -((-total + 1) / 2);  // floor
        if (target < 0) node_.fail("output_shape " + shape_str(output_shape_) + " is negative");
        // ONNX: SAME_UPPER puts the smaller half first, every other mode the larger half first.
        g.pad_begin[d] = attrs_.auto_pad == AutoPad::kSameUpper ? half : total - half;
        g.pad_end[d] = total - g.pad_begin[d];
        g.in[d] = target;
      } else {
        if (!attrs_.pads.empty() && attrs_.auto_pad == AutoPad::kNotSet) {
          g.pad_begin[d] = attrs_.pads[d];
          g.pad_end[d] = attrs_.pads[d + r];
        }
        g.in[d] = full - g.pad_begin[d] - g.pad_end[d];
        if (g.in[d] < 0) node_.fail("pads larger than the output");
      }
    }
    return g;
  }

  template <typename T>
  void run(KernelIO& io) const {
    const Tensor& x = io.in(0);
    const Tensor& w = io.in(1);
    const Tensor* b = io.optional(2);
    if (x.rank() < 3) node_.fail("X must be [N, C, D1, ...], got " + shape_str(x.shape()));
    if (w.rank() != x.rank())
      node_.fail("W " + shape_str(w.shape()) + " must have the rank of X " + shape_str(x.shape()));
    if (w.dtype() != x.dtype() || (b && b->dtype() != x.dtype())) node_.fail("input dtypes differ");
    const int64_t n = x.dim(0), c = x.dim(1), mg = w.dim(1), m = mg * group_;
    if (w.dim(0) != c || c % group_ != 0)
      node_.fail("W " + shape_str(w.shape()) + " must be [C=" + std::to_string(c) +
                 ", M/group, ...] with C divisible by group");
    if (b && (b->rank() != 1 || b->dim(0) != m))
      node_.fail("B must be [" + std::to_string(m) + "], got " + shape_str(b->shape()));
    const std::vector<int64_t> kernel = nn::spatial_dims(w.shape());
    if (!attrs_.kernel_shape.empty() && attrs_.kernel_shape != kernel)
      node_.fail("kernel_shape " + shape_str(attrs_.kernel_shape) + " differs from W's " + shape_str(kernel));
    const WindowGeometry g = geometry(nn::spatial_dims(x.shape()), kernel);
    Shape out_shape{n, m};
    out_shape.insert(out_shape.end(), g.in.begin(), g.in.end());
    Tensor y(x.dtype(), out_shape, /*zero=*/true);
    const int64_t cg = c / group_, in_size = g.out_size(), out_size = g.in_size(), ksize = g.kernel_size();
    const int64_t col_rows = mg * ksize;
    std::vector<T> col(y.numel() == 0 ? 0 : static_cast<size_t>(checked_numel({col_rows, in_size})));
    const T* px = x.data<T>();
    const T* pw = w.data<T>();
    T* py = y.data<T>();
    BackendSet ran = 0;  // what ran the products, for the profile
    for (int64_t i = 0; i < n && !col.empty(); ++i)
      for (int64_t gi = 0; gi < group_; ++gi) {
        // col[mg*k, in] = W_g^T [mg*k, cg] x X_g [cg, in]
        ran |= backend_bit(gemm<T>(node_, true, false, col_rows, in_size, cg, T(1), pw + gi * cg * col_rows, col_rows,
                                   px + (i * c + gi * cg) * in_size, in_size, T(0), col.data(), in_size));
        nn::col2im(g, mg, col.data(), py + (i * m + gi * mg) * out_size);
      }
    if (b)
      for (int64_t i = 0; i < n; ++i)
        for (int64_t o = 0; o < m; ++o) {
          T* row = py + (i * m + o) * out_size;
          const T bias = b->data<T>()[o];
          for (int64_t j = 0; j < out_size; ++j) row[j] += bias;
        }
    note_backends(io, ran);
    io.outputs[0] = std::move(y);
  }

  NodeDef node_;
  nn::WindowAttrs attrs_;
  int64_t group_;
  std::vector<int64_t> output_padding_, output_shape_;
};

}  // namespace

PARITY_KERNEL("ConvTranspose", 1, ConvTransposeKernel, kFloatTypes16);
PARITY_KERNEL("ConvTranspose", 11, ConvTransposeKernel, kFloatTypes16);

}  // namespace parity::refrt
