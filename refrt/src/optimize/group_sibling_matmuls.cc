#include "passes.h"

#include "pass_util.h"

namespace parity::refrt {
namespace {

// A plain MatMul reading `v` as A only, with a constant float32 [K, N] B and one output.
bool constant_b_matmul(const NodeDef& n, const GraphIndex& ix, const std::string& v) {
  if (!is_op(n, "MatMul") || n.inputs.size() != 2 || n.inputs[0] != v || n.inputs[1] == v || n.outputs.size() != 1 ||
      n.outputs[0].empty())
    return false;
  const Tensor* b = ix.constant(n.inputs[1]);
  return b && b->rank() == 2 && b->dtype() == DType::kFloat32;
}

}  // namespace

// MatMuls that read one value as A, each with constant float32 weights of the same K (an attention's q, k and v
// projections, a gated MLP's gate and up) become one FusedSiblingMatMul with every B and every output, at the first
// one's place (its inputs are there already). Why: a decode step multiplies one row by each, and each GEMV is a
// stream of B's rows; side by side (kernels/matmul_siblings.cc) they are one longer stream per row of K, where
// the 128-column k and v projections of a grouped-query attention ran at 8 GB/s alone. More rows run each product as
// before.
bool group_sibling_matmuls(GraphDef& g) {
  GraphIndex ix(g);
  std::vector<bool> dead(g.nodes.size(), false);
  bool changed = false;
  for (const auto& [v, readers] : ix.consumers) {
    std::vector<size_t> siblings;
    for (size_t r : readers)
      if (!dead[r] && constant_b_matmul(g.nodes[r], ix, v) &&
          (siblings.empty() || r != siblings.back()))  // a node reading v twice is listed twice
        siblings.push_back(r);
    if (siblings.size() < 2) continue;
    const int64_t k = ix.constant(g.nodes[siblings[0]].inputs[1])->dim(0);
    bool same_k = true;
    for (size_t r : siblings) same_k = same_k && ix.constant(g.nodes[r].inputs[1])->dim(0) == k;
    if (!same_k) continue;                        // an invalid graph: the MatMuls fail as they are
    const NodeDef& first = g.nodes[siblings[0]];  // readers are in node order
    NodeDef n;
    n.name = first.name;
    n.op_type = "FusedSiblingMatMul";
    n.domain = kFusedDomain;
    n.opset = 1;
    n.origin = first.origin;
    n.inputs = {v};
    n.attributes["matmul_opset"] = int_attribute(first.opset);
    for (size_t r : siblings) {
      n.inputs.push_back(g.nodes[r].inputs[1]);
      n.outputs.push_back(g.nodes[r].outputs[0]);
      absorb(n, g.nodes[r]);
      dead[r] = true;
    }
    dead[siblings[0]] = false;
    g.nodes[siblings[0]] = std::move(n);
    changed = true;
  }
  if (changed) compact(g, dead);
  return changed;
}

}  // namespace parity::refrt
