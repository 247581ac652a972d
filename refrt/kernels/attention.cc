// Attention (opset 23): scaled dot-product attention over 4-D [B, heads, S, head] or 3-D
// [B, S, heads * head] inputs, with past key/value concatenation (present outputs), GQA/MQA head
// sharing, bool or additive attn_mask (shorter last dim padded as masked), bottom-right causal mask,
// softcap, and the optional qk_matmul_output in its four modes. Per (batch, head): one GEMM for the
// scores, a row softmax in double (fully masked rows give zeros, as the spec's errata says), one GEMM
// for the output.
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

#include "nn_common.h"

namespace parity::refrt {
namespace {

class AttentionKernel : public Kernel {
 public:
  explicit AttentionKernel(const NodeDef& node)
      : node_(node),
        causal_(node.attr_int("is_causal", 0) != 0),
        q_heads_(node.attr_int("q_num_heads", 0)),
        kv_heads_(node.attr_int("kv_num_heads", 0)),
        mode_(node.attr_int("qk_matmul_output_mode", 0)),
        softcap_(node.attr_float("softcap", 0.0f)),
        scale_attr_(node.attr("scale", Attribute::Type::kFloat) != nullptr),
        scale_(node.attr_float("scale", 0.0f)) {
    if (mode_ < 0 || mode_ > 3) node.fail("qk_matmul_output_mode must be 0..3, got " + std::to_string(mode_));
  }

  void compute(KernelIO& io) const override {
    nn::run_float(node_, io, io.in(0).dtype(), [&](auto tag, KernelIO& f) { run<decltype(tag)>(f); });
  }

  // The two GEMMs: 2 * total keys * (Q elements + Y elements).
  double flops(const KernelIO& io) const override {
    const Tensor& q = io.in(0);
    const Tensor& v = io.in(2);
    const Tensor* past_v = io.optional(5);
    const int64_t total = (v.rank() == 4 ? v.dim(2) : v.dim(1)) + (past_v ? past_v->dim(2) : 0);
    return 2.0 * static_cast<double>(total) * static_cast<double>(q.numel() + io.outputs[0].numel());
  }

 private:
  // A [B, heads, S, d] contiguous copy of a 3-D [B, S, heads * d] or 4-D input, optionally after `past`.
  template <typename T>
  Tensor heads_layout(const Tensor& t, int64_t heads, const Tensor* past, const char* what) const {
    const bool three_d = t.rank() == 3;
    const int64_t b = t.dim(0), s = three_d ? t.dim(1) : t.dim(2);
    if (three_d && t.dim(2) % heads != 0)
      node_.fail(std::string(what) + " hidden size is not divisible by its head count");
    const int64_t d = three_d ? t.dim(2) / heads : t.dim(3);
    if (!three_d && t.dim(1) != heads) node_.fail(std::string(what) + " head count differs");
    int64_t p = 0;
    if (past) {
      if (past->rank() != 4 || past->dim(0) != b || past->dim(1) != heads || past->dim(3) != d ||
          past->dtype() != t.dtype())
        node_.fail(std::string("past of ") + what + " must be [" + std::to_string(b) + ", " + std::to_string(heads) +
                   ", past, " + std::to_string(d) + "], got " + shape_str(past->shape()));
      p = past->dim(2);
    }
    Tensor out(t.dtype(), {b, heads, p + s, d});
    T* po = out.data<T>();
    const T* pt = t.data<T>();
    for (int64_t i = 0; i < b; ++i)
      for (int64_t h = 0; h < heads; ++h) {
        T* dst = po + (i * heads + h) * (p + s) * d;
        if (p > 0) std::memcpy(dst, past->data<T>() + (i * heads + h) * p * d, static_cast<size_t>(p * d) * sizeof(T));
        for (int64_t j = 0; j < s; ++j) {
          const T* src = three_d ? pt + (i * s + j) * heads * d + h * d : pt + ((i * heads + h) * s + j) * d;
          std::memcpy(dst + (p + j) * d, src, static_cast<size_t>(d) * sizeof(T));
        }
      }
    return out;
  }

