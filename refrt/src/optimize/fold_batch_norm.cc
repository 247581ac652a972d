#include "passes.h"

#include <cmath>

#include "pass_util.h"

namespace parity::refrt {

namespace {

// Element i of a float32 or float16 constant, as a double.
double value_at(const Tensor& t, int64_t i) {
  return t.dtype() == DType::kFloat32 ? static_cast<double>(t.data<float>()[i])
                                      : static_cast<double>(half_to_float(static_cast<const uint16_t*>(t.raw())[i]));
}

bool foldable_type(const Tensor& t, bool half) {
  return t.dtype() == DType::kFloat32 || (half && t.dtype() == DType::kFloat16);
}

}  // namespace

// Conv -> BatchNormalization (inference) with constant weights and statistics: the normalisation is
// folded into scaled weights and a bias, so no node runs for it (and an Add and activations after it can join the
// conv). float32 convs get float32 weights; float16 ones too, kept in float32: a float16 conv computes in float32
// on weights widened once anyway (kernels/conv.cc), so the fold adds no rounding and the output is rounded once
// (eager rounds the conv's output and the normalisation's). bfloat16 convs are left alone: their native oneDNN
// kernels take bfloat16 weights, and rounding the folded weights to bfloat16 would add an error of its own.
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
    const bool half = w && w->dtype() == DType::kFloat16;
    if (!w || !foldable_type(*w, half) || w->rank() < 3 || (conv.inputs.size() > 2 && !conv.inputs[2].empty() && !b))
      continue;
    const int64_t m = w->dim(0);
    const Tensor* params[4];
    bool ok = !b || (b->dtype() == w->dtype() && b->numel() == m);
    for (int k = 0; k < 4 && ok; ++k) {
      params[k] = ix.constant(bn.inputs[static_cast<size_t>(k) + 1]);
      ok = params[k] && foldable_type(*params[k], half) && params[k]->rank() == 1 && params[k]->numel() == m;
    }
    if (!ok) continue;
    const double eps = bn.attr_float("epsilon", 1e-5f);
    Tensor nw(DType::kFloat32, w->shape()), nb(DType::kFloat32, {m});
    const int64_t per = w->numel() / std::max<int64_t>(m, 1);
    for (int64_t o = 0; o < m; ++o) {
      const double s = value_at(*params[0], o) / std::sqrt(value_at(*params[3], o) + eps);
      for (int64_t j = 0; j < per; ++j)
        nw.data<float>()[o * per + j] = static_cast<float>(value_at(*w, o * per + j) * s);
      const double bias = b ? value_at(*b, o) : 0.0;
      nb.data<float>()[o] = static_cast<float>((bias - value_at(*params[2], o)) * s + value_at(*params[1], o));
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
    if (half) conv.attributes["half_values"] = int_attribute(1);  // X and Y stay float16 (kernels/conv.cc)
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
