// FusedAttention (refrt's private domain), made at load by optimize/fuse_attention.cc. Two forms:
//  form 1: an opset-23 Attention node without past inputs, present / qk outputs or softcap (4-D
//          [B, heads, S, d] or 3-D [B, S, heads * d] Q, K, V; GQA / MQA head sharing; bool or additive
//          attn_mask, a shorter last dim padded as masked; is_causal; scale), its attributes kept;
//  form 0: softmax(A B * scale [+ mask | Where mask]) V as the exporters write it with MatMuls:
//          inputs A [..., S, d], B ([..., d, T], or K [..., T, d] with trans_b = 1: a Transpose of the last
//          two axes absorbed), V [..., T, dv], optional mask; `scores_shape` / `probs_shape` the
//          Reshapes between the first MatMul and the mask and between the softmax and the second
//          MatMul (they may split or merge leading dims only), `mask_kind` 1 Add, 2 Where(m, s, fill),
//          3 Where(m, fill, s), `safe` 1 for _safe_softmax's zeros on fully masked rows (else NaN, as
//          Softmax gives); `kv_expand` [B, kvH, g, T, d, dv] when K and V arrive before a grouped-query
//          expansion (repeat_interleave over heads: Reshape(Expand(Unsqueeze(kv, 2), [B, kvH, g, T, d]),
//          [B, kvH * g, T, d]), folded by the pass): query head h reads kv head h / g, nothing is copied;
//          `kv_flat` 1 when the chain reads the expanded K and V with their leading dims merged
//          ([B * kvH * g, T, d], torch's bmm form): K and V are then read as [B * kvH, T, d].
// Both run attention_fused.h's core: float32 and float64 natively, float16 / bfloat16 in float32 (Q and an additive
// mask widened, K and V widened block by block inside the core, Y rounded once).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

#include "attention_fused.h"
#include "nn_common.h"

