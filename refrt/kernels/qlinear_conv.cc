// ConvInteger and QLinearConv (ai.onnx): the convolution of 8-bit X and W minus their zero points,
// summed exactly in int32 (groups, strides, dilations, pads and auto_pad as Conv; padding contributes
// 0 after the zero point is taken off, as in the ONNX reference). ConvInteger returns the sums;
// QLinearConv adds its int32 bias and requantizes per output channel:
//   y = saturate(rint(sum * (x_scale * w_scale[m] / y_scale) + y_zero_point)).
// 1-D and 2-D: qconv_panels.cc gathers the columns straight into qgemm's panels. Other ranks, per group
// and image: (x - x_zp) widened to int16, im2col (skipped for 1x1 stride-1 unpadded convs), packed into
// qgemm's panels, one integer GEMM with the group's weight rows.
#include "qlinear_conv.h"

#include <algorithm>

#include "im2col.h"
#include "matmul_dnnl.h"
#include "qconv_dnnl.h"
#include "quantize_common.h"

namespace parity::refrt {
namespace qconv {

ConvWeights widen_weights(const NodeDef& node, const Tensor& w, const std::vector<int32_t>& zp, int64_t group) {
  if (w.dtype() != DType::kInt8 && w.dtype() != DType::kUInt8)
    node.fail("W dtype " + dtype_name(w.dtype()) + " is not supported (int8, uint8)", ErrorKind::kUnsupported);
  if (w.rank() < 3) node.fail("W must be [M, C/group, k1, ...], got " + shape_str(w.shape()));
  ConvWeights cw;
  cw.m = w.dim(0);
  cw.cg = w.dim(1);
  cw.kernel = nn::spatial_dims(w.shape());
  const int64_t k = w.numel() / std::max<int64_t>(cw.m, 1);
  cw.kp = qgemm::even(k);
  if (zp.size() != 1 && static_cast<int64_t>(zp.size()) != cw.m)
    node.fail("w_zero_point must be a scalar or 1-D of size " + std::to_string(cw.m));
  cw.rows.assign(static_cast<size_t>(cw.m * cw.kp), 0);
  dispatch_numeric(w.dtype(), [&](auto zero) {
    using W = decltype(zero);
    for (int64_t r = 0; r < cw.m; ++r)
      qgemm::widen_row(w.data<W>() + r * k, k, zp[zp.size() == 1 ? 0 : static_cast<size_t>(r)],
                       cw.rows.data() + r * cw.kp);
  });
  if (taps_suit(cw, group)) cw.taps = pack_taps(cw);
  return cw;
}

nn::WindowGeometry conv_geometry(const NodeDef& node, const nn::WindowAttrs& attrs, int64_t group, const Tensor& x,
                                 const ConvWeights& w) {
  if (x.dtype() != DType::kInt8 && x.dtype() != DType::kUInt8)
    node.fail("X dtype " + dtype_name(x.dtype()) + " is not supported (int8, uint8)", ErrorKind::kUnsupported);
  if (x.rank() < 3 || x.rank() != w.kernel.size() + 2)
    node.fail("X must be [N, C, D1, ...] of W's rank, got " + shape_str(x.shape()));
  if (group <= 0 || w.m % group != 0 || x.dim(1) != w.cg * group)
    node.fail("X has " + std::to_string(x.dim(1)) + " channels; W [" + std::to_string(w.m) + ", " +
              std::to_string(w.cg) + ", ...] with group " + std::to_string(group) + " does not fit");
  if (!attrs.kernel_shape.empty() && attrs.kernel_shape != w.kernel)
    node.fail("kernel_shape " + shape_str(attrs.kernel_shape) + " differs from W's " + shape_str(w.kernel));
  return nn::forward_geometry(node, attrs, nn::spatial_dims(x.shape()), w.kernel, false);
}

Tensor int_conv(const NodeDef& node, const KernelIO& io, const nn::WindowAttrs& attrs, int64_t group, const Tensor& x,
                int32_t x_zp, const ConvWeights& w, const int32_t* bias) {
  const nn::WindowGeometry g = conv_geometry(node, attrs, group, x, w);
  const int64_t n = x.dim(0), c = x.dim(1), m = w.m, mg = m / group, out_size = g.out_size(), in_size = g.in_size();
  const int64_t ksize = g.kernel_size(), krows = w.cg * ksize;
  Shape out{n, m};
  out.insert(out.end(), g.out.begin(), g.out.end());
  Tensor y(DType::kInt32, out);
  if (g.rank() <= 2 && !w.taps.empty()) {
    int32_t* py = y.data<int32_t>();
    nhwc_conv(io, g, x, x_zp, w.taps,
              [&](int64_t image, int64_t o0, int rows, int64_t c0, int64_t cols, const int32_t* sums) {
                for (int64_t j = 0; j < cols; ++j) {
                  int32_t* dst = py + (image * m + c0 + j) * out_size + o0;
                  for (int r = 0; r < rows; ++r) dst[r] = sums[r * qgemm::kPanel + j] + (bias ? bias[c0 + j] : 0);
                }
              });
    return y;
  }
  if (g.rank() <= 2) {
    int32_t* py = y.data<int32_t>();
    panel_conv(io, g, group, x, x_zp, w, bias, [&](int64_t row, int64_t j0, const int32_t* sums, int64_t cols) {
      std::copy(sums, sums + cols, py + row * out_size + j0);
    });
    return y;
  }
  bool pointwise = ksize == 1;
  for (size_t d = 0; d < g.rank(); ++d)
    pointwise = pointwise && g.stride[d] == 1 && g.pad_begin[d] == 0 && g.pad_end[d] == 0;
  std::vector<int16_t> x16(static_cast<size_t>(w.cg * in_size)),
      col(pointwise ? 0 : static_cast<size_t>(krows * out_size));
  const int32_t zero = 0;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t gi = 0; gi < group; ++gi) {
      dispatch_numeric(x.dtype(), [&](auto tag) {
        using X = decltype(tag);
        qgemm::widen_row(x.data<X>() + (b * c + gi * w.cg) * in_size, w.cg * in_size, x_zp, x16.data());
      });
      if (!pointwise) nn::im2col<int16_t>(g, w.cg, x16.data(), col.data());
      const qgemm::PackedB packed =
          qgemm::pack_b<int16_t>(pointwise ? x16.data() : col.data(), krows, out_size, out_size, 1, &zero, false);
      int32_t* py = y.data<int32_t>() + (b * m + gi * mg) * out_size;
      qgemm::gemm(io, mg, w.rows.data() + gi * mg * w.kp, w.kp, packed, py, out_size);
      if (bias)
        for (int64_t r = 0; r < mg; ++r)
          for (int64_t j = 0; j < out_size; ++j) py[r * out_size + j] += bias[gi * mg + r];
    }
  return y;
}

}  // namespace qconv

