#include "passes.h"

#include "activation_match.h"

namespace parity::refrt {

// Conv / Gemm / MatMul followed by an activation pattern (activation_match.h): the activation becomes
// the kernel's epilogue, applied while the output is still in cache instead of in a second pass.
bool fuse_activation(GraphDef& g) {
  bool any = false;
  for (bool changed = true; changed;) {
    changed = false;
    GraphIndex ix(g);
    std::vector<bool> dead(g.nodes.size(), false);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      std::string op;
      if (dead[i] || !anchor_op(g.nodes[i], &op)) continue;
      auto m = match_activation(g, ix, g.nodes[i].outputs[0]);
      if (!m) continue;
      bool clash = false;
      for (size_t k : m->nodes) clash = clash || dead[k] || k == i;
      if (clash) continue;
      take_match(g, i, op, *m, dead);
      changed = any = true;
    }
    if (changed) compact(g, dead);
  }
  return any;
}

}  // namespace parity::refrt