namespace parity::refrt {
namespace {

using fused_attention::Head;
using fused_attention::MaskKind;
using fused_attention::Params;

// Element strides of `t`'s shape placed at the right of a `target`-rank broadcast shape (0 where it
// broadcasts); fails unless it broadcasts to `target` without growing it.
std::vector<int64_t> broadcast_strides(const NodeDef& node, const Shape& shape, const Shape& target, const char* what) {
  std::vector<int64_t> st(target.size(), 0);
  if (shape.size() > target.size())
    node.fail(std::string(what) + " " + shape_str(shape) + " does not broadcast to " + shape_str(target),
              ErrorKind::kUnsupported);
  int64_t s = 1;
  for (size_t k = 0; k < shape.size(); ++k) {
    const size_t u = shape.size() - 1 - k, tu = target.size() - 1 - k;
    if (shape[u] != target[tu] && shape[u] != 1)
      node.fail(std::string(what) + " " + shape_str(shape) + " does not broadcast to " + shape_str(target),
                ErrorKind::kUnsupported);
    st[tu] = shape[u] == 1 && target[tu] != 1 ? 0 : s;
    s *= shape[u];
  }
  return st;
}

// The leading dims of a shape (all but the last two).
Shape lead(const Shape& s) { return Shape(s.begin(), s.end() - 2); }

// Reshape's target (0 copies the input dim, -1 is inferred) for an input of shape `in`.
Shape reshaped(const NodeDef& node, const std::vector<int64_t>& spec, const Shape& in) {
  int64_t numel = 1, known = 1, infer = -1;
  for (int64_t d : in) numel *= d;
  Shape out(spec.size());
  for (size_t k = 0; k < spec.size(); ++k) {
    if (spec[k] == -1) {
      infer = static_cast<int64_t>(k);
      continue;
    }
    out[k] = spec[k] == 0 && k < in.size() ? in[k] : spec[k];
    known *= out[k];
  }
  if (infer >= 0) out[static_cast<size_t>(infer)] = known == 0 ? 0 : numel / known;
  int64_t total = 1;
  for (int64_t d : out) total *= d;
  if (total != numel) node.fail("cannot reshape the scores " + shape_str(in) + " to " + shape_str(out));
  return out;
}

// Offset of flat index n of a `dims`-shaped iteration in a tensor with strides `st` (one per dim); the last dim's
// index divided by `group` first (a grouped-query K or V: query head h reads kv head h / group).
int64_t offset_of(int64_t n, const Shape& dims, const std::vector<int64_t>& st, int64_t group = 1) {
  int64_t off = 0;
  for (size_t k = dims.size(); k-- > 0;) {
    off += (k + 1 == dims.size() ? n % dims[k] / group : n % dims[k]) * st[k];
    n /= dims[k];
  }
  return off;
}

// What the folded expansion computed: `kv` [B', kvH', T', c'] (each dim the expansion's or 1) broadcast to
// [B, kvH, g, T, c] and read as [B, kvH * g, T, c]. Only where the KV tensor is not exactly [B, kvH, T, c]
// (a dim of 1 broadcast), which the grouped read does not cover.
Tensor expand_kv(const NodeDef& node, const Tensor& kv, const std::vector<int64_t>& e, int64_t c, const char* what) {
  const Shape want{e[0], e[1], e[3], c};
  bool fits = kv.rank() == 4;
  for (int64_t k = 0; k < 4 && fits; ++k) fits = kv.dim(k) == want[static_cast<size_t>(k)] || kv.dim(k) == 1;
  if (!fits) node.fail(std::string(what) + " " + shape_str(kv.shape()) + " does not expand to " + shape_str(want));
  Tensor out(kv.dtype(), {e[0], e[1] * e[2], e[3], c});
  const size_t bytes = dtype_size(kv.dtype());
  const auto* src = static_cast<const std::byte*>(kv.raw());
  auto* dst = static_cast<std::byte*>(out.mutable_raw());
  auto at = [&](int64_t k, int64_t i) { return kv.dim(k) == 1 ? 0 : i; };
  for (int64_t b = 0; b < e[0]; ++b)
    for (int64_t h = 0; h < e[1] * e[2]; ++h)
      for (int64_t t = 0; t < e[3]; ++t) {
        const int64_t row = ((at(0, b) * kv.dim(1) + at(1, h / e[2])) * kv.dim(2) + at(2, t)) * kv.dim(3);
        std::byte* to = dst + static_cast<size_t>(((b * e[1] * e[2] + h) * e[3] + t) * c) * bytes;
        if (kv.dim(3) == c) {
          std::memcpy(to, src + static_cast<size_t>(row) * bytes, static_cast<size_t>(c) * bytes);
          continue;
        }
        for (int64_t j = 0; j < c; ++j) std::memcpy(to + static_cast<size_t>(j) * bytes, src + row * bytes, bytes);
      }
  return out;
}

class FusedAttentionKernel : public Kernel {
 public:
  explicit FusedAttentionKernel(const NodeDef& node)
      : node_(node),
        form_(node.attr_int("form", 0)),
        causal_(node.attr_int("is_causal", 0) != 0),
        q_heads_(node.attr_int("q_num_heads", 0)),
        kv_heads_(node.attr_int("kv_num_heads", 0)),
        scale_attr_(node.attr("scale", Attribute::Type::kFloat) != nullptr),
        scale_(node.attr_float("scale", 1.0f)),
        trans_b_(node.attr_int("trans_b", 0) != 0),
        mask_kind_(node.attr_int("mask_kind", 0)),
        fill_(node.attr_float("fill", 0.0f)),
        safe_(node.attr_int("safe", 0) != 0),
        axis_(node.attr_int("axis", -1)),
        scores_shape_(node.attr_ints("scores_shape")),
        probs_shape_(node.attr_ints("probs_shape")),
        b_shape_(node.attr_ints("b_shape")),
        kv_expand_(node.attr_ints("kv_expand")),
        kv_flat_(node.attr_int("kv_flat", 0) != 0) {
    const bool positive = std::all_of(kv_expand_.begin(), kv_expand_.end(), [](int64_t x) { return x > 0; });
    if (!kv_expand_.empty() && (kv_expand_.size() != 6 || !positive || form_ != 0 || !trans_b_ || !b_shape_.empty()))
      node.fail("FusedAttention kv_expand needs form 0, trans_b and 6 positive values [B, kvH, g, T, d, dv]");
    if (kv_flat_ && kv_expand_.empty()) node.fail("FusedAttention kv_flat needs kv_expand");
    if (form_ != 0 && form_ != 1) node.fail("FusedAttention form must be 0 or 1");
    if (mask_kind_ < 0 || mask_kind_ > 3) node.fail("FusedAttention mask_kind must be 0..3");
  }

