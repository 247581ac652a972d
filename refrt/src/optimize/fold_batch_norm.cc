#include "passes.h"

#include <cmath>

#include "pass_util.h"

namespace parity::refrt {

// Conv -> BatchNormalization (inference) with constant weights and statistics: the normalisation is
// folded into scaled weights and a bias, so no node runs for it.
bool fold_batch_norm(GraphDef& g) {
  GraphIndex ix(g);
  std::vector<bool> dead(g.nodes.size(), false);
  bool changed = false;
  std::vector<std::pair<std::string, Tensor>> added;
  for (size_t bi = 0; bi < g.nodes.size(); ++bi) {
    NodeDef& bn = g.nodes[bi];
    if (!is_op(bn, "BatchNormalization") || bn.attr_int("training_mode", 0) != 0 || bn.inputs.size() != 5) continue;
    bool extra_outputs = false;
    for (size_t k = 1; k < bn.outputs.size(); ++k) extra_outputs = extra_outputs || !bn.outputs[k].empty();
    if (extra_outputs || (bn.opset < 9 && bn.attr_int("spatial", 1) == 0)) continue;
    auto p = ix.producer.find(bn.inputs[0]);
    if (p == ix.producer.end() || dead[p->second] || !ix.internal(bn.inputs[0], 1)) continue;
    NodeDef& conv = g.nodes[p->second];
    if (!is_op(conv, "Conv") || conv.outputs.size() != 1 || conv.inputs.size() < 2) continue;  // W is required
    const Tensor* w = ix.constant(conv.inputs[1]);
    const Tensor* b = conv.inputs.size() > 2 && !conv.inputs[2].empty() ? ix.constant(conv.inputs[2]) : nullptr;
    if (!w || w->dtype() != DType::kFloat32 || w->rank() < 3 ||
        (conv.inputs.size() > 2 && !conv.inputs[2].empty() && !b))
      continue;
    const int64_t m = w->dim(0);
    const Tensor* params[4];
    bool ok = !b || (b->dtype() == DType::kFloat32 && b->numel() == m);
    for (int k = 0; k < 4 && ok; ++k) {
      params[k] = ix.constant(bn.inputs[static_cast<size_t>(k) + 1]);
      ok = params[k] && params[k]->dtype() == DType::kFloat32 && params[k]->rank() == 1 && params[k]->numel() == m;
    }
    if (!ok) continue;
    const float eps = bn.attr_float("epsilon", 1e-5f);
    const float *scale = params[0]->data<float>(), *shift = params[1]->data<float>(), *mean = params[2]->data<float>(),
                *var = params[3]->data<float>();
    Tensor nw(DType::kFloat32, w->shape()), nb(DType::kFloat32, {m});
    const int64_t per = w->numel() / std::max<int64_t>(m, 1);
    for (int64_t o = 0; o < m; ++o) {
      const double s =
          static_cast<double>(scale[o]) / std::sqrt(static_cast<double>(var[o]) + static_cast<double>(eps));
      for (int64_t j = 0; j < per; ++j)
        nw.data<float>()[o * per + j] = static_cast<float>(w->data<float>()[o * per + j] * s);
      const double bias = b ? static_cast<double>(b->data<float>()[o]) : 0.0;
      nb.data<float>()[o] =
          static_cast<float>((bias - static_cast<double>(mean[o])) * s + static_cast<double>(shift[o]));
    }
    // Appended after the loop: growing g.initializers here would move the tensors `ix` points to.
    const std::string wn = fresh_name(g, added, conv.name + ".folded_weight");
    added.emplace_back(wn, std::move(nw));
    const std::string bname = fresh_name(g, added, conv.name + ".folded_bias");
    added.emplace_back(bname, std::move(nb));
    conv.inputs.resize(3);
    conv.inputs[1] = wn;
    conv.inputs[2] = bname;
    if (conv.fused_from.empty()) conv.fused_from.emplace_back(conv.name, conv.op_type);
    absorb(conv, bn);
    conv.outputs[0] = bn.outputs[0];
    dead[bi] = true;
    changed = true;
  }
  for (auto& init : added) g.initializers.push_back(std::move(init));
  if (changed) compact(g, dead);
  return changed;
}

}  // namespace parity::refrt
