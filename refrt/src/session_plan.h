// Internal: the immutable plan of a Session: validated graph in topological order, one kernel
// per node, value names mapped to integer ids, and when each intermediate can be freed.
#pragma once
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kernel.h"
#include "model_def.h"

namespace parity::refrt {

struct PlannedNode {
  NodeDef def;
  std::unique_ptr<Kernel> kernel;
  std::vector<int> inputs;   // value ids; -1 = absent optional input
  std::vector<int> outputs;  // value ids; -1 = absent optional output
  std::vector<int> release;  // values whose last use is this node (freed after it runs)
};

struct SessionPlan {
  std::string origin;
  std::vector<ValueInfo> inputs, outputs;
  std::vector<std::string> value_names;  // id -> name
  std::vector<std::pair<int, Tensor>> initializers;
  std::vector<int> input_ids, output_ids;
  std::vector<PlannedNode> nodes;  // topological order
  std::vector<int> folded_values;  // outputs of nodes folded into initializers at load (see below)
};

// Validates `model` (unique value names, every input defined, no cycle, a kernel for every node)
// and builds the plan. Throws parity::Error naming the file, node and op. With `fold_constants`,
// nodes whose inputs are all initializers run once here and their outputs become initializers (as
// onnxruntime does at session creation); random ops, Dropout, control flow and custom domains stay.
SessionPlan build_plan(ModelDef model, bool fold_constants = true);
// The same, then the load-time passes (refrt/src/optimize/) except `disabled`, and the plan rebuilt.
SessionPlan build_optimized_plan(ModelDef model, bool fold_constants, const std::set<std::string>& disabled,
                                 int weight_only_accuracy = 0);

// The plan of a subgraph (If branch, Loop/Scan body): its inputs are the graph's formal inputs
// followed by its outer_names, in that order. Built once, in the owning kernel's constructor.
std::shared_ptr<const SessionPlan> build_subgraph_plan(const GraphDef& graph, const std::string& origin);

// Runs `plan` on `inputs` (ordered as plan.input_ids; not checked against declared types: Session::run
// does that for the model's inputs). Fills result->intermediates / timings when `options` ask.
// Sequence/optional inputs come in `values` (parallel to inputs, nullptr at tensors); where outputs are
// such values, `value_outputs` (when given) receives them parallel to the returned tensors (else it is
// left empty). The side frame holding them exists only in runs that meet such a value.
std::vector<Tensor> execute_plan(const SessionPlan& plan, const std::vector<Tensor>& inputs, const RunOptions& options,
                                 RunResult* result, const ThreadPool* pool, const ValueList* values = nullptr,
                                 ValueList* value_outputs = nullptr);

}  // namespace parity::refrt