  void compute(KernelIO& io) const override {
    const DType dtype = io.in(0).dtype();
    if (is_float16_like(dtype)) return run_half(io, dtype);
    nn::run_float(node_, io, dtype, [&](auto tag, KernelIO& f) {
      using T = decltype(tag);
      form_ == 1 ? run_attention_op<T>(f) : run_chain<T>(f);
    });
  }

  // The two products: 2 * keys * (d + dv) per output row (the Attention op: 2 * keys * (Q + Y elements), as its
  // kernel counts them).
  double flops(const KernelIO& io) const override {
    if (io.outputs.empty() || io.outputs[0].numel() == 0) return 0;
    const Tensor& q = io.in(0);
    const Tensor& v = io.in(2);
    const Tensor& y = io.outputs[0];
    if (form_ == 1)
      return 2.0 * static_cast<double>(v.rank() == 3 ? v.dim(1) : v.dim(2)) *
             static_cast<double>(q.numel() + y.numel());
    const double rows = static_cast<double>(y.numel() / v.dim(v.rank() - 1));
    return 2.0 * static_cast<double>(v.dim(v.rank() - 2)) * rows *
           static_cast<double>(q.dim(q.rank() - 1) + v.dim(v.rank() - 1));
  }

 private:
  // float16 / bfloat16: Q and an additive mask widened (a decode step's are one row), K and V left in their dtype
  // for the core to widen block by block (they are the KV cache), Y computed in float32 and rounded once.
  void run_half(KernelIO& io, DType dtype) const {
    if (io.in(1).dtype() != dtype || io.in(2).dtype() != dtype) node_.fail("attention operand dtypes differ");
    KernelIO f;
    f.pool = io.pool;
    std::vector<Tensor> widened;
    widened.reserve(io.inputs.size());
    for (size_t i = 0; i < io.inputs.size(); ++i) {
      const Tensor* in = io.inputs[i];
      if (in && i != 1 && i != 2 && in->dtype() == dtype) {
        widened.push_back(widen_to_float32(*in, &io));
        in = &widened.back();
      }
      f.inputs.push_back(in);
    }
    f.outputs.resize(io.outputs.size());
    form_ == 1 ? run_attention_op<float, uint16_t>(f) : run_chain<float, uint16_t>(f);
    io.impl = intern_impl("float32 " + std::string(f.impl));
    io.outputs[0] = narrow_from_float32(f.outputs[0], dtype, &io);
  }

  template <typename T, typename TK>
  void finish(const KernelIO& io, const Params& p, const std::vector<Head<T, TK>>& heads) const {
    const BackendSet ran = fused_attention::run<T, TK>(node_, io, p, heads);
    const std::string_view products = backend_label(ran);
    io.impl = intern_impl("refrt fused attention (" + std::string(fused_attention::row_path()) + ")" +
                          (products.empty() ? "" : " + " + std::string(products)));
  }