  // attn_mask broadcast to [B, qh, sq, total] by strides; a shorter last dim is padded as masked.
  struct MaskView {
    Shape dims = Shape(4, 1);
    std::vector<int64_t> stride = std::vector<int64_t>(4, 0);
  };
  MaskView mask_view(const Tensor* mask, DType q_dtype, const std::array<int64_t, 4>& want) const {
    MaskView v;
    if (!mask) return v;
    if (mask->rank() < 1 || mask->rank() > 4)
      node_.fail("attn_mask must have rank 1..4, got " + shape_str(mask->shape()));
    if (mask->dtype() != DType::kBool && mask->dtype() != q_dtype) node_.fail("attn_mask must be bool or Q's dtype");
    Shape& ms = v.dims;
    for (size_t i = 0; i < mask->rank(); ++i) ms[4 - mask->rank() + i] = mask->dim(i);
    int64_t st = 1;
    for (int d = 3; d >= 0; --d) {
      const size_t u = static_cast<size_t>(d);
      if (d == 3 ? ms[3] > want[3] : (ms[u] != 1 && ms[u] != want[u]))
        node_.fail("attn_mask " + shape_str(mask->shape()) + " does not broadcast to " +
                   shape_str({want[0], want[1], want[2], want[3]}));
      v.stride[u] = ms[u] == 1 && d != 3 ? 0 : st;
      st *= ms[u];
    }
    return v;
  }

  // One row of scaled scores becomes probabilities in place: softcap, bias (-inf = masked), softmax in
  // double; a row whose every key is masked is all zeros (torch's rule). `qk_row` (optional) receives the
  // row at the stage mode_ names.
  template <typename T, typename Bias>
  void softmax_row(T* srow, int64_t total, std::vector<double>& row, T* qk_row, Bias bias_of) const {
    const double neg_inf = -std::numeric_limits<double>::infinity();
    double max = neg_inf;
    bool all_masked = true;
    for (int64_t j = 0; j < total; ++j) {
      double s = static_cast<double>(srow[j]);
      if (qk_row && mode_ == 0) qk_row[j] = srow[j];
      if (softcap_ > 0) s = softcap_ * std::tanh(s / softcap_);
      if (qk_row && mode_ == 1) qk_row[j] = static_cast<T>(s);
      const double bias = bias_of(j);
      all_masked = all_masked && bias == neg_inf;
      s += bias;
      if (qk_row && mode_ == 2) qk_row[j] = static_cast<T>(s);
      row[static_cast<size_t>(j)] = s;
      max = std::max(max, s);
    }
    double sum = 0;
    for (int64_t j = 0; j < total; ++j) {
      double& e = row[static_cast<size_t>(j)];
      e = all_masked || max == neg_inf ? 0.0 : std::exp(e - max);
      sum += e;
    }
    for (int64_t j = 0; j < total; ++j) {
      srow[j] = static_cast<T>(sum > 0 ? row[static_cast<size_t>(j)] / sum : 0.0);
      if (qk_row && mode_ == 3) qk_row[j] = srow[j];
    }
  }

