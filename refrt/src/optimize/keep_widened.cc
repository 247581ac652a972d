#include "passes.h"

#include "pass_util.h"

namespace parity::refrt {
namespace {

// A MatMul (not a folded transpose's reshaped B) or a Gemm (A not transposed, alpha 1) with a constant 2-D float16 B:
// the product refrt packs once and runs on B's float32 copy (kernels/matmul.cc, half_product), widening A on every
// call.
bool packed_half_product(const NodeDef& n, const GraphIndex& ix) {
  const bool fused = n.domain == kFusedDomain;
  const bool mm = (is_op(n, "MatMul") || (fused && n.op_type == "FusedMatMul")) && !n.attr("b_shape");
  const bool gemm = (is_op(n, "Gemm") || (fused && n.op_type == "FusedGemm")) && n.attr_int("transA", 0) == 0 &&
                    n.attr_float("alpha", 1.0f) == 1.0f;
  if (!(mm || gemm) || n.inputs.size() < 2 || n.outputs.size() != 1) return false;
  const Tensor* b = ix.constant(n.inputs[1]);
  return b && b->rank() == 2 && b->dtype() == DType::kFloat16;
}

// Whether `reader` is such a product reading `v` as A only.
bool reads_as_a(const NodeDef& reader, const GraphIndex& ix, const std::string& v) {
  if (!packed_half_product(reader, ix) || reader.inputs[0] != v) return false;
  for (size_t k = 1; k < reader.inputs.size(); ++k)
    if (reader.inputs[k] == v) return false;
  for (const auto& in : reader.implicit_inputs)
    if (in == v) return false;
  return true;
}

// Nodes that can write their output widened: the row normalisations without statistics outputs, and the products.
bool writes_widened(const NodeDef& n, const GraphIndex& ix) {
  if (is_op(n, "LayerNormalization") || is_op(n, "RMSNormalization")) return n.outputs.size() == 1;
  return packed_half_product(n, ix);
}

void mark(NodeDef& n, const char* attr) {
  if (is_op(n, "MatMul")) make_fused(n, "FusedMatMul");
  if (is_op(n, "Gemm")) make_fused(n, "FusedGemm");
  n.attributes[attr] = int_attribute(1);
}

}  // namespace

// A float16 value read by products on constant weights (which widen A on every call) is widened once:
// - its producer writes it widened when every reader is such a product: a LayerNormalization, RMSNormalization or
//   such a product writes float32 holding the float16 values it would have written (each rounded to float16 as
//   before, then kept as float32); which form a value has is decided per run by the producer, and readers take either
//   (one that cannot use the float32 form rounds it back, exactly). Graph outputs are never widened, and the
//   intermediates a run keeps are rounded back (session.cc).
// - else, when two or more readers are such products (BERT's normalised rows feed three projections and the residual
//   Add), the first of them widens it as before and hands its float32 copy on as a second output (shares_widened),
//   which the others read instead: no node is added, so a profile still names the model's nodes only.
// The values are the same bits either way; only where and how often they are widened changes.
bool keep_widened(GraphDef& g) {
  GraphIndex ix(g);
  bool changed = false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    NodeDef& n = g.nodes[i];
    if (n.outputs.empty() || n.outputs[0].empty() || n.attr("widened_output")) continue;
    const std::string v = n.outputs[0];
    std::vector<size_t> products;
    for (size_t r : ix.readers(v))
      if (reads_as_a(g.nodes[r], ix, v)) products.push_back(r);
    if (products.empty()) continue;
    if (products.size() == ix.readers(v).size() && !ix.outputs.count(v) && writes_widened(n, ix)) {
      mark(n, "widened_output");
      for (size_t r : products) mark(g.nodes[r], "widened_input");
      changed = true;
    } else if (products.size() >= 2) {
      NodeDef& first = g.nodes[products.front()];  // readers are listed in node order
      const std::string widened = fresh_name(g, {}, v + "_widened");
      first.outputs.push_back(widened);
      mark(first, "shares_widened");
      for (size_t r : products) {
        mark(g.nodes[r], "widened_input");
        if (r != products.front()) g.nodes[r].inputs[0] = widened;
      }
      changed = true;
    }
  }
  return changed;
}

}  // namespace parity::refrt