  // form 1: the Attention op's layouts (attention.cc documents the semantics this reproduces).
  template <typename T, typename TK = T>
  void run_attention_op(KernelIO& io) const {
    const Tensor& q = io.in(0);
    const Tensor& k = io.in(1);
    const Tensor& v = io.in(2);
    const Tensor* mask = io.optional(3);
    if (q.rank() != k.rank() || q.rank() != v.rank() || (q.rank() != 3 && q.rank() != 4))
      node_.fail("Q, K and V must all be 3-D or all 4-D, got " + shape_str(q.shape()) + ", " + shape_str(k.shape()) +
                 ", " + shape_str(v.shape()));
    if (k.dtype() != v.dtype() || (std::is_same_v<T, TK> && k.dtype() != q.dtype()))
      node_.fail("Q, K and V dtypes differ");
    const bool three_d = q.rank() == 3;
    if (three_d && (q_heads_ <= 0 || kv_heads_ <= 0)) node_.fail("3-D inputs need q_num_heads and kv_num_heads");
    const int64_t b = q.dim(0), qh = three_d ? q_heads_ : q.dim(1), kvh = three_d ? kv_heads_ : k.dim(1);
    const int64_t sq = three_d ? q.dim(1) : q.dim(2), total = three_d ? k.dim(1) : k.dim(2);
    if (three_d && (q.dim(2) % qh != 0 || k.dim(2) % kvh != 0 || v.dim(2) % kvh != 0))
      node_.fail("Q, K or V hidden size is not divisible by its head count");
    const int64_t hd = three_d ? q.dim(2) / qh : q.dim(3), kd = three_d ? k.dim(2) / kvh : k.dim(3);
    const int64_t vd = three_d ? v.dim(2) / kvh : v.dim(3);
    if (k.dim(0) != b || v.dim(0) != b) node_.fail("batch sizes differ");
    if (!three_d && v.dim(1) != kvh) node_.fail("K and V head counts differ");
    if (kvh <= 0 || qh % kvh != 0)
      node_.fail("q heads " + std::to_string(qh) + " is not a multiple of kv heads " + std::to_string(kvh));
    if (kd != hd) node_.fail("K head size " + std::to_string(kd) + " differs from Q's " + std::to_string(hd));
    if ((three_d ? v.dim(1) : v.dim(2)) != total) node_.fail("K and V sequence lengths differ");
    Params p;
    p.sq = sq, p.total = total, p.d = hd, p.dv = vd;
    if constexpr (!std::is_same_v<T, TK>) p.kv_type = k.dtype();
    p.scale = scale_attr_ ? static_cast<double>(scale_) : 1.0 / std::sqrt(static_cast<double>(hd));
    p.causal = causal_;
    p.safe = true;
    Shape mdims(4, 1);
    std::vector<int64_t> mst(4, 0);
    if (mask) {
      if (mask->rank() < 1 || mask->rank() > 4)
        node_.fail("attn_mask must have rank 1..4, got " + shape_str(mask->shape()));
      if (mask->dtype() != DType::kBool && mask->dtype() != q.dtype())
        node_.fail("attn_mask must be bool or Q's dtype");
      for (size_t i = 0; i < mask->rank(); ++i) mdims[4 - mask->rank() + i] = mask->dim(i);
      const std::array<int64_t, 4> want{b, qh, sq, total};
      int64_t st = 1;
      for (int d = 3; d >= 0; --d) {
        const size_t u = static_cast<size_t>(d);
        if (d == 3 ? mdims[3] > want[3] : (mdims[u] != 1 && mdims[u] != want[u]))
          node_.fail("attn_mask " + shape_str(mask->shape()) + " does not broadcast to " +
                     shape_str({want[0], want[1], want[2], want[3]}));
        mst[u] = mdims[u] == 1 && d != 3 ? 0 : st;
        st *= mdims[u];
      }
      p.mask_cols = mdims[3];  // a shorter last dim: the keys past it are masked
      p.mask = mask->dtype() == DType::kBool ? MaskKind::kKeep : MaskKind::kAdd;
      p.fill = -std::numeric_limits<double>::infinity();
    }
    Tensor y(q.dtype(), three_d ? Shape{b, sq, qh * vd} : Shape{b, qh, sq, vd});
    std::vector<Head<T, TK>> heads;
    heads.reserve(static_cast<size_t>(b * qh));
    for (int64_t bi = 0; bi < b; ++bi)
      for (int64_t h = 0; h < qh; ++h) {
        const int64_t kvi = h / (qh / kvh);
        Head<T, TK> hh;
        hh.q = three_d ? q.data<T>() + bi * sq * qh * hd + h * hd : q.data<T>() + (bi * qh + h) * sq * hd;
        hh.ldq = three_d ? qh * hd : hd;
        hh.k = three_d ? k.data<TK>() + bi * total * kvh * hd + kvi * hd : k.data<TK>() + (bi * kvh + kvi) * total * hd;
        hh.ldk = three_d ? kvh * hd : hd;
        hh.v = three_d ? v.data<TK>() + bi * total * kvh * vd + kvi * vd : v.data<TK>() + (bi * kvh + kvi) * total * vd;
        hh.ldv = three_d ? kvh * vd : vd;
        hh.y = three_d ? y.data<T>() + bi * sq * qh * vd + h * vd : y.data<T>() + (bi * qh + h) * sq * vd;
        hh.ldy = three_d ? qh * vd : vd;
        if (mask) {
          const int64_t off = bi * mst[0] + h * mst[1];
          hh.mask = mask->dtype() == DType::kBool ? static_cast<const void*>(mask->data<uint8_t>() + off)
                                                  : static_cast<const void*>(mask->data<T>() + off);
          hh.mask_ld = mst[2];
          hh.mask_cs = 1;
        }
        heads.push_back(hh);
      }
    finish<T, TK>(io, p, heads);
    io.outputs[0] = std::move(y);
  }

