// DeformConv (19, 2-D): a convolution whose kernel taps are moved by learned offsets, each tap's
// value bilinearly sampled (zero outside the image) and scaled by an optional mask, as torchvision's
// deform_conv2d. offset [N, offset_group * kH * kW * 2, oH, oW] holds (dy, dx) per tap; mask
// [N, offset_group * kH * kW, oH, oW]. Computed in double, rounded once to the input's dtype.
#include <cmath>

#include "double_io.h"
#include "elementwise.h"

namespace parity::refrt {
namespace {

double bilinear_zero(const double* plane, int64_t h, int64_t w, double y, double x) {
  const double fy = std::floor(y), fx = std::floor(x);
  if (!(fy >= -1 && fy <= static_cast<double>(h) && fx >= -1 && fx <= static_cast<double>(w))) return 0.0;
  const int64_t y0 = static_cast<int64_t>(fy), x0 = static_cast<int64_t>(fx);
  const double ly = y - fy, lx = x - fx;
  double v = 0;
  for (int dy = 0; dy < 2; ++dy)
    for (int dx = 0; dx < 2; ++dx) {
      const int64_t yy = y0 + dy, xx = x0 + dx;
      if (yy < 0 || yy >= h || xx < 0 || xx >= w) continue;
      v += (dy ? ly : 1 - ly) * (dx ? lx : 1 - lx) * plane[yy * w + xx];
    }
  return v;
}

class DeformConvKernel : public Kernel {
 public:
  explicit DeformConvKernel(const NodeDef& node)
      : node_(node),
        dilations_(node.attr_ints("dilations", {1, 1})),
        pads_(node.attr_ints("pads", {0, 0, 0, 0})),
        strides_(node.attr_ints("strides", {1, 1})),
        group_(node.attr_int("group", 1)),
        offset_group_(node.attr_int("offset_group", 1)),
        kernel_(node.attr_ints("kernel_shape")) {
    if (dilations_.size() != 2 || pads_.size() != 4 || strides_.size() != 2 ||
        (!kernel_.empty() && kernel_.size() != 2))
      node.fail("refrt implements 2-D DeformConv: dilations/strides need 2 values, pads 4", ErrorKind::kUnsupported);
    if (group_ <= 0 || offset_group_ <= 0) node.fail("group and offset_group must be > 0");
    for (int64_t v : dilations_)
      if (v <= 0) node.fail("dilations must be > 0");
    for (int64_t v : strides_)
      if (v <= 0) node.fail("strides must be > 0");
  }
  void compute(KernelIO& io) const override {
    const Tensor &x = io.in(0), &wt = io.in(1), &off = io.in(2);
    const Tensor *bias = io.optional(3), *mask = io.optional(4);
    if (!is_float_dtype(x.dtype())) fail_dtype(node_, x.dtype());
    for (const Tensor* t : {&wt, &off, bias, mask})
      if (t && t->dtype() != x.dtype())
        node_.fail("all inputs must be " + dtype_name(x.dtype()) + ", got " + dtype_name(t->dtype()));
    if (x.rank() != 4 || wt.rank() != 4 || off.rank() != 4)
      node_.fail("refrt implements 2-D DeformConv: X, W and offset must be 4-D", ErrorKind::kUnsupported);
    const int64_t n = x.dim(0), ic = x.dim(1), h = x.dim(2), w = x.dim(3), oc = wt.dim(0), icg = wt.dim(1);
    const int64_t kh = wt.dim(2), kw = wt.dim(3), og = offset_group_;
    if (!kernel_.empty() && (kernel_[0] != kh || kernel_[1] != kw))
      node_.fail("kernel_shape differs from W's spatial dims");
    if (icg * group_ != ic || oc % group_ != 0 || ic % og != 0)
      node_.fail("channels do not fit: X " + shape_str(x.shape()) + ", W " + shape_str(wt.shape()) + ", group " +
                 std::to_string(group_) + ", offset_group " + std::to_string(og));
    const int64_t oh = (h + pads_[0] + pads_[2] - ((kh - 1) * dilations_[0] + 1)) / strides_[0] + 1;
    const int64_t ow = (w + pads_[1] + pads_[3] - ((kw - 1) * dilations_[1] + 1)) / strides_[1] + 1;
    if (off.shape() != Shape{n, og * kh * kw * 2, oh, ow})
      node_.fail("offset must be " + shape_str({n, og * kh * kw * 2, oh, ow}) + ", got " + shape_str(off.shape()));
    if (mask && mask->shape() != Shape{n, og * kh * kw, oh, ow})
      node_.fail("mask must be " + shape_str({n, og * kh * kw, oh, ow}) + ", got " + shape_str(mask->shape()));
    if (bias && bias->shape() != Shape{oc})
      node_.fail("B must be [" + std::to_string(oc) + "], got " + shape_str(bias->shape()));
    const std::vector<double> xv = float_values(x), wv = float_values(wt), ov = float_values(off);
    const std::vector<double> mv = mask ? float_values(*mask) : std::vector<double>{};
    const std::vector<double> bv = bias ? float_values(*bias) : std::vector<double>{};
    std::vector<double> y = output_buffer({n, oc, oh, ow}, "DeformConv output");
    const int64_t ocg = oc / group_, icog = ic / og, taps = kh * kw, plane = oh * ow;
    std::vector<double> cols(static_cast<size_t>(icg * taps));  // sampled inputs of one output point and group
    for (int64_t b = 0; b < n; ++b)
      for (int64_t g = 0; g < group_; ++g)
        for (int64_t i = 0; i < oh; ++i)
          for (int64_t j = 0; j < ow; ++j) {
            for (int64_t c = 0; c < icg; ++c) {
              const int64_t ch = g * icg + c, o = ch / icog;
              for (int64_t t = 0; t < taps; ++t) {
                const int64_t a = t / kw, k = t % kw;
                const int64_t at = ((b * og + o) * taps + t) * 2;
                const double dy = ov[at * plane + i * ow + j], dx = ov[(at + 1) * plane + i * ow + j];
                const double py = static_cast<double>(i * strides_[0] - pads_[0] + a * dilations_[0]) + dy;
                const double px = static_cast<double>(j * strides_[1] - pads_[1] + k * dilations_[1]) + dx;
                const double m = mask ? mv[((b * og + o) * taps + t) * plane + i * ow + j] : 1.0;
                cols[c * taps + t] = m * bilinear_zero(xv.data() + (b * ic + ch) * h * w, h, w, py, px);
              }
            }
            for (int64_t q = 0; q < ocg; ++q) {
              const int64_t co = g * ocg + q;
              double s = bias ? bv[co] : 0.0;
              for (int64_t e = 0; e < icg * taps; ++e) s += wv[co * icg * taps + e] * cols[e];
              y[((b * oc + co) * oh + i) * ow + j] = s;
            }
          }
    io.outputs[0] = float_tensor(x.dtype(), {n, oc, oh, ow}, y);
  }

 private:
  NodeDef node_;
  std::vector<int64_t> dilations_, pads_, strides_;
  int64_t group_, offset_group_;
  std::vector<int64_t> kernel_;
};

}  // namespace

PARITY_KERNEL("DeformConv", 19, DeformConvKernel, kFloatTypes16);

}  // namespace parity::refrt