namespace {

using quant::zero_points;

int64_t out_channels(const Tensor& w) { return w.rank() > 0 ? w.dim(0) : 0; }

class ConvIntegerKernel : public Kernel {
 public:
  explicit ConvIntegerKernel(const NodeDef& node)
      : node_(node), attrs_(nn::parse_window_attrs(node)), group_(node.attr_int("group", 1)) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    const Tensor& w = io.in(1);
    const auto zx = zero_points(node_, io.optional(2), x.dtype(), -1, "x_zero_point");
    const auto zw = zero_points(node_, io.optional(3), w.dtype(), out_channels(w), "w_zero_point");
    io.outputs[0] =
        qconv::int_conv(node_, io, attrs_, group_, x, zx[0], qconv::widen_weights(node_, w, zw, group_), nullptr);
  }

 private:
  NodeDef node_;
  nn::WindowAttrs attrs_;
  int64_t group_;
};

class QLinearConvKernel : public Kernel {
 public:
  explicit QLinearConvKernel(const NodeDef& node)
      : node_(node), attrs_(nn::parse_window_attrs(node)), group_(node.attr_int("group", 1)) {}
  // Constant int8 weights (zero points 0) go to oneDNN's exact int8 convolution where the CPU has VNNI / AMX
  // (qconv_dnnl.h); their int32 sums are the ones refrt's own kernel computes.
  void prepare(const std::vector<const Tensor*>& constants) override {
    const Tensor* w = constants.size() > 3 ? constants[3] : nullptr;
    const Tensor* zw = constants.size() > 5 ? constants[5] : nullptr;
    const bool zw_known = zw || node_.inputs.size() <= 5 || node_.inputs[5].empty();
    if (!matmul_dnnl::int8_enabled() || !w || !zw_known || w->rank() < 3) return;
    std::vector<int32_t> zp(1, 0);
    if (zw) {
      zp.resize(static_cast<size_t>(zw->numel()));
      for (int64_t i = 0; i < zw->numel(); ++i) zp[static_cast<size_t>(i)] = quant::int_at(*zw, i);
    }
    onednn_.set(*w, zp, group_);
  }
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    const Tensor& w = io.in(3);
    const Tensor &xs = io.in(1), &ws = io.in(4), &ys = io.in(6);
    const Tensor* yz = io.optional(7);
    const Tensor* bias = io.optional(8);
    const int64_t m = out_channels(w);
    if (xs.dtype() != DType::kFloat32 || ws.dtype() != DType::kFloat32 || ys.dtype() != DType::kFloat32)
      node_.fail("scales must be float32", ErrorKind::kUnsupported);
    if (xs.numel() != 1 || ys.numel() != 1) node_.fail("x_scale and y_scale must be scalars");
    if (ws.numel() != 1 && (ws.rank() != 1 || ws.numel() != m))
      node_.fail("w_scale must be a scalar or 1-D of size " + std::to_string(m) + ", got " + shape_str(ws.shape()));
    if (bias && (bias->dtype() != DType::kInt32 || bias->rank() != 1 || bias->numel() != m))
      node_.fail("B must be int32 [" + std::to_string(m) + "], got " + dtype_name(bias->dtype()) + " " +
                 shape_str(bias->shape()));
    const auto zx = zero_points(node_, io.optional(2), x.dtype(), -1, "x_zero_point");
    const auto zw = zero_points(node_, io.optional(5), w.dtype(), m, "w_zero_point");
    const DType out = yz ? yz->dtype() : x.dtype();
    if (out != DType::kInt8 && out != DType::kUInt8)
      node_.fail("y_zero_point dtype " + dtype_name(out) + " is not supported (int8, uint8)", ErrorKind::kUnsupported);
    const auto zy = zero_points(node_, yz, out, -1, "y_zero_point");
    std::vector<double> mult(static_cast<size_t>(ws.numel())), offset(mult.size(), zy[0]);
    for (int64_t j = 0; j < ws.numel(); ++j)
      mult[static_cast<size_t>(j)] = (quant::float_at(xs, 0) * quant::float_at(ws, j)) / quant::float_at(ys, 0);
    int64_t lo = 0, hi = 0;
    quant::int_range(out, lo, hi);
    if (onednn_.holds(w) && compute_onednn(io, x, zx[0], bias, mult, zy[0], out, lo, hi)) return;
    const Tensor acc = qconv::int_conv(node_, io, attrs_, group_, x, zx[0], qconv::widen_weights(node_, w, zw, group_),
                                       bias ? bias->data<int32_t>() : nullptr);
    Tensor y(out, acc.shape());
    const int64_t plane = acc.numel() / std::max<int64_t>(1, acc.dim(0) * m);
    for (int64_t b = 0; b < acc.dim(0); ++b)
      quant::requantize_block(acc.data<int32_t>() + b * m * plane, m, plane, mult, offset, true, out,
                              static_cast<double>(lo), static_cast<double>(hi),
                              static_cast<uint8_t*>(y.mutable_raw()) + b * m * plane);
    io.outputs[0] = std::move(y);
  }

 private:
  // Each channel's plane of sums (+ its bias) requantized as above. false: oneDNN declined the geometry.
  bool compute_onednn(KernelIO& io, const Tensor& x, int32_t zx, const Tensor* bias, const std::vector<double>& mult,
                      int32_t zy, DType out, int64_t lo, int64_t hi) const {
    const Tensor& w = io.in(3);
    qconv::ConvWeights shape;  // what conv_geometry checks: M, C per group, kernel
    shape.m = out_channels(w);
    shape.cg = w.dim(1);
    shape.kernel = nn::spatial_dims(w.shape());
    const nn::WindowGeometry g = qconv::conv_geometry(node_, attrs_, group_, x, shape);
    Shape dims{x.dim(0), shape.m};
    dims.insert(dims.end(), g.out.begin(), g.out.end());
    Tensor y(out, dims);
    const int32_t* pb = bias ? bias->data<int32_t>() : nullptr;
    const bool per_channel = mult.size() > 1;
    const bool done =
        onednn_.run(io, g, x, zx, out, y.mutable_raw(),
                    [&](int64_t c0, int64_t cols, int64_t rows, const int32_t* sums, uint8_t* dst) {
                      // Runs of `span` rows at once, the channels' multipliers repeated along them.
                      const int64_t span = std::max<int64_t>(1, 512 / cols), len = span * cols;
                      std::vector<double> mc(static_cast<size_t>(len)), oc(mc.size(), static_cast<double>(zy));
                      for (int64_t i = 0; i < len; ++i)
                        mc[static_cast<size_t>(i)] = mult[per_channel ? c0 + i % cols : 0];
                      std::vector<int32_t> acc(static_cast<size_t>(len));
                      for (int64_t r = 0; r < rows; r += span) {
                        const int64_t count = std::min(span, rows - r) * cols;
                        const int32_t* in = sums + r * cols;
                        if (pb) {  // the bias joins the int32 sum before the scaling, as int_conv adds it
                          for (int64_t i = 0; i < count; ++i) acc[static_cast<size_t>(i)] = in[i] + pb[c0 + i % cols];
                          in = acc.data();
                        }
                        quant::requantize_row(in, count, mc.data(), oc.data(), true, static_cast<double>(lo),
                                              static_cast<double>(hi), out, dst + r * cols);
                      }
                    });
    if (done) io.outputs[0] = std::move(y);
    return done;
  }

  NodeDef node_;
  nn::WindowAttrs attrs_;
  int64_t group_;
  qconv_dnnl::Conv onednn_;
};

}  // namespace

PARITY_KERNEL("ConvInteger", 10, ConvIntegerKernel, {DType::kUInt8, DType::kInt8});
PARITY_KERNEL("QLinearConv", 10, QLinearConvKernel, {DType::kUInt8, DType::kInt8});

}  // namespace parity::refrt
