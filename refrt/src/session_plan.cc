#include "session_plan.h"

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
    std::string message = "no refrt kernel for " + def.op_type + " (domain " + domain + ", opset " +
                          std::to_string(def.opset) + ")";
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


SessionPlan plan_graph(GraphDef graph, const std::string& origin) {
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
  std::set<int> kept;  // graph outputs and initializers are never freed
  for (const auto& out : model.outputs) {
    plan.output_ids.push_back(id_of(out.name));
    kept.insert(plan.output_ids.back());
  }
  for (const auto& [id, _] : plan.initializers) kept.insert(id);

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

SessionPlan build_plan(ModelDef model) { return plan_graph(std::move(model.graph), model.origin); }

std::shared_ptr<const SessionPlan> build_subgraph_plan(const GraphDef& graph, const std::string& origin) {
  return std::make_shared<const SessionPlan>(plan_graph(graph, origin));
}

}  // namespace parity::refrt
