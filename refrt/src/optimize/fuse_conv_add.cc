#include "passes.h"

#include "pass_util.h"

namespace parity::refrt {

// Conv (BatchNormalization already folded) + Add of another computed tensor (a residual connection):
// the Add becomes the conv's epilogue, input 3 of FusedConv; activations after it can then fuse too.
bool fuse_conv_add(GraphDef& g) {
  GraphIndex ix(g);
  std::vector<bool> dead(g.nodes.size(), false);
  bool changed = false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    NodeDef& conv = g.nodes[i];
    const bool plain = is_op(conv, "Conv") || (conv.domain == kFusedDomain && conv.op_type == "FusedConv" &&
                                               !conv.attr("activations") && conv.inputs.size() <= 3);
    if (dead[i] || !plain || conv.outputs.size() != 1) continue;
    size_t ai = 0;
    const NodeDef* add = sole_reader(g, ix, conv.outputs[0], &ai);
    if (!add || dead[ai] || !is_op(*add, "Add") || add->inputs.size() != 2 || add->inputs[0] == add->inputs[1])
      continue;
    const std::string& other = add->inputs[0] == conv.outputs[0] ? add->inputs[1] : add->inputs[0];
    if (ix.constant(other)) continue;  // a constant is a bias, not a residual
    // The other operand must exist before the conv runs: not produced by a node after it that
    // depends on the conv (plan_graph's sort would then find a cycle).
    auto p = ix.producer.find(other);
    if (p != ix.producer.end() && p->second > i) continue;
    make_fused(conv, "FusedConv");
    conv.inputs.resize(4);
    conv.inputs[3] = other;
    absorb(conv, *add);
    conv.outputs[0] = add->outputs[0];
    dead[ai] = true;
    changed = true;
  }
  if (changed) compact(g, dead);
  return changed;
}

}  // namespace parity::refrt
