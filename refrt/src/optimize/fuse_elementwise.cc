#include "passes.h"

#include "activation_match.h"

namespace parity::refrt {

// Decomposed multi-node activations that follow no anchor: one FusedActivation node each.
bool fuse_elementwise(GraphDef& g) {
  bool any = false;
  for (bool changed = true; changed;) {
    changed = false;
    GraphIndex ix(g);
    std::vector<bool> dead(g.nodes.size(), false);
    std::vector<NodeDef> made;
    std::set<std::string> starts;
    for (const auto& [v, _] : ix.consumers) starts.insert(v);
    for (const std::string& v : starts) {
      auto m = match_activation(g, ix, v);
      if (!m || m->nodes.size() < 2) continue;  // one ai.onnx node is already one kernel call
      bool clash = false;
      for (size_t k : m->nodes) clash = clash || dead[k];
      if (clash) continue;
      NodeDef n;
      n.name = g.nodes[m->nodes[0]].name;
      n.op_type = "FusedActivation";
      n.domain = kFusedDomain;
      n.opset = 1;
      n.origin = g.nodes[m->nodes[0]].origin;
      n.inputs = {v};
      n.outputs = {m->out};
      store_activations(n, m->steps);
      for (size_t k : m->nodes) {
        absorb(n, g.nodes[k]);
        dead[k] = true;
      }
      made.push_back(std::move(n));
      changed = any = true;
    }
    if (!changed) break;
    // New nodes go last: plan_graph sorts the graph topologically.
    for (auto& n : made) g.nodes.push_back(std::move(n));
    dead.resize(g.nodes.size(), false);
    compact(g, dead);
  }
  return any;
}

}  // namespace parity::refrt
