#include "passes.h"

#include <cmath>
#include <limits>

#include "pass_util.h"

namespace parity::refrt {
namespace {

struct Finder {
  const GraphDef& g;
  const GraphIndex& ix;
  const std::vector<bool>& dead;

  // The live `op` node that produces `v`, when `v` has no other reader.
  const NodeDef* producer(const std::string& v, const char* op) const {
    auto it = ix.producer.find(v);
    if (it == ix.producer.end() || dead[it->second] || !is_op(g.nodes[it->second], op) || !ix.internal(v, 1))
      return nullptr;
    return &g.nodes[it->second];
  }

  bool is_neg_inf(const std::string& v) const {
    auto k = ix.scalar(v);
    return k && *k < 0 && std::isinf(*k);
  }
};

// The nodes of the condition `cond` of Where(cond, 0, Softmax(x)), the ReduceMax first, in either spelling; empty
// when it is neither:
// - torch's _safe_softmax decomposed: Not(Cast(ReduceMax(Cast(Not(Equal(x, -inf)))))) (any score not -inf);
// - Parity's exporter (scaled_dot_product_attention with a mask): Equal(ReduceMax(x, keepdims=1), -inf), the
//   row's largest score -inf exactly when every score of the row is.
std::vector<const NodeDef*> condition_parts(const Finder& f, const std::string& cond, const std::string& x) {
  const NodeDef* not2 = f.producer(cond, "Not");
  const NodeDef* cast2 = not2 ? f.producer(not2->inputs[0], "Cast") : nullptr;
  if (cast2 && cast2->attr_int("to", 0) == 9) {
    const NodeDef* rmax = f.producer(cast2->inputs[0], "ReduceMax");
    const NodeDef* cast1 = rmax && rmax->attr_int("keepdims", 1) == 1 ? f.producer(rmax->inputs[0], "Cast") : nullptr;
    const NodeDef* not1 = cast1 ? f.producer(cast1->inputs[0], "Not") : nullptr;
    const NodeDef* eq = not1 ? f.producer(not1->inputs[0], "Equal") : nullptr;
    if (!eq || eq->inputs.size() != 2 || (eq->inputs[0] != x && eq->inputs[1] != x) ||
        !f.is_neg_inf(eq->inputs[0] == x ? eq->inputs[1] : eq->inputs[0]))
      return {};
    return {rmax, eq, not1, cast1, cast2, not2};
  }
  const NodeDef* eq = f.producer(cond, "Equal");
  if (!eq || eq->inputs.size() != 2) return {};
  const bool first = f.ix.producer.count(eq->inputs[0]) && !f.ix.scalar(eq->inputs[0]);
  const NodeDef* rmax = f.producer(eq->inputs[first ? 0 : 1], "ReduceMax");
  if (!rmax || rmax->inputs.empty() || rmax->inputs[0] != x || rmax->attr_int("keepdims", 1) != 1 ||
      !f.is_neg_inf(eq->inputs[first ? 1 : 0]))
    return {};
  return {rmax, eq};
}

// Whether the ReduceMax reduces over `axis` alone, written as the Softmax writes it.
bool reduces_over(const GraphIndex& ix, const NodeDef& rmax, int64_t axis) {
  std::vector<int64_t> axes;
  if (rmax.opset >= 18) {
    const Tensor* t = rmax.inputs.size() > 1 ? ix.constant(rmax.inputs[1]) : nullptr;
    if (!t || t->dtype() != DType::kInt64) return false;
    axes.assign(t->data<int64_t>(), t->data<int64_t>() + t->numel());
  } else {
    axes = rmax.attr_ints("axes");
  }
  return axes.size() == 1 && axes[0] == axis;
}

// The Where's second input: a float constant of zeros only.
bool all_zeros(const Tensor* zeros) {
  if (!zeros || !(zeros->dtype() == DType::kFloat32 || is_float16_like(zeros->dtype()))) return false;
  const Tensor zeros32 = widen_to_float32(*zeros);
  for (int64_t k = 0; k < zeros32.numel(); ++k)
    if (zeros32.data<float>()[k] != 0.0f) return false;
  return true;
}

}  // namespace

// Where(cond, zeros, Softmax(x, axis)) whose cond says "every score of the row is -inf" (condition_parts): softmax
// whose fully masked rows are 0 -> FusedSafeSoftmax(x, zeros).
bool fuse_safe_softmax(GraphDef& g) {
  GraphIndex ix(g);
  std::vector<bool> dead(g.nodes.size(), false);
  const Finder f{g, ix, dead};
  std::vector<NodeDef> made;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const NodeDef& where = g.nodes[i];
    if (dead[i] || !is_op(where, "Where") || where.inputs.size() != 3) continue;
    const NodeDef* sm = f.producer(where.inputs[2], "Softmax");
    const Tensor* zeros = ix.constant(where.inputs[1]);
    if (!sm || sm->opset < 13 || !all_zeros(zeros)) continue;
    const std::string x = sm->inputs[0];
    std::vector<const NodeDef*> parts = condition_parts(f, where.inputs[0], x);
    // Parity's spelling selects a scalar zero; one of another shape could make the Where's output larger than X.
    if (parts.size() == 2 && zeros->rank() != 0) continue;
    const int64_t axis = sm->attr_int("axis", -1);
    if (parts.empty() || !reduces_over(ix, *parts[0], axis)) continue;
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
      dead[static_cast<size_t>(part - g.nodes.data())] = true;
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
