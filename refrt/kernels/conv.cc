// Conv (1-D to 3-D, groups, dilations, strides, pads, auto_pad, bias) as im2col + GEMM per image and
// group. A 1x1 kernel with unit stride and no padding reads the input as the column matrix directly.
#include <cstring>
#include <vector>

#include "../src/dispatch.h"
#include "../src/gemm.h"
#include "spatial.h"

namespace parity::refrt {
namespace {

// col[(c, kd, kh, kw), (od, oh, ow)] = x[c, od*s - p + kd*dil, ...] or 0 outside the input.
template <typename T>
void im2col(const T* x, int64_t channels, const Window& w, T* col) {
  const int64_t out = w.out_size();
  int64_t row = 0;
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t a = 0; a < w.kernel[0]; ++a)
      for (int64_t b = 0; b < w.kernel[1]; ++b)
        for (int64_t e = 0; e < w.kernel[2]; ++e, ++row) {
          T* dst = col + row * out;
          const T* src = x + c * w.in_size();
          for (int64_t od = 0; od < w.out[0]; ++od) {
            const int64_t id = od * w.stride[0] - w.pad_begin[0] + a * w.dilation[0];
            for (int64_t oh = 0; oh < w.out[1]; ++oh) {
              const int64_t ih = oh * w.stride[1] - w.pad_begin[1] + b * w.dilation[1];
              const bool row_inside = id >= 0 && id < w.in[0] && ih >= 0 && ih < w.in[1];
              const T* line = src + (id * w.in[1] + ih) * w.in[2];
              for (int64_t ow = 0; ow < w.out[2]; ++ow) {
                const int64_t iw = ow * w.stride[2] - w.pad_begin[2] + e * w.dilation[2];
                *dst++ = row_inside && iw >= 0 && iw < w.in[2] ? line[iw] : T(0);
              }
            }
          }
        }
}

class ConvKernel : public Kernel {
 public:
  explicit ConvKernel(const NodeDef& node) : node_(node), attrs_(node), group_(node.attr_int("group", 1)) {
    if (group_ < 1) node.fail("group must be >= 1");
  }

  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    if (is_float16_like(x.dtype())) return with_float32(io, x.dtype(), [&](KernelIO& f) { compute(f); });
    const Tensor& w = io.in(1);
    const Tensor* bias = io.optional(2);
    if (w.rank() != x.rank()) node_.fail("W " + shape_str(w.shape()) + " must have the rank of X " + shape_str(x.shape()));
    if (w.dtype() != x.dtype() || (bias && bias->dtype() != x.dtype())) node_.fail("input dtypes differ");
    const Shape ws = w.shape();
    const int64_t n = x.dim(0), c = x.dim(1), m = ws[0];
    if (c % group_ != 0 || m % group_ != 0 || ws[1] * group_ != c)
      node_.fail("channels do not match: X has " + std::to_string(c) + ", W " + shape_str(ws) + ", group " +
                 std::to_string(group_));
    if (bias && (bias->rank() != 1 || bias->dim(0) != m)) node_.fail("B must have shape [" + std::to_string(m) + "]");
    const std::vector<int64_t> kernel(ws.begin() + 2, ws.end());
    if (!attrs_.kernel_shape.empty() && attrs_.kernel_shape != kernel)
      node_.fail("kernel_shape differs from W's spatial dims " + shape_str(ws));
    const Window win = attrs_.resolve(node_, x.shape(), kernel);
    Tensor out(x.dtype(), win.out_shape(n, m));
    if (!dispatch_float(x.dtype(), [&](auto tag) {
          using T = decltype(tag);
          run<T>(io, x, w, bias, win, out);
        }))
      node_.fail("dtype " + dtype_name(x.dtype()) + " is not implemented", ErrorKind::kUnsupported);
    io.outputs[0] = std::move(out);
  }

  double flops(const KernelIO& io) const override {  // 2 * output elements * (C/group * kernel volume)
    const Tensor& w = io.in(1);
    return 2.0 * static_cast<double>(io.outputs[0].numel()) * static_cast<double>(w.numel() / w.dim(0));
  }

 private:
  template <typename T>
  void run(const KernelIO& io, const Tensor& x, const Tensor& w, const Tensor* bias, const Window& win, Tensor& out) const {
    const int64_t n = x.dim(0), c = x.dim(1), m = w.dim(0);
    const int64_t cg = c / group_, mg = m / group_, rows = cg * win.kernel_size(), cols = win.out_size();
    check_blas_dims(node_, mg, cols, rows);
    const bool direct = win.kernel_size() == 1 && win.in_size() == cols &&
                        win.stride == std::array<int64_t, 3>{1, 1, 1} && win.pad_begin == std::array<int64_t, 3>{0, 0, 0};
    std::vector<T> col(direct ? 0 : static_cast<size_t>(rows * cols));
    const T* px = x.data<T>();
    const T* pw = w.data<T>();
    T* py = out.data<T>();
    for (int64_t img = 0; img < n; ++img)
      for (int64_t g = 0; g < group_; ++g) {
        const T* xg = px + (img * c + g * cg) * win.in_size();
        const T* colp = xg;
        if (!direct) {
          im2col(xg, cg, win, col.data());
          colp = col.data();
        }
        T* yg = py + (img * m + g * mg) * cols;
        gemm<T>(false, false, mg, cols, rows, T(1), pw + g * mg * rows, rows, colp, cols, T(0), yg, cols);
      }
    if (bias) {
      const T* pb = bias->data<T>();
      parallel_for(io, n * m, 16, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          T* y = py + i * cols;
          const T b = pb[i % m];
          for (int64_t j = 0; j < cols; ++j) y[j] += b;
        }
      });
    }
  }

  NodeDef node_;
  WindowAttrs attrs_;
  int64_t group_;
};

}  // namespace

// Conv 1; 11 only widened what auto_pad/defaults allow (same computation here); 22 widened types.
PARITY_KERNEL("Conv", 1, ConvKernel, kFloatTypes16);
PARITY_KERNEL("Conv", 11, ConvKernel, kFloatTypes16);

}  // namespace parity::refrt
