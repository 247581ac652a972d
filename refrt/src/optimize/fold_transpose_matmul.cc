#include "passes.h"

#include "pass_util.h"

namespace parity::refrt {
namespace {

// Which operand of a Mul (either) or Div (the divisor) is a constant float scalar while the other is
// not; -1 when the node is not such a scaling.
int scalar_operand(const GraphIndex& ix, const NodeDef& n) {
  if (n.inputs.size() != 2 || n.inputs[0] == n.inputs[1]) return -1;
  const bool s0 = ix.scalar(n.inputs[0]).has_value(), s1 = ix.scalar(n.inputs[1]).has_value();
  if (n.op_type == "Mul" && s0 != s1) return s0 ? 0 : 1;
  if (n.op_type == "Div" && s1 && !s0) return 1;
  return -1;
}

}  // namespace

// MatMul(A, Transpose(X) [-> Mul/Div by a constant scalar, Identity, one Reshape]) with the Transpose
// swapping the last two axes (the key of an attention, K^T): the scalar ops move before the
// Transpose, which disappears into a FusedMatMul with transB = 1 reading X as it is; the Reshape's
// shape goes along as b_shape (the kernel checks at run time that it keeps the last two dims, and
// otherwise materialises the transpose as the graph would).
bool fold_transpose_matmul(GraphDef& g) {
  GraphIndex ix(g);
  std::vector<bool> dead(g.nodes.size(), false);
  bool changed = false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    NodeDef& mm = g.nodes[i];
    const bool fused = mm.domain == kFusedDomain && mm.op_type == "FusedMatMul";
    if ((!is_op(mm, "MatMul") && !fused) || mm.inputs.size() < 2 || mm.attr_int("transB", 0) != 0) continue;
    std::vector<size_t> scalars, absorbed;  // scalar ops nearest the MatMul first; Identity/Reshape/Transpose
    const NodeDef* reshape = nullptr;
    const NodeDef* transpose = nullptr;
    std::string v = mm.inputs[1];
    for (;;) {
      auto it = ix.producer.find(v);
      if (it == ix.producer.end() || dead[it->second] || !ix.internal(v, 1)) break;
      const NodeDef& p = g.nodes[it->second];
      if (!p.domain.empty() || p.outputs.size() != 1) break;
      if (p.op_type == "Transpose") {
        const auto perm = p.attr_ints("perm");
        bool swap_last = perm.size() >= 2;
        for (size_t d = 0; d + 2 < perm.size() && swap_last; ++d) swap_last = perm[d] == static_cast<int64_t>(d);
        const int64_t r = static_cast<int64_t>(perm.size());
        if (swap_last && perm[perm.size() - 2] == r - 1 && perm.back() == r - 2) {
          transpose = &p;
          absorbed.push_back(it->second);
        }
        break;
      }
      if (p.op_type == "Identity") {
        absorbed.push_back(it->second);
      } else if (p.op_type == "Reshape" && !reshape && p.inputs.size() == 2 && p.attr_int("allowzero", 0) == 0) {
        const Tensor* shape = ix.constant(p.inputs[1]);
        if (!shape || shape->dtype() != DType::kInt64 || shape->numel() < 2) break;
        reshape = &p;
        absorbed.push_back(it->second);
      } else if (scalar_operand(ix, p) >= 0) {
        scalars.push_back(it->second);
      } else {
        break;
      }
      // The chain goes on through the operand that is not the scalar (input 0 of the others).
      v = p.inputs[scalar_operand(ix, p) == 0 ? 1 : 0];
    }
    if (!transpose) continue;
    // Rewire: X -> scalar ops (in graph order) -> MatMul.
    std::string prev = transpose->inputs[0];
    for (auto k = scalars.rbegin(); k != scalars.rend(); ++k) {
      NodeDef& op = g.nodes[*k];
      op.inputs[scalar_operand(ix, op) == 0 ? 1 : 0] = prev;
      prev = op.outputs[0];
    }
    std::vector<int64_t> b_shape;
    if (reshape) {
      const Tensor* shape = ix.constant(reshape->inputs[1]);
      b_shape.assign(shape->data<int64_t>(), shape->data<int64_t>() + shape->numel());
    }
    make_fused(mm, "FusedMatMul");
    mm.inputs[1] = prev;
    mm.attributes["transB"].type = Attribute::Type::kInt;
    mm.attributes["transB"].i = 1;
    if (reshape) {
      mm.attributes["b_shape"].type = Attribute::Type::kInts;
      mm.attributes["b_shape"].ints = b_shape;
    }
    for (size_t k : absorbed) {
      absorb(mm, g.nodes[k]);
      dead[k] = true;
    }
    changed = true;
  }
  if (changed) compact(g, dead);
  return changed;
}

}  // namespace parity::refrt