  // trans_b with b_shape: B is Reshape(K^T, b_shape). When that Reshape keeps K^T's last two dims, K is read as
  // it is with the Reshape's leading dims; otherwise K^T is materialised and reshaped (trans_b cleared), as the
  // graph did.
  template <typename T>
  Tensor key_operand(const Tensor& kk, bool& trans_b) const {
    if (!trans_b_ || b_shape_.empty()) return kk;
    if (kk.rank() < 2) node_.fail("the key of an attention must have rank >= 2, got " + shape_str(kk.shape()));
    const int64_t kt_rows = kk.dim(kk.rank() - 1), kt_cols = kk.dim(kk.rank() - 2);
    Shape kt_shape = lead(kk.shape());
    kt_shape.push_back(kt_rows);
    kt_shape.push_back(kt_cols);
    const Shape to = reshaped(node_, b_shape_, kt_shape);
    if (to.size() >= 2 && to[to.size() - 2] == kt_rows && to.back() == kt_cols) {
      Shape k_shape = lead(to);
      k_shape.push_back(kt_cols);
      k_shape.push_back(kt_rows);
      return kk.reshaped(k_shape);
    }
    Tensor kt(kk.dtype(), kt_shape);
    const int64_t mats = kk.numel() / std::max<int64_t>(1, kt_rows * kt_cols);
    const T* src = kk.data<T>();
    T* dst = kt.data<T>();
    for (int64_t m = 0; m < mats; ++m)
      for (int64_t r0 = 0; r0 < kt_cols; ++r0)
        for (int64_t c0 = 0; c0 < kt_rows; ++c0)
          dst[m * kt_rows * kt_cols + c0 * kt_cols + r0] = src[m * kt_rows * kt_cols + r0 * kt_rows + c0];
    trans_b = false;
    return kt.reshaped(to);
  }

  // Where each flattened leading index of the chain finds its operands (element strides per leading dim).
  struct ChainLayout {
    const Shape &l1, &l2, &sc;  // leading dims of the scores, of the probabilities; the masked scores' shape
    const std::vector<int64_t>&a_step, &b_step, &v_step, &m_st;
    bool trans_b;
    int64_t group;  // > 1: K and V are grouped-query kv heads (kv_expand)
  };

  template <typename T, typename TK>
  std::vector<Head<T, TK>> chain_heads(const ChainLayout& lay, const Params& p, const Tensor& a, const Tensor& bt,
                                       const Tensor& v, const Tensor* mask, Tensor& y) const {
    int64_t n = 1;
    for (int64_t x : lay.l1) n *= x;
    const Shape sc_lead = lead(lay.sc);
    std::vector<Head<T, TK>> heads(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      Head<T, TK>& h = heads[static_cast<size_t>(i)];
      h.q = a.data<T>() + offset_of(i, lay.l1, lay.a_step);
      h.ldq = p.d;
      h.k = bt.data<TK>() + offset_of(i, lay.l1, lay.b_step, lay.group);
      h.k_rows = lay.trans_b;
      h.ldk = lay.trans_b ? p.d : p.total;
      h.v = v.data<TK>() + offset_of(i, lay.l2, lay.v_step, lay.group);
      h.ldv = p.dv;
      h.y = y.data<T>() + i * p.sq * p.dv;
      h.ldy = p.dv;
      if (mask) {
        const std::vector<int64_t> lead_st(lay.m_st.begin(), lay.m_st.end() - 2);
        const int64_t off = offset_of(i, sc_lead, lead_st);
        h.mask = mask->dtype() == DType::kBool ? static_cast<const void*>(mask->data<uint8_t>() + off)
                                               : static_cast<const void*>(mask->data<T>() + off);
        h.mask_ld = lay.m_st[lay.m_st.size() - 2];
        h.mask_cs = lay.m_st.back();
      }
    }
    return heads;
  }

