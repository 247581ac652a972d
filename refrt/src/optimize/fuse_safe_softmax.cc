#include "passes.h"

#include <cmath>
#include <limits>

#include "pass_util.h"

namespace parity::refrt {

// Where(Not(Cast(ReduceMax(Cast(Not(Equal(x, -inf))), axis))), zeros, Softmax(x, axis)): softmax whose
// fully masked rows are 0 (torch's _safe_softmax, decomposed) -> FusedSafeSoftmax(x, zeros).
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
    const NodeDef* not2 = producer(where.inputs[0], "Not");
    const NodeDef* cast2 = not2 ? producer(not2->inputs[0], "Cast") : nullptr;
    const NodeDef* rmax = cast2 && cast2->attr_int("to", 0) == 9 ? producer(cast2->inputs[0], "ReduceMax") : nullptr;
    const NodeDef* cast1 = rmax && rmax->attr_int("keepdims", 1) == 1 ? producer(rmax->inputs[0], "Cast") : nullptr;
    const NodeDef* not1 = cast1 ? producer(cast1->inputs[0], "Not") : nullptr;
    const NodeDef* eq = not1 ? producer(not1->inputs[0], "Equal") : nullptr;
    if (!all_zero || !eq || eq->inputs.size() != 2) continue;
    const std::string x = sm->inputs[0];
    const std::string& other = eq->inputs[0] == x ? eq->inputs[1] : eq->inputs[0];
    auto inf = ix.scalar(other);
    if ((eq->inputs[0] != x && eq->inputs[1] != x) || !inf || !(*inf < 0 && std::isinf(*inf))) continue;
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
    for (const NodeDef* part : {sm, eq, not1, cast1, rmax, cast2, not2, &where}) {
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
