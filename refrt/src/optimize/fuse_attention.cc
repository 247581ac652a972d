#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

#include "pass_util.h"
#include "passes.h"

namespace parity::refrt {
namespace {

// The operand of a Mul (either) or Div (the divisor) that is a constant float scalar while the other is
// not; -1 when the node is no such scaling.
int scalar_operand(const GraphIndex& ix, const NodeDef& n) {
  if (n.inputs.size() != 2 || n.inputs[0] == n.inputs[1] || n.outputs.size() != 1) return -1;
  const bool s0 = ix.scalar(n.inputs[0]).has_value(), s1 = ix.scalar(n.inputs[1]).has_value();
  if (n.op_type == "Mul" && s0 != s1) return s0 ? 0 : 1;
  if (n.op_type == "Div" && s1 && !s0) return 1;
  return -1;
}

// A constant int64 Reshape target (allowzero 0).
const Tensor* reshape_target(const GraphIndex& ix, const NodeDef& n) {
  if (!is_op(n, "Reshape") || n.inputs.size() != 2 || n.attr_int("allowzero", 0) != 0) return nullptr;
  const Tensor* t = ix.constant(n.inputs[1]);
  return t && t->dtype() == DType::kInt64 && t->rank() == 1 && t->numel() >= 2 ? t : nullptr;
}

std::vector<int64_t> ints_of(const Tensor& t) { return {t.data<int64_t>(), t.data<int64_t>() + t.numel()}; }

Attribute ints_attribute(std::vector<int64_t> v) {
  Attribute a;
  a.type = Attribute::Type::kInts;
  a.ints = std::move(v);
  return a;
}

// An Attention (23) node the fused kernel implements: no past key / value, no present or qk outputs that
// anything reads, no softcap. It becomes FusedAttention form 1 with the same inputs and attributes.
bool fuse_attention_op(const GraphIndex& ix, NodeDef& n) {
  if (!is_op(n, "Attention") || n.opset < 23 || n.inputs.size() < 3) return false;
  for (size_t k = 4; k < n.inputs.size(); ++k)
    if (!n.inputs[k].empty()) return false;
  for (size_t k = 1; k < n.outputs.size(); ++k)
    if (!n.outputs[k].empty() && (!ix.readers(n.outputs[k]).empty() || ix.outputs.count(n.outputs[k]))) return false;
  if (n.attr_float("softcap", 0.0f) != 0.0f) return false;
  make_fused(n, "FusedAttention");
  n.inputs.resize(std::min<size_t>(n.inputs.size(), 4));
  while (n.inputs.back().empty()) n.inputs.pop_back();
  n.outputs.resize(1);
  n.attributes["form"] = int_attribute(1);
  return true;
}

// What a chain match found. parts: the nodes the fused node replaces (scalings separately: their readers
// are rewired first).
struct Chain {
  std::vector<size_t> parts, scalings;
  double scale = 1;
  std::vector<int64_t> scores_shape, probs_shape;
  std::string mask, v;  // v: the value the walk has reached
  int64_t mask_kind = 0, axis = -1;
  double fill = 0;
  bool safe = false;
  const NodeDef* mm2 = nullptr;
  size_t transpose = SIZE_MAX, b_reshape = SIZE_MAX;
};

struct Walk {
  const GraphDef& g;
  const GraphIndex& ix;
  const std::vector<bool>& dead;
};

// From the first MatMul's output: the scores' Reshape and scalings, the mask, the softmax.
bool match_to_softmax(const Walk& w, Chain& c) {
  for (;;) {
    if (!w.ix.internal(c.v, 1)) return false;
    const size_t ri = w.ix.readers(c.v)[0];
    const NodeDef& r = w.g.nodes[ri];
    if (w.dead[ri] || r.outputs.empty() || !r.implicit_inputs.empty()) return false;
    bool done = false;
    if (r.domain == kFusedDomain && r.op_type == "FusedSafeSoftmax" && r.inputs[0] == c.v) {
      c.axis = r.attr_int("axis", -1);
      c.safe = done = true;
    } else if (!r.domain.empty()) {
      return false;
    } else if (r.op_type == "Softmax" && r.inputs[0] == c.v) {
      c.axis = r.attr_int("axis", r.opset >= 13 ? -1 : 1);
      if (r.opset < 13 && c.axis != -1) return false;  // before 13 Softmax flattens from axis: the last only
      done = true;
    } else if (reshape_target(w.ix, r) && r.inputs[0] == c.v && c.scores_shape.empty() && c.mask.empty()) {
      c.scores_shape = ints_of(*reshape_target(w.ix, r));
    } else if (scalar_operand(w.ix, r) >= 0 && c.mask.empty()) {
      const float k = *w.ix.scalar(r.inputs[static_cast<size_t>(scalar_operand(w.ix, r))]);
      c.scale = r.op_type == "Mul" ? c.scale * k : c.scale / k;
    } else if (is_op(r, "Add") && c.mask.empty() && r.inputs.size() == 2 && r.inputs[0] != r.inputs[1]) {
      c.mask = r.inputs[0] == c.v ? r.inputs[1] : r.inputs[0];
      c.mask_kind = 1;
    } else if (is_op(r, "Where") && c.mask.empty() && r.inputs.size() == 3 && r.inputs[0] != c.v &&
               (r.inputs[1] == c.v) != (r.inputs[2] == c.v)) {
      auto k = w.ix.scalar(r.inputs[1] == c.v ? r.inputs[2] : r.inputs[1]);
      if (!k) return false;
      c.mask = r.inputs[0];
      c.mask_kind = r.inputs[1] == c.v ? 2 : 3;
      c.fill = *k;
    } else {
      return false;
    }
    c.parts.push_back(ri);
    c.v = r.outputs[0];
    if (done) return true;
  }
}

// torch.onnx.export(dynamo=True)'s safe softmax after the Softmax: Where(IsNaN(p), 0, p) (a row of -inf gives
// NaN, then 0).
void match_nan_guard(const Walk& w, Chain& c) {
  if (c.safe || w.ix.outputs.count(c.v) || w.ix.readers(c.v).size() != 2) return;
  const auto& rs = w.ix.readers(c.v);
  for (size_t first = 0; first < 2; ++first) {
    const size_t ni = rs[first], wi = rs[1 - first];
    const NodeDef& isnan = w.g.nodes[ni];
    const NodeDef& where = w.g.nodes[wi];
    if (w.dead[ni] || w.dead[wi] || !is_op(isnan, "IsNaN") || !is_op(where, "Where") || where.inputs.size() != 3 ||
        !w.ix.internal(isnan.outputs[0], 1) || where.inputs[0] != isnan.outputs[0] || where.inputs[2] != c.v)
      continue;
    auto zero = w.ix.scalar(where.inputs[1]);
    if (!zero || *zero != 0.0f) continue;
    c.parts.push_back(ni);
    c.parts.push_back(wi);
    c.v = where.outputs[0];
    c.safe = true;
    return;
  }
}

// Past the softmax: an optional Reshape, then the MatMul with V.
bool match_value_product(const Walk& w, Chain& c) {
  for (int step = 0; step < 2; ++step) {
    size_t ri = 0;
    const NodeDef* r = sole_reader(w.g, w.ix, c.v, &ri);
    if (!r || w.dead[ri]) return false;
    c.parts.push_back(ri);
    if (step == 0 && reshape_target(w.ix, *r) && r->inputs[0] == c.v) {
      c.probs_shape = ints_of(*reshape_target(w.ix, *r));
      c.v = r->outputs[0];
    } else if (is_op(*r, "MatMul") && r->inputs.size() == 2 && r->inputs[0] == c.v && r->inputs[1] != c.v) {
      c.mm2 = r;
      return true;
    } else {
      return false;
    }
  }
  return false;
}

// Whether a Transpose swaps the last two axes only.
bool swaps_last_two(const NodeDef& t) {
  const auto perm = t.attr_ints("perm");
  const int64_t r = static_cast<int64_t>(perm.size());
  bool swap = r >= 2 && perm[perm.size() - 2] == r - 1 && perm.back() == r - 2;
  for (int64_t d = 0; d + 2 < r && swap; ++d) swap = perm[static_cast<size_t>(d)] == d;
  return swap;
}

// Backward from the first MatMul's operands: constant scalings (absorbed) through Reshapes and Transposes
// (kept), and on the key a Transpose of the last two axes behind at most one Reshape (the kernel reads K
// through the Reshape's shape, as fold_transpose_matmul's b_shape): not copied.
void match_operands(const Walk& w, const NodeDef& mm1, Chain& c) {
  for (size_t side = 0; side < 2; ++side) {
    std::string u = mm1.inputs[side];
    int reshapes = 0;
    bool other_transpose = false;
    for (;;) {
      auto it = w.ix.producer.find(u);
      if (it == w.ix.producer.end() || w.dead[it->second] || !w.ix.internal(u, 1)) break;
      const NodeDef& p = w.g.nodes[it->second];
      if (!p.domain.empty() || p.outputs.size() != 1 || p.inputs.empty()) break;
      if (reshape_target(w.ix, p)) {
        if (side == 1 && ++reshapes == 1) c.b_reshape = it->second;
      } else if (scalar_operand(w.ix, p) >= 0) {
        c.scalings.push_back(it->second);
        u = p.inputs[scalar_operand(w.ix, p) == 0 ? 1 : 0];
        continue;
      } else if (p.op_type == "Transpose") {
        if (side == 1 && swaps_last_two(p) && reshapes <= 1 && !other_transpose) {
          c.transpose = it->second;
          break;
        }
        other_transpose = true;  // stays a node; a scaling before it still commutes with it
      } else {
        break;
      }
      u = p.inputs[0];
    }
    if (side == 1 && (c.transpose == SIZE_MAX || reshapes == 0)) c.b_reshape = SIZE_MAX;
  }
}

// Rewires each absorbed scaling's reader to the scaling's input (its one reader: checked by the match),
// farthest first so that a run of them rewires, and folds it into the scale.
void rewire_scalings(GraphDef& g, const GraphIndex& ix, Chain& c) {
  for (auto it = c.scalings.rbegin(); it != c.scalings.rend(); ++it) {
    const NodeDef& s = g.nodes[*it];
    const int so = scalar_operand(ix, s);
    const float k = *ix.scalar(s.inputs[static_cast<size_t>(so)]);
    c.scale = s.op_type == "Mul" ? c.scale * k : c.scale / k;
    for (auto& in : g.nodes[ix.readers(s.outputs[0])[0]].inputs)
      if (in == s.outputs[0]) in = s.inputs[so == 0 ? 1 : 0];
  }
}

// The FusedAttention node of a matched (and rewired) chain anchored at node i; c.parts gains the key's
// Transpose / Reshape when they are read through.
NodeDef chain_node(const GraphDef& g, const GraphIndex& ix, size_t i, Chain& c) {
  const NodeDef& first = g.nodes[i];
  NodeDef n;
  n.name = first.name;
  n.op_type = "FusedAttention";
  n.domain = kFusedDomain;
  n.opset = 1;
  n.origin = first.origin;
  const std::string t_out = c.transpose != SIZE_MAX ? g.nodes[c.transpose].outputs[0] : std::string();
  const bool trans_b =
      c.transpose != SIZE_MAX && (c.b_reshape == SIZE_MAX ? first.inputs[1] == t_out
                                                          : first.inputs[1] == g.nodes[c.b_reshape].outputs[0] &&
                                                                g.nodes[c.b_reshape].inputs[0] == t_out);
  n.inputs = {first.inputs[0], trans_b ? g.nodes[c.transpose].inputs[0] : first.inputs[1], c.mm2->inputs[1]};
  if (!c.mask.empty()) n.inputs.push_back(c.mask);
  n.outputs = {c.mm2->outputs[0]};
  n.attributes["form"] = int_attribute(0);
  n.attributes["scale"] = float_attribute(static_cast<float>(c.scale));
  n.attributes["trans_b"] = int_attribute(trans_b ? 1 : 0);
  n.attributes["mask_kind"] = int_attribute(c.mask_kind);
  n.attributes["fill"] = float_attribute(static_cast<float>(c.fill));
  n.attributes["safe"] = int_attribute(c.safe ? 1 : 0);
  n.attributes["axis"] = int_attribute(c.axis);
  if (!c.scores_shape.empty()) n.attributes["scores_shape"] = ints_attribute(c.scores_shape);
  if (!c.probs_shape.empty()) n.attributes["probs_shape"] = ints_attribute(c.probs_shape);
  if (trans_b) c.parts.push_back(c.transpose);
  if (trans_b && c.b_reshape != SIZE_MAX) {
    n.attributes["b_shape"] = ints_attribute(ints_of(*reshape_target(ix, g.nodes[c.b_reshape])));
    c.parts.push_back(c.b_reshape);
  }
  return n;
}

// A grouped-query expansion of a KV tensor as torch exports repeat_interleave(kv, g, dim=1) (and SDPA's
// enable_gqa): Reshape(Expand(Unsqueeze(kv, axes [2]), [B, kvH, g, T, c]), [B, kvH * g, T, c]), constant shapes,
// each value read once. Returns kv, the Expand's shape and the three nodes (Reshape, Expand, Unsqueeze).
struct KvExpand {
  std::string source;
  std::vector<int64_t> shape;
  std::vector<size_t> nodes;
};

std::optional<KvExpand> match_kv_expand(const Walk& w, const std::string& v) {
  auto made_by = [&](const std::string& x, const char* op) -> std::optional<size_t> {
    auto it = w.ix.producer.find(x);
    if (it == w.ix.producer.end() || w.dead[it->second] || !w.ix.internal(x, 1)) return std::nullopt;
    const NodeDef& p = w.g.nodes[it->second];
    if (!is_op(p, op) || p.outputs.size() != 1 || p.inputs.empty()) return std::nullopt;
    return it->second;
  };
  const auto r = made_by(v, "Reshape");
  const Tensor* target = r ? reshape_target(w.ix, w.g.nodes[*r]) : nullptr;
  const auto e = target ? made_by(w.g.nodes[*r].inputs[0], "Expand") : std::nullopt;
  const Tensor* shape = e && w.g.nodes[*e].inputs.size() == 2 ? w.ix.constant(w.g.nodes[*e].inputs[1]) : nullptr;
  const auto u = shape ? made_by(w.g.nodes[*e].inputs[0], "Unsqueeze") : std::nullopt;
  if (!u || shape->dtype() != DType::kInt64 || shape->rank() != 1 || shape->numel() != 5) return std::nullopt;
  const NodeDef& un = w.g.nodes[*u];
  std::vector<int64_t> axes = un.attr_ints("axes");  // an input from opset 13
  if (un.inputs.size() == 2) {
    const Tensor* t = w.ix.constant(un.inputs[1]);
    if (!t || t->dtype() != DType::kInt64) return std::nullopt;
    axes = ints_of(*t);
  }
  const std::vector<int64_t> s = ints_of(*shape);
  if (axes.size() != 1 || (axes[0] != 2 && axes[0] != -3) || s[2] < 2) return std::nullopt;
  for (int64_t x : s)
    if (x <= 0) return std::nullopt;
  if (ints_of(*target) != std::vector<int64_t>{s[0], s[1] * s[2], s[3], s[4]}) return std::nullopt;
  return KvExpand{un.inputs[0], s, {*r, *e, *u}};
}

// A Reshape of `v` (one reader, constant target) that merges leading dims: the node and its input.
std::optional<std::pair<size_t, std::string>> leading_merge(const Walk& w, const std::string& v) {
  auto it = w.ix.producer.find(v);
  if (it == w.ix.producer.end() || w.dead[it->second] || !w.ix.internal(v, 1)) return std::nullopt;
  const NodeDef& r = w.g.nodes[it->second];
  if (!reshape_target(w.ix, r) || r.outputs.size() != 1) return std::nullopt;
  return std::make_pair(it->second, r.inputs[0]);
}

// Whether `target` is [B * kvH * g, rows, cols] for the expansion `s` [B, kvH, g, T, c] (-1 for the first dim
// allowed): the expanded heads' leading dims merged into one.
bool merges_heads(const std::vector<int64_t>& target, const std::vector<int64_t>& s, int64_t rows, int64_t cols) {
  return target.size() == 3 && (target[0] == s[0] * s[1] * s[2] || target[0] == -1) && target[1] == rows &&
         target[2] == cols;
}

// K (read transposed) and V both expanded by the same grouping: the fused node reads the kv tensors themselves
// (attribute kv_expand [B, kvH, g, T, d, dv]) and the expansions become part of it. Two forms: the 4-D products
// (no Reshapes of the scores or probabilities: the grouped heads are the scores' last leading dim), and torch's
// bmm decomposition of attention, where K^T and V are reshaped to [B * kvH * g, ., .] (b_shape, a Reshape of V)
// and the scores' and probabilities' Reshapes move between that and [B, H]: kv_flat 1, K and V read with their
// leading dims merged ([B * kvH, T, c]); query head h of the merged index still reads kv head h / g, since each
// batch's heads are g-groups in order.
void fold_kv_expand(const Walk& w, Chain& c, NodeDef& n) {
  if (n.attr_int("trans_b", 0) != 1) return;
  const bool flat = n.attributes.count("b_shape") > 0;
  if (!flat && (!c.scores_shape.empty() || !c.probs_shape.empty())) return;
  std::string v_in = n.inputs[2];
  const auto v_merge = flat ? leading_merge(w, v_in) : std::nullopt;
  if (flat && !v_merge) return;
  if (v_merge) v_in = v_merge->second;
  const auto k = match_kv_expand(w, n.inputs[1]), v = match_kv_expand(w, v_in);
  if (!k || !v || !std::equal(k->shape.begin(), k->shape.begin() + 4, v->shape.begin())) return;
  if (flat) {
    const NodeDef& vr = w.g.nodes[v_merge->first];
    if (!merges_heads(n.attr_ints("b_shape"), k->shape, k->shape[4], k->shape[3]) ||
        !merges_heads(ints_of(*reshape_target(w.ix, vr)), v->shape, v->shape[3], v->shape[4]))
      return;
    n.attributes.erase("b_shape");
    n.attributes["kv_flat"] = int_attribute(1);
    c.parts.push_back(v_merge->first);
  }
  n.inputs[1] = k->source;
  n.inputs[2] = v->source;
  n.attributes["kv_expand"] =
      ints_attribute({k->shape[0], k->shape[1], k->shape[2], k->shape[3], k->shape[4], v->shape[4]});
  c.parts.insert(c.parts.end(), k->nodes.begin(), k->nodes.end());
  c.parts.insert(c.parts.end(), v->nodes.begin(), v->nodes.end());
}

}  // namespace

// softmax(Q K^T * scale [+ mask | Where mask]) V written with MatMuls -> one FusedAttention (form 0), and
// Attention (23) -> FusedAttention (form 1) where the fused kernel covers its features. The chain, from
// the first MatMul: [Reshape] [Mul/Div by constant scalars] [Add(mask) | Where(cond, s, c) | Where(cond,
// c, s)] Softmax (last axis) [Where(IsNaN(p), 0, p)] | FusedSafeSoftmax [Reshape] MatMul(., V). Constant
// scalar Mul/Div on either MatMul operand, through Reshapes and Transposes (torch's decomposition scales
// Q and K^T by sqrt(scale) each), become part of the scale; a Transpose of the last two axes before the
// key operand (through scalars and at most one Reshape, kept as b_shape) is read as K, not copied. Every
// intermediate value must have no other reader and be no graph output, else the chain stays as it is.
// The Reshapes on the operands (head splitting) stay nodes, but a grouped-query expansion of K and V
// (fold_kv_expand) is read through.
bool fuse_attention(GraphDef& g) {
  GraphIndex ix(g);
  bool changed = false;
  for (auto& n : g.nodes) changed = fuse_attention_op(ix, n) || changed;
  if (changed) ix = GraphIndex(g);
  std::vector<bool> dead(g.nodes.size(), false);
  std::vector<NodeDef> made;
  const Walk w{g, ix, dead};
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const NodeDef& mm1 = g.nodes[i];
    if (dead[i] || !is_op(mm1, "MatMul") || mm1.inputs.size() != 2 || mm1.outputs.size() != 1) continue;
    Chain c;
    c.parts = {i};
    c.v = mm1.outputs[0];
    if (!match_to_softmax(w, c)) continue;
    match_nan_guard(w, c);
    if (!match_value_product(w, c)) continue;
    match_operands(w, mm1, c);
    bool clash = c.transpose != SIZE_MAX && dead[c.transpose];
    for (size_t k : c.parts) clash = clash || dead[k];
    for (size_t k : c.scalings) clash = clash || dead[k];
    if (clash) continue;
    rewire_scalings(g, ix, c);
    NodeDef n = chain_node(g, ix, i, c);
    fold_kv_expand(w, c, n);
    c.parts.insert(c.parts.end(), c.scalings.begin(), c.scalings.end());
    for (size_t k : c.parts) {
      // A part that is itself fused (FusedSafeSoftmax) hands over the model nodes it replaced.
      if (g.nodes[k].fused_from.empty()) absorb(n, g.nodes[k]);
      for (const auto& from : g.nodes[k].fused_from) n.fused_from.push_back(from);
      dead[k] = true;
    }
    made.push_back(std::move(n));
  }
  if (made.empty()) return changed;
  for (auto& n : made) g.nodes.push_back(std::move(n));  // plan_graph sorts topologically
  dead.resize(g.nodes.size(), false);
  compact(g, dead);
  return true;
}

}  // namespace parity::refrt
