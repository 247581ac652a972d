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
#include <map>
#include <set>
#include <string>

#include <vector>

#include "onnx/onnx-ml.pb.h"
#include "parity/tensor.h"

namespace parity::exporter {

struct OptimizeOptions {
  bool dead_code = true;
  bool fold = true;
  bool cse = true;
  bool identities = true;
  bool shape_chains = true;
  bool fuse = true;  // fold_weight_transposes, fuse_into_conv, merge_transposes, merge_unsqueezes, slice_shapes
  // Folded or merged constants stay this small, so weights are never duplicated.
  int64_t max_folded_elements = 1024;
  // Rounds of the whole pipeline; it stops earlier at a fixpoint.
  int max_rounds = 8;
  // Extra names never renamed or merged away, and initializers among them never folded into other
  // values (the module's parameters and buffers stay visible under their names).
  std::set<std::string> protected_names;
  // The tensors that pending initializers (model_writer.h) refer to. Passes that read a large
  // initializer look it up here and append the large tensors they create; without it they leave
  // pending initializers alone.
  std::vector<Tensor>* payloads = nullptr;
  // The most bytes of new weights (transposed or BatchNorm-scaled copies) one export may hold in memory:
  // beyond it the weights stay views of the .pt2 and the rewrites that would copy them are skipped.
  int64_t max_materialized_bytes = int64_t{1} << 30;
  // When set: every value name the passes remove while its value lives on under another name (an alias
  // dropped with its Identity, a duplicate merged by CSE) -> that name, chains resolved. The verifier
  // maps the program's values to the ONNX model's through it.
  std::map<std::string, std::string>* aliases = nullptr;
  // What the passes have materialised so far (they count it through a const reference: it is a tally,
  // not a setting).
  mutable int64_t materialized_bytes = 0;
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

// Identity(x) -> y: uses of y read x instead, unless y must keep its name (a graph input or output, a
// nested graph's output, or OptimizeOptions::protected_names; a value_info entry alone does not keep an
// alias). Such a y is produced directly by x's producer (x's other readers read y) when x is a value of
// this graph that is not itself kept; an output aliasing an input, an initializer or another output keeps
// its one Identity, as ONNX requires a node there.
int remove_identities(onnx::GraphProto& graph, const OptimizeOptions& options = {});

// Shape -> Gather of static dims becomes a constant; no-op Reshape and Expand (same static or declared
// shape), Cast to the same dtype, Squeeze undoing an Unsqueeze, single-input Concat, Slice of everything
// (starts 0, ends INT64_MAX, steps 1), and Mul/Div by one, Sub of zero, integer Add of zero (a
// one-element constant that broadcasts nothing) become Identity (removed by remove_identities where
// names allow).
int simplify_shape_chains(onnx::GraphProto& graph, const OptimizeOptions& options = {});

// Transpose of an initializer that nothing else reads becomes a transposed initializer named like the
// Transpose's output (the weight of a Linear: MatMul reads W^T). Exact: only elements move.
int fold_weight_transposes(onnx::GraphProto& graph, const OptimizeOptions& options = {});

// Conv reads Pad(x) (constant mode, zero value, no pad on batch or channel dims, nothing else reads it):
// the pads join the Conv's own. Conv -> BatchNormalization (inference) with constant float32 weights and
// statistics: the normalisation is folded into scaled weights and a bias, computed the way refrt folds it
// at load (so refrt's results stay bit-identical). The merged node keeps the later output's name.
int fuse_into_conv(onnx::GraphProto& graph, const OptimizeOptions& options = {});

// Transpose(Transpose(x)) where nothing else reads the inner one: one Transpose with the composed
// permutation, or an Identity when they cancel.
int merge_transposes(onnx::GraphProto& graph, const OptimizeOptions& options = {});

// Unsqueeze(Unsqueeze(x, a), b) where nothing else reads the inner one and both axes are non-negative
// constants: one Unsqueeze of x with the axes of both (as the final shape numbers them). Exact.
int merge_unsqueezes(onnx::GraphProto& graph, const OptimizeOptions& options = {});

// Slice(Shape(x), [s], [e]) and Unsqueeze(Gather(Shape(x), scalar k), [0]): one Shape(x) with start and
// end (opset 15), the 1-D dims it picks. Needs opset >= 15.
int slice_shapes(onnx::GraphProto& graph, const OptimizeOptions& options = {});

struct OptimizeStats {
  int rounds = 0;
  int dead_code = 0, folded = 0, cse = 0, identities = 0, shape_chains = 0, fused = 0;
  int total() const { return dead_code + folded + cse + identities + shape_chains + fused; }
};

// Runs the enabled passes in turn until none changes anything (at most max_rounds rounds).
OptimizeStats optimize(onnx::ModelProto& model, const OptimizeOptions& options = {});

}  // namespace parity::exporter
