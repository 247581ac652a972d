#include "passes.h"

#include "pass_util.h"

namespace parity::refrt {

// Optional trailing outputs nobody reads (MaxPool's indices, LayerNormalization's mean and inverse
// std, Dropout's mask, as exporters write them): dropped, so the kernel does not compute them.
bool drop_unused_outputs(GraphDef& g) {
  static const std::set<std::string> ops = {"MaxPool", "LayerNormalization", "Dropout"};
  GraphIndex ix(g);
  bool changed = false;
  for (NodeDef& n : g.nodes) {
    if (!n.domain.empty() || !ops.count(n.op_type)) continue;
    size_t keep = n.outputs.size();
    while (keep > 1 && (n.outputs[keep - 1].empty() || ix.internal(n.outputs[keep - 1], 0))) --keep;
    if (keep == n.outputs.size()) continue;
    n.outputs.resize(keep);
    changed = true;
  }
  return changed;
}

}  // namespace parity::refrt
