// NonMaxSuppression (10, 11), RoiAlign (10, 16) and MaxRoiPool (1): the region-of-interest ops
// of detection heads. Box arithmetic is done in float, as the ONNX operator text's reference and
// ONNX Runtime do, so that IoU ties at the threshold resolve the same way.
#include <algorithm>
#include <cmath>

#include "double_io.h"
#include "elementwise.h"

namespace parity::refrt {
namespace {

float optional_float(const NodeDef& node, const Tensor* t, float fallback, const std::string& what) {
  if (!t || t->numel() == 0) return fallback;
  if (t->numel() != 1 || !is_float_dtype(t->dtype()))
    node.fail(what + " must be one float value, got " + shape_str(t->shape()));
  return static_cast<float>(float_values(*t)[0]);
}

// Whether box a suppresses box b: IoU > threshold (degenerate boxes never suppress).
bool suppresses(const float* a, const float* b, bool center, float threshold) {
  float ax0, ax1, ay0, ay1, bx0, bx1, by0, by1;
  if (center) {
    ax0 = a[0] - a[2] / 2, ax1 = a[0] + a[2] / 2, ay0 = a[1] - a[3] / 2, ay1 = a[1] + a[3] / 2;
    bx0 = b[0] - b[2] / 2, bx1 = b[0] + b[2] / 2, by0 = b[1] - b[3] / 2, by1 = b[1] + b[3] / 2;
  } else {  // [y1, x1, y2, x2], any two opposite corners
    ax0 = std::min(a[1], a[3]), ax1 = std::max(a[1], a[3]), ay0 = std::min(a[0], a[2]), ay1 = std::max(a[0], a[2]);
    bx0 = std::min(b[1], b[3]), bx1 = std::max(b[1], b[3]), by0 = std::min(b[0], b[2]), by1 = std::max(b[0], b[2]);
  }
  const float ix0 = std::max(ax0, bx0), ix1 = std::min(ax1, bx1), iy0 = std::max(ay0, by0), iy1 = std::min(ay1, by1);
  if (ix1 <= ix0 || iy1 <= iy0) return false;
  const float inter = (ix1 - ix0) * (iy1 - iy0);
  const float area_a = (ax1 - ax0) * (ay1 - ay0), area_b = (bx1 - bx0) * (by1 - by0);
  const float uni = area_a + area_b - inter;
  if (inter <= 0 || area_a <= 0 || area_b <= 0 || uni <= 0) return false;
  return inter / uni > threshold;
}

// Per batch and class: boxes with score > score_threshold, taken by descending score (equal scores:
// lower index first), each kept unless a kept box suppresses it, at most max_output_boxes_per_class.
// Output [selected, 3] int64 rows (batch, class, box).
class NonMaxSuppressionKernel : public Kernel {
 public:
  explicit NonMaxSuppressionKernel(const NodeDef& node) : node_(node), center_(node.attr_int("center_point_box", 0)) {
    if (center_ != 0 && center_ != 1) node.fail("center_point_box must be 0 or 1, got " + std::to_string(center_));
  }
  void compute(KernelIO& io) const override {
    const Tensor& boxes_t = io.in(0);
    const Tensor& scores_t = io.in(1);
    if (!is_float_dtype(boxes_t.dtype()) || scores_t.dtype() != boxes_t.dtype())
      node_.fail("boxes and scores must be float tensors of one dtype, got " + dtype_name(boxes_t.dtype()) + " and " +
                 dtype_name(scores_t.dtype()));
    if (boxes_t.rank() != 3 || boxes_t.dim(2) != 4 || scores_t.rank() != 3 || scores_t.dim(0) != boxes_t.dim(0) ||
        scores_t.dim(2) != boxes_t.dim(1))
      node_.fail("boxes must be [batches, boxes, 4] and scores [batches, classes, boxes], got " +
                 shape_str(boxes_t.shape()) + " and " + shape_str(scores_t.shape()));
    int64_t max_out = 0;
    if (const Tensor* m = io.optional(2); m && m->numel() > 0)
      max_out = scalar_int(node_, *m, "max_output_boxes_per_class");
    const float iou = optional_float(node_, io.optional(3), 0.0f, "iou_threshold");
    const bool has_score = io.optional(4) && io.optional(4)->numel() > 0;
    const float score_min = optional_float(node_, io.optional(4), 0.0f, "score_threshold");
    if (iou < 0 || iou > 1) node_.fail("iou_threshold must be in [0, 1], got " + std::to_string(iou));
    const int64_t batches = boxes_t.dim(0), n = boxes_t.dim(1), classes = scores_t.dim(1);
    std::vector<float> boxes, scores;
    for (double v : float_values(boxes_t)) boxes.push_back(static_cast<float>(v));
    for (double v : float_values(scores_t)) scores.push_back(static_cast<float>(v));
    std::vector<int64_t> rows;
    for (int64_t b = 0; b < batches; ++b)
      for (int64_t c = 0; c < classes; ++c) {
        const float* s = scores.data() + (b * classes + c) * n;
        std::vector<int64_t> order;
        for (int64_t i = 0; i < n; ++i)
          if (!has_score || s[i] > score_min) order.push_back(i);
        std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return s[x] > s[y]; });
        std::vector<int64_t> kept;
        for (int64_t i : order) {
          if (static_cast<int64_t>(kept.size()) >= max_out) break;
          const float* box = boxes.data() + (b * n + i) * 4;
          bool keep = true;
          for (int64_t k : kept)
            if (suppresses(box, boxes.data() + (b * n + k) * 4, center_ == 1, iou)) {
              keep = false;
              break;
            }
          if (!keep) continue;
          kept.push_back(i);
          rows.insert(rows.end(), {b, c, i});
        }
      }
    Tensor out(DType::kInt64, {static_cast<int64_t>(rows.size() / 3), 3});
    std::copy(rows.begin(), rows.end(), out.data<int64_t>());
    io.outputs[0] = std::move(out);
  }