  // An operand's leading dims (kv heads last when group > 1) as they iterate: its kv heads count group query heads.
  static Shape grouped(Shape lead_dims, int64_t group) {
    if (group > 1 && !lead_dims.empty()) lead_dims.back() *= group;
    return lead_dims;
  }

  // Element strides (`matrix` elements a step) of an operand's leading dims in the iteration `dims`, whose last dim
  // counts query heads when group > 1 (offset_of divides it by the group).
  std::vector<int64_t> lead_steps(const Shape& op_lead, Shape dims, int64_t group, int64_t matrix,
                                  const char* what) const {
    if (group > 1 && !dims.empty()) dims.back() /= group;
    std::vector<int64_t> st = broadcast_strides(node_, op_lead, dims, what);
    for (auto& x : st) x *= matrix;
    return st;
  }

  // K and V as the fused node reads them: as they are; with kv_expand, grouped (the group returned) where they are
  // exactly [B, kvH, T, d] / [B, kvH, T, dv], else expanded here (`k_full`, `v_full`: a dim of 1 broadcast).
  int64_t kv_operands(const KernelIO& io, const Tensor*& k, const Tensor*& v, Tensor& k_full, Tensor& v_full) const {
    k = &io.in(1), v = &io.in(2);
    const std::vector<int64_t>& e = kv_expand_;
    if (e.empty()) return 1;
    auto exact = [&](const Tensor& t, int64_t c) { return t.shape() == Shape{e[0], e[1], e[3], c}; };
    // kv_flat: the leading dims merged, as the chain's Reshapes had them (grouped: [B * kvH], else [B * kvH * g]).
    auto flat = [&](const Tensor& t, int64_t heads, int64_t c) { return t.reshaped({e[0] * heads, e[3], c}); };
    if (exact(*k, e[4]) && exact(*v, e[5])) {
      if (kv_flat_) {
        k_full = flat(*k, e[1], e[4]), v_full = flat(*v, e[1], e[5]);
        k = &k_full, v = &v_full;
      }
      return e[2];
    }
    k_full = expand_kv(node_, *k, e, e[4], "K");
    v_full = expand_kv(node_, *v, e, e[5], "V");
    if (kv_flat_) k_full = flat(k_full, e[1] * e[2], e[4]), v_full = flat(v_full, e[1] * e[2], e[5]);
    k = &k_full, v = &v_full;
    return 1;
  }

