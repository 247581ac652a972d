// Internal: graph optimisation passes run on the built ONNX model before it is serialised.
// Each pass is a small function over a GraphProto that recurses into If/Loop/Scan subgraphs and returns
// how many rewrites it made (0 = nothing to do). Invariants every pass keeps:
//  - value names are FX node names, which the verifier aligns intermediates by: a "protected" name (a
//    graph input/output, a name with a value_info entry, a subgraph output, or one listed in
//    OptimizeOptions::protected_names) is never renamed away or merged into another;
//  - a subgraph may read outer values by name, so such reads keep their producers alive;
//  - results are deterministic: node and initializer order follow the input's order.
// Opset >= 13 semantics are assumed (axes of Squeeze/Unsqueeze/Slice are inputs).
#pragma once
#include <cstdint>
#include <set>
#include <string>

#include "onnx/onnx-ml.pb.h"

namespace parity::exporter {

struct OptimizeOptions {
  bool dead_code = true;
  bool fold = true;
  bool cse = true;
  bool identities = true;
  bool shape_chains = true;
  // Folded or merged constants stay this small, so weights are never duplicated.
  int64_t max_folded_elements = 1024;
  // Rounds of the whole pipeline; it stops earlier at a fixpoint.
  int max_rounds = 8;
  // Extra names never renamed or merged away, and initializers among them never folded into other
  // values (the module's parameters and buffers stay visible under their names).
  std::set<std::string> protected_names;
};

// Nodes none of whose outputs reach a graph output (through explicit or subgraph reads), and
// initializers nothing reads (graph inputs are kept: they are the model's signature).
int remove_dead_nodes(onnx::GraphProto& graph, const OptimizeOptions& options = {});

// Nodes whose inputs are all small constants (unprotected initializers, Constant nodes, folded values) and whose op
// the exporter evaluates itself (fold_eval.h), and Shape/Size of values with a fully static declared
// shape, become initializers named like their output. Graph outputs are never folded (an output needs a
// producer of its own).
int fold_constants(onnx::GraphProto& graph, const OptimizeOptions& options = {});

// Identical deterministic nodes (domain, op, inputs, attributes; no subgraphs, no random ops): later
// duplicates read the first one's outputs (a duplicate with a protected output becomes an Identity of
// it). Identical small initializers merge into the first one too.
int eliminate_common_subexpressions(onnx::GraphProto& graph, const OptimizeOptions& options = {});

// Identity(x) -> y: uses of an unprotected y read x instead; a protected y whose input x is an unprotected
// value produced in the same graph for this Identity alone is produced directly under the name y.
int remove_identities(onnx::GraphProto& graph, const OptimizeOptions& options = {});

// Shape -> Gather of static dims becomes a constant; no-op Reshape and Expand (same static or declared
// shape), Cast to the same dtype, Squeeze undoing an Unsqueeze, and single-input Concat become Identity
// (removed by remove_identities where names allow).
int simplify_shape_chains(onnx::GraphProto& graph, const OptimizeOptions& options = {});

struct OptimizeStats {
  int rounds = 0;
  int dead_code = 0, folded = 0, cse = 0, identities = 0, shape_chains = 0;
  int total() const { return dead_code + folded + cse + identities + shape_chains; }
};

// Runs the enabled passes in turn until none changes anything (at most max_rounds rounds).
OptimizeStats optimize(onnx::ModelProto& model, const OptimizeOptions& options = {});

}  // namespace parity::exporter