 private:
  NodeDef node_;
  int64_t center_;
};

// RoiAlign: X [N, C, H, W], rois [R, 4] (x1, y1, x2, y2 in input scale), batch_indices [R] ->
// [R, C, output_height, output_width]. Each bin averages (mode avg) or takes the max (mode max, of
// the weighted corner values, as ONNX Runtime and the operator's reference do) of a grid of bilinear
// samples; sampling_ratio 0 means ceil(roi size / output size) samples per bin and axis. Opset 16's
// coordinate_transformation_mode half_pixel shifts by -0.5; opset 10 behaves as output_half_pixel.
class RoiAlignKernel : public Kernel {
 public:
  explicit RoiAlignKernel(const NodeDef& node)
      : node_(node),
        out_h_(node.attr_int("output_height", 1)),
        out_w_(node.attr_int("output_width", 1)),
        ratio_(node.attr_int("sampling_ratio", 0)),
        scale_(node.attr_float("spatial_scale", 1.0f)) {
    const Attribute* m = node.attr("mode", Attribute::Type::kString);
    const std::string mode = m ? m->s : "avg";
    if (mode != "avg" && mode != "max") node.fail("mode must be avg or max, got '" + mode + "'");
    max_ = mode == "max";
    const Attribute* c = node.attr("coordinate_transformation_mode", Attribute::Type::kString);
    const std::string ctm = c ? c->s : (node.opset >= 16 ? "half_pixel" : "output_half_pixel");
    if (ctm != "half_pixel" && ctm != "output_half_pixel")
      node.fail("coordinate_transformation_mode must be half_pixel or output_half_pixel, got '" + ctm + "'");
    half_pixel_ = ctm == "half_pixel";
    if (out_h_ <= 0 || out_w_ <= 0 || ratio_ < 0) node.fail("output_height/width must be > 0 and sampling_ratio >= 0");
  }
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    const Tensor& rois_t = io.in(1);
    if (!is_float_dtype(x.dtype()) || rois_t.dtype() != x.dtype())
      node_.fail("X and rois must be float tensors of one dtype, got " + dtype_name(x.dtype()) + " and " +
                 dtype_name(rois_t.dtype()));
    if (x.rank() != 4 || rois_t.rank() != 2 || rois_t.dim(1) != 4)
      node_.fail("X must be [N, C, H, W] and rois [R, 4], got " + shape_str(x.shape()) + " and " +
                 shape_str(rois_t.shape()));
    const int64_t r = rois_t.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
    const auto batch = int64_values(io.in(2), "batch_indices");
    if (io.in(2).rank() != 1 || static_cast<int64_t>(batch.size()) != r)
      node_.fail("batch_indices must be [" + std::to_string(r) + "], got " + shape_str(io.in(2).shape()));
    const std::vector<double> v = float_values(x);
    std::vector<double> rois = float_values(rois_t);
    std::vector<double> y = output_buffer({r, c, out_h_, out_w_});
    for (int64_t i = 0; i < r; ++i) {
      if (batch[i] < 0 || batch[i] >= x.dim(0))
        node_.fail("batch_indices[" + std::to_string(i) + "] = " + std::to_string(batch[i]) + " is outside [0, " +
                   std::to_string(x.dim(0)) + ")");
      pool_roi(v.data() + batch[i] * c * h * w, c, h, w, rois.data() + i * 4, y.data() + i * c * out_h_ * out_w_);
    }
    io.outputs[0] = float_tensor(x.dtype(), {r, c, out_h_, out_w_}, y);
  }

 private:
  struct Sample {
    int64_t pos[4];
    double weight[4];
  };
  Sample sample(double yy, double xx, int64_t h, int64_t w) const {
    if (yy < -1.0 || yy > static_cast<double>(h) || xx < -1.0 || xx > static_cast<double>(w))
      return {{0, 0, 0, 0}, {0, 0, 0, 0}};
    yy = std::max(yy, 0.0);
    xx = std::max(xx, 0.0);
    int64_t y0 = static_cast<int64_t>(yy), x0 = static_cast<int64_t>(xx), y1, x1;
    if (y0 >= h - 1)
      y1 = y0 = h - 1, yy = static_cast<double>(y0);
    else
      y1 = y0 + 1;
    if (x0 >= w - 1)
      x1 = x0 = w - 1, xx = static_cast<double>(x0);
    else
      x1 = x0 + 1;
    const double ly = yy - static_cast<double>(y0), lx = xx - static_cast<double>(x0), hy = 1 - ly, hx = 1 - lx;
    return {{y0 * w + x0, y0 * w + x1, y1 * w + x0, y1 * w + x1}, {hy * hx, hy * lx, ly * hx, ly * lx}};
  }
  void pool_roi(const double* x, int64_t c, int64_t h, int64_t w, const double* roi, double* y) const {
    const double off = half_pixel_ ? 0.5 : 0.0, s = static_cast<double>(scale_);
    const double x0 = roi[0] * s - off, y0 = roi[1] * s - off;
    double rw = roi[2] * s - off - x0, rh = roi[3] * s - off - y0;
    if (!half_pixel_) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
    if (!std::isfinite(x0) || !std::isfinite(y0) || !std::isfinite(rw) || !std::isfinite(rh))
      node_.fail("a region has a non-finite coordinate");
    if (h == 0 || w == 0) return;  // nothing to sample: the bins stay 0
    const double bh = rh / static_cast<double>(out_h_), bw = rw / static_cast<double>(out_w_);
    // A reversed region (x2 < x1 with half_pixel) has no samples; its bins are 0.
    const int64_t gh =
        ratio_ > 0 ? ratio_ : static_cast<int64_t>(std::clamp(std::ceil(rh / static_cast<double>(out_h_)), 0.0, 1e6));
    const int64_t gw =
        ratio_ > 0 ? ratio_ : static_cast<int64_t>(std::clamp(std::ceil(rw / static_cast<double>(out_w_)), 0.0, 1e6));
    if (gh > 4096 || gw > 4096) node_.fail("a region needs more than 4096 samples per bin axis (a huge roi?)");
    const double count = static_cast<double>(std::max<int64_t>(gh * gw, 1));
    std::vector<Sample> samples;
    for (int64_t ph = 0; ph < out_h_; ++ph)
      for (int64_t pw = 0; pw < out_w_; ++pw)
        for (int64_t iy = 0; iy < gh; ++iy)
          for (int64_t ix = 0; ix < gw; ++ix)
            samples.push_back(sample(
                y0 + static_cast<double>(ph) * bh + (static_cast<double>(iy) + 0.5) * bh / static_cast<double>(gh),
                x0 + static_cast<double>(pw) * bw + (static_cast<double>(ix) + 0.5) * bw / static_cast<double>(gw), h,
                w));
    for (int64_t ch = 0; ch < c; ++ch) {
      const double* plane = x + ch * h * w;
      size_t k = 0;
      for (int64_t b = 0; b < out_h_ * out_w_; ++b) {
        double acc = 0;
        for (int64_t q = 0; q < gh * gw; ++q, ++k) {
          const Sample& sm = samples[k];
          if (max_) {
            double m = sm.weight[0] * plane[sm.pos[0]];
            for (int j = 1; j < 4; ++j) m = std::max(m, sm.weight[j] * plane[sm.pos[j]]);
            acc = q == 0 ? m : std::max(acc, m);
          } else {
            for (int j = 0; j < 4; ++j) acc += sm.weight[j] * plane[sm.pos[j]];
          }
        }
        y[ch * out_h_ * out_w_ + b] = max_ ? acc : acc / count;
      }
    }
  }

  NodeDef node_;
  int64_t out_h_, out_w_, ratio_;
  float scale_;
  bool max_ = false, half_pixel_ = true;
};

