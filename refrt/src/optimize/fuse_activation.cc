#include "passes.h"

#include "activation_match.h"

namespace parity::refrt {
namespace {

// Nodes that only relabel the shape of their first input: an elementwise activation gives the same values
// before or after them.
bool shape_only(const NodeDef& n) {
  return is_op(n, "Reshape") || is_op(n, "Squeeze") || is_op(n, "Unsqueeze") || is_op(n, "Flatten");
}

}  // namespace

// Conv / Gemm / MatMul followed by an activation pattern (activation_match.h): the activation becomes
// the kernel's epilogue, applied while the output is still in cache instead of in a second pass. Also
// across one shape-only node between them (a Linear on [B*S, D] rows, then the Reshape back to
// [B, S, D], then GELU, as torch.export writes a transformer's MLP): the activation moves before the
// Reshape, into the kernel, and the Reshape then yields the activation's output value.
bool fuse_activation(GraphDef& g) {
  bool any = false;
  for (bool changed = true; changed;) {
    changed = false;
    GraphIndex ix(g);
    std::vector<bool> dead(g.nodes.size(), false);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      std::string op;
      if (dead[i] || !anchor_op(g.nodes[i], &op)) continue;
      const std::string produced = g.nodes[i].outputs[0];
      auto m = match_activation(g, ix, produced);
      size_t reshape = 0;
      const NodeDef* between = nullptr;
      if (!m) {
        between = sole_reader(g, ix, produced, &reshape);
        if (!between || !shape_only(*between) || between->inputs[0] != produced || dead[reshape]) continue;
        m = match_activation(g, ix, between->outputs[0]);
        if (!m) continue;
      }
      bool clash = false;
      for (size_t k : m->nodes) clash = clash || dead[k] || k == i || (between && k == reshape);
      if (clash) continue;
      const std::string activated = m->out;
      take_match(g, i, op, *m, dead);
      if (between) {  // anchor -> (activated, same name as before) -> shape node -> the activation's output
        g.nodes[i].outputs[0] = produced;
        g.nodes[reshape].outputs[0] = activated;
      }
      changed = any = true;
    }
    if (changed) compact(g, dead);
  }
  return any;
}

}  // namespace parity::refrt
