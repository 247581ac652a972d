#include "passes.h"

#include "pass_util.h"

namespace parity::refrt {
namespace {

// A 2-D Conv or FusedConv that can read X and its added input in channel blocks: one group, a constant float32
// W [M, C, kh, kw] with M and C multiples of 16 (so that blocks of 8 or 16 hold no padding channels).
bool takes_blocks(const NodeDef& n, const GraphIndex& ix) {
  const bool conv = is_op(n, "Conv") || (n.domain == kFusedDomain && n.op_type == "FusedConv");
  if (!conv || n.outputs.size() != 1 || n.inputs.size() < 2 || n.attr_int("group", 1) != 1) return false;
  const Tensor* w = ix.constant(n.inputs[1]);
  return w && w->dtype() == DType::kFloat32 && w->rank() == 4 && w->dim(0) % 16 == 0 && w->dim(1) % 16 == 0;
}

// Whether `reader` reads `v` only as X (input 0) or as the added input (3), never as W or B.
bool reads_as_data(const NodeDef& reader, const std::string& v) {
  for (size_t k = 0; k < reader.inputs.size(); ++k)
    if (reader.inputs[k] == v && k != 0 && k != 3) return false;
  for (const auto& in : reader.implicit_inputs)
    if (in == v) return false;
  return true;
}

}  // namespace

// Consecutive convolutions hand each other oneDNN's channel blocks ([N, C / B, H, W, B]) instead of NCHW, so that
// a chain (ResNet's blocks, residual Adds fused) moves no layout between its convs: a conv writes Y in blocks where
// every reader of Y is such a conv (kernels/conv.cc, attribute blocked_output) and its readers accept blocks
// (blocked_inputs). Which layout a value actually has is decided per run by its producer (float32 on oneDNN), and
// readers take either, so a float16 chain, oneDNN turned off or a geometry it declines still computes in NCHW.
// Graph outputs are never in blocks, and the intermediates a run keeps are moved back (session.cc). In a float16 chain
// (BatchNormalization folded into float32 weights: half_values) the values go from conv to conv widened as well:
// float32 holding the float16 values, each rounded once where it is written, so that no reader widens them again.
bool keep_conv_blocks(GraphDef& g) {
  GraphIndex ix(g);
  std::vector<bool> ready(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) ready[i] = takes_blocks(g.nodes[i], ix);
  bool changed = false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (!ready[i] || g.nodes[i].attr("blocked_output")) continue;
    const std::string& y = g.nodes[i].outputs[0];
    const std::vector<size_t>& readers = ix.readers(y);
    if (ix.outputs.count(y) || readers.empty()) continue;
    bool all = true;
    for (size_t r : readers) all = all && ready[r] && reads_as_data(g.nodes[r], y);
    if (!all) continue;
    make_fused(g.nodes[i], "FusedConv");
    g.nodes[i].attributes["blocked_output"] = int_attribute(1);
    bool half = g.nodes[i].attr_int("half_values", 0) != 0;
    for (size_t r : readers) {
      make_fused(g.nodes[r], "FusedConv");
      g.nodes[r].attributes["blocked_inputs"] = int_attribute(1);
      half = half && g.nodes[r].attr_int("half_values", 0) != 0;
    }
    if (half) g.nodes[i].attributes["widened_output"] = int_attribute(1);
    changed = true;
  }
  return changed;
}

}  // namespace parity::refrt