// MaxRoiPool: rois [R, 5] (batch, x1, y1, x2, y2), scaled and rounded to input cells; each of the
// pooled_shape bins takes the max over its cells (an empty bin gives 0), as Caffe's ROI pooling.
class MaxRoiPoolKernel : public Kernel {
 public:
  explicit MaxRoiPoolKernel(const NodeDef& node)
      : node_(node), pooled_(node.attr_ints("pooled_shape")), scale_(node.attr_float("spatial_scale", 1.0f)) {
    if (pooled_.size() != 2 || pooled_[0] <= 0 || pooled_[1] <= 0) node.fail("pooled_shape must be two values > 0");
  }
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    const Tensor& rois_t = io.in(1);
    if (!is_float_dtype(x.dtype()) || rois_t.dtype() != x.dtype())
      node_.fail("X and rois must be float tensors of one dtype, got " + dtype_name(x.dtype()) + " and " +
                 dtype_name(rois_t.dtype()));
    if (x.rank() != 4 || rois_t.rank() != 2 || rois_t.dim(1) != 5)
      node_.fail("X must be [N, C, H, W] and rois [R, 5], got " + shape_str(x.shape()) + " and " +
                 shape_str(rois_t.shape()));
    const int64_t r = rois_t.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3), ph = pooled_[0], pw = pooled_[1];
    const std::vector<double> v = float_values(x), rois = float_values(rois_t);
    std::vector<double> y = output_buffer({r, c, ph, pw});
    const double s = static_cast<double>(scale_);
    for (int64_t i = 0; i < r; ++i) {
      const double* roi = rois.data() + i * 5;
      for (int k = 1; k < 5; ++k)
        if (!std::isfinite(roi[k] * s) || std::fabs(roi[k] * s) > 1e15)
          node_.fail("roi " + std::to_string(i) + " has a non-finite or huge coordinate");
      if (!(roi[0] >= 0 && roi[0] < static_cast<double>(x.dim(0))))
        node_.fail("roi " + std::to_string(i) + " has batch index " + std::to_string(roi[0]) + " outside [0, " +
                   std::to_string(x.dim(0)) + ")");
      const int64_t b = static_cast<int64_t>(roi[0]);
      const int64_t xs = std::llround(roi[1] * s), ys = std::llround(roi[2] * s);
      const int64_t xe = std::llround(roi[3] * s), ye = std::llround(roi[4] * s);
      const double bh = static_cast<double>(std::max<int64_t>(ye - ys + 1, 1)) / static_cast<double>(ph);
      const double bw = static_cast<double>(std::max<int64_t>(xe - xs + 1, 1)) / static_cast<double>(pw);
      for (int64_t ch = 0; ch < c; ++ch) {
        const double* plane = v.data() + (b * c + ch) * h * w;
        for (int64_t py = 0; py < ph; ++py)
          for (int64_t px = 0; px < pw; ++px) {
            const int64_t h0 =
                std::clamp<int64_t>(static_cast<int64_t>(std::floor(static_cast<double>(py) * bh)) + ys, 0, h);
            const int64_t h1 =
                std::clamp<int64_t>(static_cast<int64_t>(std::ceil(static_cast<double>(py + 1) * bh)) + ys, 0, h);
            const int64_t w0 =
                std::clamp<int64_t>(static_cast<int64_t>(std::floor(static_cast<double>(px) * bw)) + xs, 0, w);
            const int64_t w1 =
                std::clamp<int64_t>(static_cast<int64_t>(std::ceil(static_cast<double>(px + 1) * bw)) + xs, 0, w);
            double m = 0;
            bool any = false;
            for (int64_t yy = h0; yy < h1; ++yy)
              for (int64_t xx = w0; xx < w1; ++xx) {
                const double val = plane[yy * w + xx];
                if (!any || val > m) m = val, any = true;
              }
            y[((i * c + ch) * ph + py) * pw + px] = m;
          }
      }
    }
    io.outputs[0] = float_tensor(x.dtype(), {r, c, ph, pw}, y);
  }

 private:
  NodeDef node_;
  std::vector<int64_t> pooled_;
  float scale_;
};

}  // namespace

PARITY_KERNEL("NonMaxSuppression", 10, NonMaxSuppressionKernel, {DType::kFloat32});
PARITY_KERNEL("NonMaxSuppression", 11, NonMaxSuppressionKernel, {DType::kFloat32});
PARITY_KERNEL("RoiAlign", 10, RoiAlignKernel, kFloatTypes16);
PARITY_KERNEL("RoiAlign", 16, RoiAlignKernel, kFloatTypes16);
PARITY_KERNEL("MaxRoiPool", 1, MaxRoiPoolKernel, kFloatTypes16);

}  // namespace parity::refrt
