#include "passes.h"

#include <cmath>
#include <limits>

#include "pass_util.h"

namespace parity::refrt {

// x * Reciprocal(Sqrt(ReduceMean(Pow(x, 2), one axis, keepdims) + eps)) [* w]
bool fuse_rms_norm(GraphDef& g) {
  GraphIndex ix(g);
  std::vector<bool> dead(g.nodes.size(), false);
  std::vector<std::pair<size_t, NodeDef>> made;
  bool changed = false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const NodeDef& pw = g.nodes[i];
    if (dead[i] || !is_op(pw, "Pow") || pw.inputs.size() != 2) continue;
    auto two = ix.scalar(pw.inputs[1]);
    if (!two || *two != 2.0f) continue;
    const std::string x = pw.inputs[0];
    size_t ir = 0, ia = 0, is = 0, ic = 0, im = 0;
    const NodeDef* rm = sole_reader(g, ix, pw.outputs[0], &ir);
    if (!rm || !is_op(*rm, "ReduceMean") || rm->attr_int("keepdims", 1) != 1) continue;
    // Axes: the last one only (input from opset 18, attribute before).
    std::vector<int64_t> axes;
    if (rm->opset >= 18) {
      const Tensor* t = rm->inputs.size() > 1 ? ix.constant(rm->inputs[1]) : nullptr;
      if (!t || t->numel() != 1 || (t->dtype() != DType::kInt64)) continue;
      axes = {*t->data<int64_t>()};
    } else {
      axes = rm->attr_ints("axes");
    }
    if (axes.size() != 1) continue;  // one axis (the kernel checks it against the rank at run time)
    const NodeDef* add = sole_reader(g, ix, rm->outputs[0], &ia);
    auto eps = add && is_op(*add, "Add") ? other_scalar(ix, *add, rm->outputs[0]) : std::nullopt;
    if (!eps) continue;
    const NodeDef* sq = sole_reader(g, ix, add->outputs[0], &is);
    if (!sq || !is_op(*sq, "Sqrt")) continue;
    const NodeDef* rc = sole_reader(g, ix, sq->outputs[0], &ic);
    if (!rc || !is_op(*rc, "Reciprocal")) continue;
    const NodeDef* mul = sole_reader(g, ix, rc->outputs[0], &im);
    if (!mul || !is_op(*mul, "Mul") || mul->inputs.size() != 2) continue;
    if (!((mul->inputs[0] == x && mul->inputs[1] == rc->outputs[0]) ||
          (mul->inputs[1] == x && mul->inputs[0] == rc->outputs[0])))
      continue;
    NodeDef n;
    n.name = pw.name;
    n.op_type = "FusedRMSNorm";
    n.domain = kFusedDomain;
    n.opset = 1;
    n.origin = pw.origin;
    n.inputs = {x};
    n.outputs = {mul->outputs[0]};
    n.attributes["epsilon"].type = Attribute::Type::kFloat;
    n.attributes["epsilon"].f = *eps;
    n.attributes["axis"].type = Attribute::Type::kInt;
    n.attributes["axis"].i = axes[0];
    std::vector<size_t> parts{i, ir, ia, is, ic, im};
    // An elementwise weight right after: y * w with w a constant vector over the last axis.
    size_t iw = 0;
    const NodeDef* wm = sole_reader(g, ix, mul->outputs[0], &iw);
    if (wm && is_op(*wm, "Mul") && wm->inputs.size() == 2) {
      const std::string& other = wm->inputs[0] == mul->outputs[0] ? wm->inputs[1] : wm->inputs[0];
      const Tensor* w = ix.constant(other);
      if (w && w->dtype() == DType::kFloat32 && w->rank() == 1 && other != mul->outputs[0]) {
        n.inputs.push_back(other);
        n.outputs = {wm->outputs[0]};
        parts.push_back(iw);
      }
    }
    bool clash = false;
    for (size_t k : parts) clash = clash || dead[k];
    if (clash) continue;
    for (size_t k : parts) {
      absorb(n, g.nodes[k]);
      dead[k] = true;
    }
    made.emplace_back(i, std::move(n));
    changed = true;
  }
  if (!changed) return false;
  for (auto& [_, n] : made) g.nodes.push_back(std::move(n));  // plan_graph sorts topologically
  dead.resize(g.nodes.size(), false);
  compact(g, dead);
  return true;
}

}  // namespace parity::refrt
