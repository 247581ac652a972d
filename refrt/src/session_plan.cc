#include "session_plan.h"

#include "optimize/optimizer.h"

#include <map>
#include <set>

namespace parity::refrt {
namespace {

class ValueIds {
 public:
  explicit ValueIds(std::vector<std::string>& names) : names_(names) {}
  int operator()(const std::string& name) {
    auto [it, inserted] = ids_.emplace(name, static_cast<int>(names_.size()));
    if (inserted) names_.push_back(name);
    return it->second;
  }

 private:
  std::vector<std::string>& names_;
  std::map<std::string, int> ids_;
};

// Kahn's algorithm; among ready nodes the one first in the file goes first, so a file that is
// already sorted keeps its order.
std::vector<size_t> topological_order(const std::string& origin, const GraphDef& model,
                                      const std::set<std::string>& graph_values) {
  const size_t n = model.nodes.size();
  std::map<std::string, size_t> producer;
  for (size_t i = 0; i < n; ++i) {
    const NodeDef& node = model.nodes[i];
    for (const auto& out : node.outputs) {
      if (out.empty()) continue;
      if (graph_values.count(out) || !producer.emplace(out, i).second)
        throw Error({"refrt", origin, node.name, node.op_type}, "value '" + out + "' is defined twice");
    }
  }
  std::vector<std::vector<size_t>> consumers(n);
  std::vector<size_t> missing(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const NodeDef& node = model.nodes[i];
    std::set<size_t> deps;
    auto depend = [&](const std::string& in, const char* what) {
      if (in.empty() || graph_values.count(in)) return;
      auto it = producer.find(in);
      if (it == producer.end())
        throw Error({"refrt", origin, node.name, node.op_type},
                    std::string(what) + " '" + in + "' is not a graph input, an initializer or any node's output");
      deps.insert(it->second);
    };
    for (const auto& in : node.inputs) depend(in, "input");
    for (const auto& in : node.implicit_inputs) depend(in, "value");
    missing[i] = deps.size();
    for (size_t d : deps) consumers[d].push_back(i);
  }
  std::set<size_t> ready;
  for (size_t i = 0; i < n; ++i)
    if (missing[i] == 0) ready.insert(i);
  std::vector<size_t> order;
  while (!ready.empty()) {
    const size_t i = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(i);
    for (size_t c : consumers[i])
      if (--missing[c] == 0) ready.insert(c);
  }
  if (order.size() != n)
    for (size_t i = 0; i < n; ++i)
      if (missing[i] > 0)
        throw Error({"refrt", origin, model.nodes[i].name, model.nodes[i].op_type},
                    "the graph has a cycle through this node (or through a node it depends on)");
  for (const auto& out : model.outputs)
    if (!graph_values.count(out.name) && !producer.count(out.name))
      throw Error({"refrt", origin}, "graph output '" + out.name + "' is never produced");
  return order;
}

std::unique_ptr<Kernel> create_kernel(const NodeDef& def, const std::string& origin) {
  const ErrorContext where{"refrt", origin, def.name, def.op_type};
  const std::string domain = def.domain.empty() ? "ai.onnx" : def.domain;
  const KernelRegistration* reg = find_kernel(def.op_type, def.domain, def.opset);
  if (!reg) {
    std::string message =
        "no refrt kernel for " + def.op_type + " (domain " + domain + ", opset " + std::to_string(def.opset) + ")";
    int oldest = 0;
    for (const auto& r : kernel_registry())
      if (r.op_type == def.op_type && r.domain == def.domain && (!oldest || r.since_version < oldest))
        oldest = r.since_version;
    if (oldest) message += "; refrt implements it from opset " + std::to_string(oldest);
    throw Error(where, message, ErrorKind::kUnsupported);
  }
  try {
    return reg->factory(def);
  } catch (const Error& e) {
    throw as_refrt_error(e, where);
  } catch (const std::exception& e) {
    throw Error(where, e.what());
  }
}

bool foldable_op(const NodeDef& node) {
  static const std::set<std::string> stateful = {
      "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
      "Bernoulli",    "Multinomial",   "Dropout",          "If",
      "Loop",         "Scan"};
  return (node.domain.empty() || node.domain == "ai.onnx") && !stateful.count(node.op_type) &&
         node.implicit_inputs.empty();
}

// Runs, once, every node whose inputs are all constants (initializers not overridable by a graph
// input, or outputs of nodes folded before it), and turns its outputs into initializers. A node whose
// kernel fails stays in the graph: the error then surfaces at run time with its usual context.
void fold_constants(SessionPlan& plan) {
  std::map<int, Tensor> constants;
  for (const auto& [id, t] : plan.initializers) constants[id] = t;
  for (int id : plan.input_ids) constants.erase(id);  // a graph input may override its initializer
  std::vector<PlannedNode> kept;
  for (PlannedNode& node : plan.nodes) {
    bool constant = foldable_op(node.def);
    for (int v : node.inputs) constant = constant && (v < 0 || constants.count(v));
    if (constant) {
      KernelIO io;
      for (int v : node.inputs) io.inputs.push_back(v < 0 ? nullptr : &constants.at(v));
      io.outputs.assign(node.outputs.size(), Tensor());
      try {
        node.kernel->compute(io);
      } catch (const std::exception&) {
        constant = false;
      }
      for (size_t k = 0; constant && k < node.outputs.size(); ++k)
        constant = node.outputs[k] < 0 || io.outputs[k].defined();
      if (constant) {
        for (size_t k = 0; k < node.outputs.size(); ++k) {
          if (node.outputs[k] < 0) continue;
          constants[node.outputs[k]] = frozen(io.outputs[k]);
          plan.initializers.emplace_back(node.outputs[k], constants[node.outputs[k]]);
          plan.folded_values.push_back(node.outputs[k]);
        }
        continue;
      }
    }
    kept.push_back(std::move(node));
  }
  plan.nodes = std::move(kept);
}

// Hands each kernel its constant inputs (Kernel::prepare).
void prepare_kernels(SessionPlan& plan) {
  std::map<int, const Tensor*> constants;
  for (const auto& [id, t] : plan.initializers) constants[id] = &t;
  for (int id : plan.input_ids) constants.erase(id);  // a graph input may override its initializer
  for (PlannedNode& node : plan.nodes) {
    std::vector<const Tensor*> known;
    for (int v : node.inputs) known.push_back(v >= 0 && constants.count(v) ? constants.at(v) : nullptr);
    node.kernel->prepare(known);
  }
}

SessionPlan plan_graph(GraphDef graph, const std::string& origin, bool fold) {
  SessionPlan plan;
  plan.origin = origin;
  GraphDef& model = graph;
  ValueIds id_of(plan.value_names);
  std::set<std::string> graph_values;  // defined before any node runs
  for (auto& [name, tensor] : model.initializers) {
    graph_values.insert(name);
    plan.initializers.emplace_back(id_of(name), std::move(tensor));
  }
  for (const auto& in : model.inputs) {
    graph_values.insert(in.name);
    plan.input_ids.push_back(id_of(in.name));
  }
  for (const auto& name : model.outer_names) {
    graph_values.insert(name);
    plan.input_ids.push_back(id_of(name));
  }
  for (size_t i : topological_order(origin, model, graph_values)) {
    PlannedNode node;
    node.def = std::move(model.nodes[i]);
    node.kernel = create_kernel(node.def, origin);
    for (const auto& in : node.def.inputs) node.inputs.push_back(in.empty() ? -1 : id_of(in));
    for (const auto& in : node.def.implicit_inputs) node.inputs.push_back(id_of(in));
    for (const auto& out : node.def.outputs) node.outputs.push_back(out.empty() ? -1 : id_of(out));
    plan.nodes.push_back(std::move(node));
  }
  if (fold) fold_constants(plan);
  std::set<int> kept;  // graph outputs and initializers are never freed
  for (const auto& out : model.outputs) {
    plan.output_ids.push_back(id_of(out.name));
    kept.insert(plan.output_ids.back());
  }
  for (const auto& [id, _] : plan.initializers) kept.insert(id);
  prepare_kernels(plan);

  // Free every other value right after its last consumer (or right away if nothing reads it).
  std::map<int, size_t> last_use;
  for (size_t k = 0; k < plan.nodes.size(); ++k) {
    for (int v : plan.nodes[k].outputs)
      if (v >= 0) last_use[v] = k;
    for (int v : plan.nodes[k].inputs)
      if (v >= 0) last_use[v] = k;
  }
  for (const auto& [v, k] : last_use)
    if (!kept.count(v)) plan.nodes[k].release.push_back(v);
  plan.inputs = std::move(model.inputs);
  plan.outputs = std::move(model.outputs);
  return plan;
}

}  // namespace

SessionPlan build_plan(ModelDef model, bool fold_constants) {
  return plan_graph(std::move(model.graph), model.origin, fold_constants);
}

SessionPlan build_optimized_plan(ModelDef model, bool fold_constants, const std::set<std::string>& disabled,
                                 int weight_only_accuracy) {
  const std::string origin = model.origin;
  optimize_graph_before_folding(model.graph, disabled);
  SessionPlan folded = plan_graph(std::move(model.graph), origin, fold_constants);
  // Back to a graph: the passes see folded constants (transposed weights, shape arithmetic) as initializers.
  GraphDef g;
  g.inputs = folded.inputs;
  g.outputs = folded.outputs;
  for (auto& [id, t] : folded.initializers) g.initializers.emplace_back(folded.value_names[static_cast<size_t>(id)], t);
  for (auto& node : folded.nodes) g.nodes.push_back(std::move(node.def));
  optimize_graph(g, disabled, origin);
  set_weight_only_accuracy(g, weight_only_accuracy);
  return plan_graph(std::move(g), origin, false);
}

std::shared_ptr<const SessionPlan> build_subgraph_plan(const GraphDef& graph, const std::string& origin) {
  return std::make_shared<const SessionPlan>(plan_graph(graph, origin, true));
}

}  // namespace parity::refrt