  template <typename T>
  void run(KernelIO& io) const {
    const Tensor& q = io.in(0);
    const Tensor& k = io.in(1);
    const Tensor& v = io.in(2);
    const Tensor* mask = io.optional(3);
    const Tensor* past_k = io.optional(4);
    const Tensor* past_v = io.optional(5);
    if (q.rank() != k.rank() || q.rank() != v.rank() || (q.rank() != 3 && q.rank() != 4))
      node_.fail("Q, K and V must all be 3-D or all 4-D, got " + shape_str(q.shape()) + ", " + shape_str(k.shape()) +
                 ", " + shape_str(v.shape()));
    if (k.dtype() != q.dtype() || v.dtype() != q.dtype()) node_.fail("Q, K and V dtypes differ");
    if ((past_k == nullptr) != (past_v == nullptr)) node_.fail("past_key and past_value must be given together");
    const bool three_d = q.rank() == 3;
    if (three_d && (q_heads_ <= 0 || kv_heads_ <= 0)) node_.fail("3-D inputs need q_num_heads and kv_num_heads");
    const int64_t b = q.dim(0), qh = three_d ? q_heads_ : q.dim(1), kvh = three_d ? kv_heads_ : k.dim(1);
    const int64_t sq = three_d ? q.dim(1) : q.dim(2);
    if (three_d && q.dim(2) % qh != 0) node_.fail("Q hidden size is not divisible by q_num_heads");
    const int64_t hd = three_d ? q.dim(2) / qh : q.dim(3);
    if (k.dim(0) != b || v.dim(0) != b) node_.fail("batch sizes differ");
    if (kvh <= 0 || qh % kvh != 0)
      node_.fail("q heads " + std::to_string(qh) + " is not a multiple of kv heads " + std::to_string(kvh));
    const Tensor kk = heads_layout<T>(k, kvh, past_k, "K"), vv = heads_layout<T>(v, kvh, past_v, "V");
    if (kk.dim(3) != hd)
      node_.fail("K head size " + std::to_string(kk.dim(3)) + " differs from Q's " + std::to_string(hd));
    if (kk.dim(2) != vv.dim(2)) node_.fail("K and V sequence lengths differ");
    const int64_t total = kk.dim(2), vd = vv.dim(3), past_len = past_k ? past_k->dim(2) : 0;
    const double scale = scale_attr_ ? static_cast<double>(scale_) : 1.0 / std::sqrt(static_cast<double>(hd));

    const MaskView mv = mask_view(mask, q.dtype(), {b, qh, sq, total});
    const Shape& ms = mv.dims;
    const std::vector<int64_t>& mstride = mv.stride;
    const double neg_inf = -std::numeric_limits<double>::infinity();
    auto bias_at = [&](int64_t bi, int64_t h, int64_t i, int64_t j) {
      double bias = 0;
      if (causal_ && j > i + past_len) bias = neg_inf;
      if (mask) {
        if (j >= ms[3]) return neg_inf;
        const int64_t off = bi * mstride[0] + h * mstride[1] + i * mstride[2] + j * mstride[3];
        if (mask->dtype() == DType::kBool) {
          if (!mask->data<uint8_t>()[off]) bias = neg_inf;
        } else {
          bias += static_cast<double>(mask->data<T>()[off]);
        }
      }
      return bias;
    };

    const Shape y_shape = three_d ? Shape{b, sq, qh * vd} : Shape{b, qh, sq, vd};
    Tensor y(q.dtype(), y_shape);
    BackendSet ran = 0;  // what ran the products, for the profile
    const bool want_qk = io.outputs.size() > 3;
    Tensor qk_out = want_qk ? Tensor(q.dtype(), {b, qh, sq, total}) : Tensor();
    std::vector<T> scores(static_cast<size_t>(sq * total));
    std::vector<double> row(static_cast<size_t>(total));
    for (int64_t bi = 0; bi < b; ++bi)
      for (int64_t h = 0; h < qh; ++h) {
        const int64_t kvi = h / (qh / kvh);
        const T* qp = three_d ? q.data<T>() + bi * sq * qh * hd + h * hd : q.data<T>() + (bi * qh + h) * sq * hd;
        const int64_t ldq = three_d ? qh * hd : hd;
        const T* kp = kk.data<T>() + (bi * kvh + kvi) * total * hd;
        const T* vp = vv.data<T>() + (bi * kvh + kvi) * total * vd;
        ran |= backend_bit(gemm<T>(node_, false, true, sq, total, hd, static_cast<T>(scale), qp, ldq, kp, hd, T(0),
                                   scores.data(), total));
        T* qk_rows = want_qk ? qk_out.data<T>() + (bi * qh + h) * sq * total : nullptr;
        for (int64_t i = 0; i < sq; ++i)
          softmax_row<T>(scores.data() + i * total, total, row, qk_rows ? qk_rows + i * total : nullptr,
                         [&](int64_t j) { return bias_at(bi, h, i, j); });
        T* yp = three_d ? y.data<T>() + bi * sq * qh * vd + h * vd : y.data<T>() + (bi * qh + h) * sq * vd;
        ran |= backend_bit(gemm<T>(node_, false, false, sq, vd, total, T(1), scores.data(), total, vp, vd, T(0), yp,
                                   three_d ? qh * vd : vd));
      }
    note_backends(io, ran);
    io.outputs[0] = std::move(y);
    if (io.outputs.size() > 1) io.outputs[1] = kk;
    if (io.outputs.size() > 2) io.outputs[2] = vv;
    if (want_qk) io.outputs[3] = std::move(qk_out);
  }

  NodeDef node_;
  bool causal_;
  int64_t q_heads_, kv_heads_, mode_;
  float softcap_;
  bool scale_attr_;
  float scale_;
};

}  // namespace

PARITY_KERNEL("Attention", 23, AttentionKernel, kFloatTypes16);

}  // namespace parity::refrt