  // form 0: the MatMul chain, leading dims broadcast as MatMul does.
  template <typename T, typename TK = T>
  void run_chain(KernelIO& io) const {
    const Tensor& a = io.in(0);
    bool trans_b = trans_b_;
    const Tensor *k_in = nullptr, *v_in = nullptr;
    Tensor k_full, v_full;
    const int64_t group = kv_operands(io, k_in, v_in, k_full, v_full);
    const Tensor b_view = key_operand<TK>(*k_in, trans_b);
    const Tensor& bt = b_view;
    const Tensor& v = *v_in;
    const Tensor* mask = io.optional(3);
    if (a.rank() < 2 || bt.rank() < 2 || v.rank() < 2)
      node_.fail("attention operands must have rank >= 2, got " + shape_str(a.shape()) + ", " + shape_str(bt.shape()) +
                     ", " + shape_str(v.shape()),
                 ErrorKind::kUnsupported);
    if (bt.dtype() != v.dtype() || (std::is_same_v<T, TK> && bt.dtype() != a.dtype()))
      node_.fail("attention operand dtypes differ");
    const int64_t sq = a.dim(a.rank() - 2), d = a.dim(a.rank() - 1);
    const int64_t total = trans_b ? bt.dim(bt.rank() - 2) : bt.dim(bt.rank() - 1);
    const int64_t kd = trans_b ? bt.dim(bt.rank() - 1) : bt.dim(bt.rank() - 2);
    if (kd != d)
      node_.fail("MatMul of scores: " + shape_str(a.shape()) + " and " + shape_str(bt.shape()) +
                 (trans_b ? " (transposed)" : "") + " do not multiply");
    const Shape l1 = broadcast_shapes(lead(a.shape()), grouped(lead(bt.shape()), group), &node_);
    Shape scores = l1;
    scores.push_back(sq);
    scores.push_back(total);
    const Shape sc = scores_shape_.empty() ? scores : reshaped(node_, scores_shape_, scores);
    auto keeps_rows = [&](const Shape& s) { return s.size() >= 2 && s[s.size() - 2] == sq && s.back() == total; };
    if (!keeps_rows(sc))
      node_.fail("the scores' Reshape to " + shape_str(sc) + " changes their last two dims", ErrorKind::kUnsupported);
    const int64_t rank = static_cast<int64_t>(sc.size());
    if ((axis_ < 0 ? axis_ + rank : axis_) != rank - 1)
      node_.fail("softmax axis " + std::to_string(axis_) + " is not the scores' last", ErrorKind::kUnsupported);
    const Shape l2 = probs_shape_.empty() ? lead(sc) : lead(reshaped(node_, probs_shape_, sc));
    if (!keeps_rows(probs_shape_.empty() ? sc : reshaped(node_, probs_shape_, sc)))
      node_.fail("the probabilities' Reshape changes their last two dims", ErrorKind::kUnsupported);
    if (v.dim(v.rank() - 2) != total)
      node_.fail("MatMul of probabilities [.., " + std::to_string(total) + "] and V " + shape_str(v.shape()) +
                 " do not multiply");
    const int64_t dv = v.dim(v.rank() - 1);
    if (group > 1 && l2 != l1) node_.fail("grouped K and V need the scores' and probabilities' leading dims alike");
    const std::vector<int64_t> a_step = lead_steps(lead(a.shape()), l1, 1, sq * d, "A");
    const std::vector<int64_t> b_step = lead_steps(lead(bt.shape()), l1, group, total * d, "B");
    const std::vector<int64_t> v_step = lead_steps(lead(v.shape()), l2, group, total * dv, "V");
    Params p;
    p.sq = sq, p.total = total, p.d = d, p.dv = dv;
    if constexpr (!std::is_same_v<T, TK>) p.kv_type = v.dtype();
    p.scale = static_cast<double>(scale_);
    p.safe = safe_;
    std::vector<int64_t> m_st;
    if (mask) {
      p.mask = static_cast<MaskKind>(mask_kind_);
      const bool want_bool = p.mask != MaskKind::kAdd;
      if (want_bool != (mask->dtype() == DType::kBool) || (!want_bool && mask->dtype() != a.dtype()))
        node_.fail("attention mask dtype " + dtype_name(mask->dtype()) + " does not fit its " +
                   (want_bool ? "Where" : "Add"));
      p.fill = static_cast<double>(fill_);
      m_st = broadcast_strides(node_, mask->shape(), sc, "attention mask");
    } else if (mask_kind_ != 0) {
      node_.fail("FusedAttention with mask_kind " + std::to_string(mask_kind_) + " has no mask input");
    }
    const ChainLayout lay{l1, l2, sc, a_step, b_step, v_step, m_st, trans_b, group};
    Shape out = l2;
    out.push_back(sq);
    out.push_back(dv);
    Tensor y(a.dtype(), out);
    const std::vector<Head<T, TK>> heads = chain_heads<T, TK>(lay, p, a, bt, v, mask, y);
    finish<T, TK>(io, p, heads);
    io.outputs[0] = std::move(y);
  }

  NodeDef node_;
  int64_t form_;
  bool causal_;
  int64_t q_heads_, kv_heads_;
  bool scale_attr_;
  float scale_;
  bool trans_b_;
  int64_t mask_kind_;
  float fill_;
  bool safe_;
  int64_t axis_;
  std::vector<int64_t> scores_shape_, probs_shape_, b_shape_, kv_expand_;
  bool kv_flat_;
};

}  // namespace

PARITY_FUSED_KERNEL("FusedAttention", FusedAttentionKernel, kFloatTypes16);

}  // namespace parity::refrt
