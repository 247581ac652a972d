#include "passes.h"

#include "pass_util.h"

namespace parity::refrt {

// MatMul with a constant 2-D B + Add of a constant bias broadcast along rows: one GEMM with the bias
// as its epilogue (the shape a Linear layer exports to). In float16/bfloat16 the fused node rounds once, after
// the bias, as torch's Linear (addmm) does; the two ONNX nodes would round twice.
bool fuse_matmul_add(GraphDef& g) {
  GraphIndex ix(g);
  std::vector<bool> dead(g.nodes.size(), false);
  bool changed = false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    NodeDef& mm = g.nodes[i];
    if (!is_op(mm, "MatMul") || mm.inputs.size() != 2) continue;
    const Tensor* b = ix.constant(mm.inputs[1]);
    if (!b || b->rank() != 2 || !(b->dtype() == DType::kFloat32 || is_float16_like(b->dtype()))) continue;
    size_t ai = 0;
    const NodeDef* add = sole_reader(g, ix, mm.outputs[0], &ai);
    if (!add || !is_op(*add, "Add") || add->inputs.size() != 2 || dead[ai]) continue;
    const std::string& other = add->inputs[0] == mm.outputs[0] ? add->inputs[1] : add->inputs[0];
    const Tensor* bias = ix.constant(other);
    if (!bias || bias->dtype() != b->dtype() || bias->rank() < 1 || bias->dim(bias->rank() - 1) != b->dim(1) ||
        bias->numel() != b->dim(1) || bias->rank() > 2)
      continue;
    make_fused(mm, "FusedMatMul");
    mm.inputs.push_back(other);
    absorb(mm, *add);
    mm.outputs[0] = add->outputs[0];
    dead[ai] = true;
    changed = true;
  }
  if (changed) compact(g, dead);
  return changed;
}

}  // namespace parity::refrt
