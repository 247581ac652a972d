// Conv (1-D/2-D/3-D and beyond): groups (depthwise included), strides, dilations, pads, auto_pad and
// bias. Per image and group: im2col into [C/group * kernel, out], then one GEMM with the group's
// weights [M/group, C/group * kernel]. A 1x1 stride-1 unpadded conv skips im2col (the input is the
// column matrix).
#include <algorithm>

#include "im2col.h"

namespace parity::refrt {
namespace {

using nn::WindowGeometry;

class ConvKernel : public Kernel {
 public:
  explicit ConvKernel(const NodeDef& node)
      : node_(node), attrs_(nn::parse_window_attrs(node)), group_(node.attr_int("group", 1)) {
    if (group_ <= 0) node.fail("group must be positive, got " + std::to_string(group_));
  }

  void compute(KernelIO& io) const override {
    nn::run_float(node_, io, io.in(0).dtype(), [&](auto tag, KernelIO& f) { run<decltype(tag)>(f); });
  }

 private:
  template <typename T>
  void run(KernelIO& io) const {
    const Tensor& x = io.in(0);
    const Tensor& w = io.in(1);
    const Tensor* b = io.optional(2);
    if (x.rank() < 3) node_.fail("X must be [N, C, D1, ...], got " + shape_str(x.shape()));
    if (w.rank() != x.rank()) node_.fail("W " + shape_str(w.shape()) + " must have the rank of X " + shape_str(x.shape()));
    if (w.dtype() != x.dtype() || (b && b->dtype() != x.dtype())) node_.fail("input dtypes differ");
    const int64_t n = x.dim(0), c = x.dim(1), m = w.dim(0), cg = w.dim(1);
    if (c != cg * group_)
      node_.fail("X has " + std::to_string(c) + " channels but W " + shape_str(w.shape()) + " with group " +
                 std::to_string(group_) + " expects " + std::to_string(cg * group_));
    if (m % group_ != 0) node_.fail("output channels " + std::to_string(m) + " not divisible by group");
    if (b && (b->rank() != 1 || b->dim(0) != m)) node_.fail("B must be [" + std::to_string(m) + "], got " + shape_str(b->shape()));
    const std::vector<int64_t> kernel = nn::spatial_dims(w.shape());
    if (!attrs_.kernel_shape.empty() && attrs_.kernel_shape != kernel)
      node_.fail("kernel_shape " + shape_str(attrs_.kernel_shape) + " differs from W's " + shape_str(kernel));
    const WindowGeometry g = nn::forward_geometry(node_, attrs_, nn::spatial_dims(x.shape()), kernel, false);
    Shape out_shape{n, m};
    out_shape.insert(out_shape.end(), g.out.begin(), g.out.end());
    Tensor y(x.dtype(), out_shape);
    const int64_t out_size = g.out_size(), in_size = g.in_size(), ksize = g.kernel_size(), mg = m / group_;
    const int64_t col_rows = cg * ksize;
    bool pointwise = ksize == 1;
    for (size_t d = 0; d < g.rank(); ++d)
      pointwise = pointwise && g.stride[d] == 1 && g.pad_begin[d] == 0 && g.pad_end[d] == 0;
    std::vector<T> col(pointwise || y.numel() == 0 ? 0 : static_cast<size_t>(checked_numel({col_rows, out_size})));
    const T* px = x.data<T>();
    const T* pw = w.data<T>();
    T* py = y.data<T>();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t gi = 0; gi < group_; ++gi) {
        const T* xg = px + (i * c + gi * cg) * in_size;
        T* yg = py + (i * m + gi * mg) * out_size;
        const T* cols = xg;
        if (!pointwise && !col.empty()) {
          nn::im2col(g, cg, xg, col.data());
          cols = col.data();
        }
        nn::gemm<T>(node_, false, false, mg, out_size, col_rows, T(1), pw + gi * mg * col_rows, col_rows, cols,
                    out_size, T(0), yg, out_size);
      }
    if (b)
      for (int64_t i = 0; i < n; ++i)
        for (int64_t o = 0; o < m; ++o) {
          T* row = py + (i * m + o) * out_size;
          const T bias = b->data<T>()[o];
          for (int64_t j = 0; j < out_size; ++j) row[j] += bias;
        }
    io.outputs[0] = std::move(y);
  }

  NodeDef node_;
  nn::WindowAttrs attrs_;
  int64_t group_;
};

}  // namespace

// Conv 1; 11 reworded the auto_pad output-size rules (implemented as 11 reads them); 22 only widened types.
PARITY_KERNEL("Conv", 1, ConvKernel, kFloatTypes16);
PARITY_KERNEL("Conv", 11, ConvKernel, kFloatTypes16);

}  // namespace parity::refrt
