#include <cmath>
#include <limits>

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

}  // namespace

// softmax(Q K^T * scale [+ mask | Where mask]) V written with MatMuls -> one FusedAttention (form 0), and
// Attention (23) -> FusedAttention (form 1) where the fused kernel covers its features. The chain, from
// the first MatMul: [Reshape] [Mul/Div by constant scalars] [Add(mask) | Where(cond, s, c) | Where(cond,
// c, s)] Softmax (last axis) [Where(IsNaN(p), 0, p)] | FusedSafeSoftmax [Reshape] MatMul(., V). Constant
// scalar Mul/Div on either MatMul operand, through Reshapes and Transposes (torch's decomposition scales
// Q and K^T by sqrt(scale) each), become part of the scale; a Transpose of the last two axes before the
// key operand (through scalars and at most one Reshape, kept as b_shape) is read as K, not copied. Every
// intermediate value must have no other reader and be no graph output, else the chain stays as it is.
// The Reshapes on the operands (head splitting) stay nodes.
bool fuse_attention(GraphDef& g) {
  GraphIndex ix(g);
  bool changed = false;
  for (auto& n : g.nodes) changed = fuse_attention_op(ix, n) || changed;
  if (changed) ix = GraphIndex(g);
  std::vector<bool> dead(g.nodes.size(), false);
  std::vector<NodeDef> made;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const NodeDef& mm1 = g.nodes[i];
    if (dead[i] || !is_op(mm1, "MatMul") || mm1.inputs.size() != 2 || mm1.outputs.size() != 1) continue;
    std::vector<size_t> parts{i};
    double scale = 1;
    std::vector<int64_t> scores_shape, probs_shape;
    std::string mask;
    int64_t mask_kind = 0, axis = -1;
    double fill = 0;
    bool safe = false, ok = false;
    std::string v = mm1.outputs[0];
    // Forward: the scores' Reshape and scalings, the mask, the softmax.
    for (;;) {
      if (!ix.internal(v, 1)) break;
      const size_t ri = ix.readers(v)[0];
      const NodeDef& r = g.nodes[ri];
      if (dead[ri] || r.outputs.empty() || !r.implicit_inputs.empty()) break;
      if (r.domain == kFusedDomain && r.op_type == "FusedSafeSoftmax" && r.inputs[0] == v) {
        axis = r.attr_int("axis", -1);
        safe = ok = true;
      } else if (!r.domain.empty()) {
        break;
      } else if (r.op_type == "Softmax" && r.inputs[0] == v) {
        axis = r.attr_int("axis", r.opset >= 13 ? -1 : 1);
        ok = r.opset >= 13 || axis == -1;  // before 13 Softmax flattens from axis: the same only for the last
      } else if (reshape_target(ix, r) && r.inputs[0] == v && scores_shape.empty() && mask.empty()) {
        scores_shape = ints_of(*reshape_target(ix, r));
      } else if (scalar_operand(ix, r) >= 0 && mask.empty() && r.inputs[scalar_operand(ix, r)] != v) {
        const float c = *ix.scalar(r.inputs[scalar_operand(ix, r)]);
        scale = r.op_type == "Mul" ? scale * c : scale / c;
      } else if (is_op(r, "Add") && mask.empty() && r.inputs.size() == 2 && r.inputs[0] != r.inputs[1]) {
        mask = r.inputs[0] == v ? r.inputs[1] : r.inputs[0];
        mask_kind = 1;
      } else if (is_op(r, "Where") && mask.empty() && r.inputs.size() == 3 && r.inputs[0] != v &&
                 (r.inputs[1] == v) != (r.inputs[2] == v)) {
        auto c = ix.scalar(r.inputs[1] == v ? r.inputs[2] : r.inputs[1]);
        if (!c) break;
        mask = r.inputs[0];
        mask_kind = r.inputs[1] == v ? 2 : 3;
        fill = *c;
      } else {
        break;
      }
      parts.push_back(ri);
      v = r.outputs[0];
      if (ok) break;
    }
    if (!ok) continue;
    // torch.onnx.export(dynamo=True)'s safe softmax: Where(IsNaN(p), 0, p) (a row of -inf gives NaN, then 0).
    if (!safe && !ix.outputs.count(v) && ix.readers(v).size() == 2) {
      const auto& rs = ix.readers(v);
      for (int first = 0; first < 2 && !safe; ++first) {
        const size_t ni = rs[static_cast<size_t>(first)], wi = rs[static_cast<size_t>(1 - first)];
        const NodeDef& isnan = g.nodes[ni];
        const NodeDef& where = g.nodes[wi];
        if (dead[ni] || dead[wi] || !is_op(isnan, "IsNaN") || !is_op(where, "Where") || where.inputs.size() != 3 ||
            !ix.internal(isnan.outputs[0], 1) || where.inputs[0] != isnan.outputs[0] || where.inputs[2] != v)
          continue;
        auto zero = ix.scalar(where.inputs[1]);
        if (!zero || *zero != 0.0f) continue;
        parts.push_back(ni);
        parts.push_back(wi);
        v = where.outputs[0];
        safe = true;
      }
    }
    // Past the softmax: an optional Reshape, then the MatMul with V.
    const NodeDef* mm2 = nullptr;
    for (int step = 0; step < 2 && !mm2; ++step) {
      size_t ri = 0;
      const NodeDef* r = sole_reader(g, ix, v, &ri);
      if (!r || dead[ri]) break;
      if (step == 0 && reshape_target(ix, *r) && r->inputs[0] == v) {
        probs_shape = ints_of(*reshape_target(ix, *r));
        parts.push_back(ri);
        v = r->outputs[0];
      } else if (is_op(*r, "MatMul") && r->inputs.size() == 2 && r->inputs[0] == v && r->inputs[1] != v) {
        mm2 = r;
        parts.push_back(ri);
      } else {
        break;
      }
    }
    if (!mm2) continue;
    // Backward from the operands: constant scalings (absorbed) through Reshapes (kept), and on the key a
    // Transpose of the last two axes reached through scalings only.
    std::vector<size_t> scalings;
    size_t transpose = SIZE_MAX, b_reshape = SIZE_MAX;
    for (int side = 0; side < 2; ++side) {
      std::string u = mm1.inputs[side];
      int reshapes = 0;
      bool other_transpose = false;
      for (;;) {
        auto it = ix.producer.find(u);
        if (it == ix.producer.end() || dead[it->second] || !ix.internal(u, 1)) break;
        const NodeDef& p = g.nodes[it->second];
        if (!p.domain.empty() || p.outputs.size() != 1 || p.inputs.empty()) break;
        if (reshape_target(ix, p)) {
          if (side == 1 && ++reshapes == 1) b_reshape = it->second;
        } else if (scalar_operand(ix, p) >= 0) {
          scalings.push_back(it->second);
          u = p.inputs[scalar_operand(ix, p) == 0 ? 1 : 0];
          continue;
        } else if (p.op_type == "Transpose") {
          const auto perm = p.attr_ints("perm");
          const int64_t r = static_cast<int64_t>(perm.size());
          bool swap_last = r >= 2 && perm[perm.size() - 2] == r - 1 && perm.back() == r - 2;
          for (int64_t d = 0; d + 2 < r && swap_last; ++d) swap_last = perm[static_cast<size_t>(d)] == d;
          // The key's Transpose of the last two axes, behind at most one Reshape (the kernel reads K
          // through the Reshape's shape, as fold_transpose_matmul's b_shape): not copied.
          if (side == 1 && swap_last && reshapes <= 1 && !other_transpose) {
            transpose = it->second;
            break;
          }
          other_transpose = true;  // stays a node; a scaling before it still commutes with it
        } else {
          break;
        }
        u = p.inputs[0];
      }
      if (side == 1 && (transpose == SIZE_MAX || reshapes == 0)) b_reshape = SIZE_MAX;
    }
    bool clash = false;
    for (size_t k : parts) clash = clash || dead[k];
    for (size_t k : scalings) clash = clash || dead[k];
    if (clash || (transpose != SIZE_MAX && dead[transpose])) continue;
    // Rewire each absorbed scaling's reader to the scaling's input (its one reader: checked above).
    for (auto it = scalings.rbegin(); it != scalings.rend(); ++it) {  // farthest first: a chain of them rewires
      const size_t k = *it;
      const NodeDef& s = g.nodes[k];
      const int so = scalar_operand(ix, s);
      const float c = *ix.scalar(s.inputs[static_cast<size_t>(so)]);
      scale = s.op_type == "Mul" ? scale * c : scale / c;
      for (auto& in : g.nodes[ix.readers(s.outputs[0])[0]].inputs)
        if (in == s.outputs[0]) in = s.inputs[so == 0 ? 1 : 0];
    }
    const NodeDef& first = g.nodes[i];  // rewired
    NodeDef n;
    n.name = first.name;
    n.op_type = "FusedAttention";
    n.domain = kFusedDomain;
    n.opset = 1;
    n.origin = first.origin;
    const std::string& t_out = transpose != SIZE_MAX ? g.nodes[transpose].outputs[0] : std::string();
    const bool trans_b =
        transpose != SIZE_MAX && (b_reshape == SIZE_MAX ? first.inputs[1] == t_out
                                                        : first.inputs[1] == g.nodes[b_reshape].outputs[0] &&
                                                              g.nodes[b_reshape].inputs[0] == t_out);
    n.inputs = {first.inputs[0], trans_b ? g.nodes[transpose].inputs[0] : first.inputs[1], mm2->inputs[1]};
    if (!mask.empty()) n.inputs.push_back(mask);
    n.outputs = {mm2->outputs[0]};
    n.attributes["form"] = int_attribute(0);
    n.attributes["scale"] = float_attribute(static_cast<float>(scale));
    n.attributes["trans_b"] = int_attribute(trans_b ? 1 : 0);
    n.attributes["mask_kind"] = int_attribute(mask_kind);
    n.attributes["fill"] = float_attribute(static_cast<float>(fill));
    n.attributes["safe"] = int_attribute(safe ? 1 : 0);
    n.attributes["axis"] = int_attribute(axis);
    if (!scores_shape.empty()) n.attributes["scores_shape"] = ints_attribute(scores_shape);
    if (!probs_shape.empty()) n.attributes["probs_shape"] = ints_attribute(probs_shape);
    if (trans_b) parts.push_back(transpose);
    if (trans_b && b_reshape != SIZE_MAX) {
      n.attributes["b_shape"] = ints_attribute(ints_of(*reshape_target(ix, g.nodes[b_reshape])));
      parts.push_back(b_reshape);
    }
    parts.insert(parts.end(), scalings.begin(), scalings.end());
    for (size_t k : parts) {
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
