#include "passes.h"

#include <cmath>
#include <limits>

#include "pass_util.h"

namespace parity::refrt {

// Where(Not(Cast(ReduceMax(Cast(Not(Equal(x, -inf))), axis))), zeros, Softmax(x, axis)) (torch's _safe_softmax,
// decomposed) or Where(Equal(ReduceMax(x, axis), -inf), zeros, Softmax(x, axis)) (Parity's exporter): softmax
// whose fully masked rows are 0 -> FusedSafeSoftmax(x, zeros).
bool fuse_safe_softmax(GraphDef& g) {
  GraphIndex ix(g);
  std::vector<bool> dead(g.nodes.size(), false);
  std::vector<NodeDef> made;
  auto producer = [&](const std::string& v, const char* op) -> const NodeDef* {
    auto it = ix.producer.find(v);
    if (it == ix.producer.end() || dead[it->second] || !is_op(g.nodes[it->second], op) || !ix.internal(v, 1))
      return nullptr;
    return &g.nodes[it->second];
  };
  auto index_of = [&](const NodeDef* n) { return static_cast<size_t>(n - g.nodes.data()); };
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const NodeDef& where = g.nodes[i];
    if (dead[i] || !is_op(where, "Where") || where.inputs.size() != 3) continue;
    const NodeDef* sm = producer(where.inputs[2], "Softmax");
    const Tensor* zeros = ix.constant(where.inputs[1]);
    if (!sm || sm->opset < 13 || !zeros || !(zeros->dtype() == DType::kFloat32 || is_float16_like(zeros->dtype())))
      continue;
    const Tensor zeros32 = widen_to_float32(*zeros);
    bool all_zero = true;
    for (int64_t k = 0; k < zeros32.numel() && all_zero; ++k) all_zero = zeros32.data<float>()[k] == 0.0f;
    if (!all_zero) continue;
    const std::string x = sm->inputs[0];
    auto is_neg_inf = [&](const std::string& v) {
      auto k = ix.scalar(v);
      return k && *k < 0 && std::isinf(*k);
    };
    // The condition, in one of two spellings; `parts` are the nodes it is made of.
    std::vector<const NodeDef*> parts;
    const NodeDef* rmax = nullptr;
    const NodeDef* not2 = producer(where.inputs[0], "Not");
    const NodeDef* cast2 = not2 ? producer(not2->inputs[0], "Cast") : nullptr;
    if (cast2 && cast2->attr_int("to", 0) == 9) {
      // torch's decomposition: Not(Cast(ReduceMax(Cast(Not(Equal(x, -inf)))))).
      rmax = producer(cast2->inputs[0], "ReduceMax");
      const NodeDef* cast1 = rmax && rmax->attr_int("keepdims", 1) == 1 ? producer(rmax->inputs[0], "Cast") : nullptr;
      const NodeDef* not1 = cast1 ? producer(cast1->inputs[0], "Not") : nullptr;
      const NodeDef* eq = not1 ? producer(not1->inputs[0], "Equal") : nullptr;
      if (!eq || eq->inputs.size() != 2 || (eq->inputs[0] != x && eq->inputs[1] != x) ||
          !is_neg_inf(eq->inputs[0] == x ? eq->inputs[1] : eq->inputs[0]))
        continue;
      parts = {eq, not1, cast1, rmax, cast2, not2};
    } else if (const NodeDef* eq = producer(where.inputs[0], "Equal"); eq && eq->inputs.size() == 2) {
      // Parity's exporter (scaled_dot_product_attention with a mask): Equal(ReduceMax(x, keepdims=1), -inf), the
      // row's largest score -inf exactly when every score of the row is.
      const bool first = ix.producer.count(eq->inputs[0]) && !ix.scalar(eq->inputs[0]);
      rmax = producer(eq->inputs[first ? 0 : 1], "ReduceMax");
      if (!rmax || rmax->inputs.empty() || rmax->inputs[0] != x || rmax->attr_int("keepdims", 1) != 1 ||
          !is_neg_inf(eq->inputs[first ? 1 : 0]))
        continue;
      parts = {rmax, eq};
    } else {
      continue;
    }
    // Both reduce over the one softmax axis, written the same way.
    const int64_t axis = sm->attr_int("axis", -1);
    std::vector<int64_t> axes;
    if (rmax->opset >= 18) {
      const Tensor* t = rmax->inputs.size() > 1 ? ix.constant(rmax->inputs[1]) : nullptr;
      if (!t || t->dtype() != DType::kInt64) continue;
      axes.assign(t->data<int64_t>(), t->data<int64_t>() + t->numel());
    } else {
      axes = rmax->attr_ints("axes");
    }
    if (axes.size() != 1 || axes[0] != axis) continue;
    NodeDef n;
    n.name = sm->name;
    n.op_type = "FusedSafeSoftmax";
    n.domain = kFusedDomain;
    n.opset = 1;
    n.origin = sm->origin;
    n.inputs = {x, where.inputs[1]};
    n.outputs = {where.outputs[0]};
    n.attributes["axis"].type = Attribute::Type::kInt;
    n.attributes["axis"].i = axis;
    parts.push_back(sm);
    parts.push_back(&where);
    for (const NodeDef* part : parts) {
      absorb(n, *part);
      dead[index_of(part)] = true;
    }
    made.push_back(std::move(n));
  }
  if (made.empty()) return false;
  for (auto& n : made) g.nodes.push_back(std::move(n));
  dead.resize(g.nodes.size(), false);
  compact(g, dead);
  return true;
}

}  // namespace parity::refrt
