#include "pass_util.h"

namespace parity::refrt {

const NodeDef* sole_reader(const GraphDef& g, const GraphIndex& ix, const std::string& v, size_t* index) {
  if (!ix.internal(v, 1)) return nullptr;
  const size_t i = ix.readers(v)[0];
  if (index) *index = i;
  return g.nodes[i].domain.empty() && g.nodes[i].implicit_inputs.empty() ? &g.nodes[i] : nullptr;
}

std::optional<float> other_scalar(const GraphIndex& ix, const NodeDef& n, const std::string& v) {
  if (n.inputs.size() != 2) return std::nullopt;
  if (n.inputs[0] == v && n.inputs[1] != v) return ix.scalar(n.inputs[1]);
  if (n.inputs[1] == v && n.inputs[0] != v) return ix.scalar(n.inputs[0]);
  return std::nullopt;
}

void absorb(NodeDef& into, const NodeDef& part) { into.fused_from.emplace_back(part.name, part.op_type); }

void make_fused(NodeDef& n, const std::string& op) {
  if (n.domain == kFusedDomain) return;
  if (n.fused_from.empty()) n.fused_from.emplace_back(n.name, n.op_type);
  n.op_type = op;
  n.domain = kFusedDomain;
  n.opset = 1;
}

std::string fresh_name(const GraphDef& g, const std::vector<std::pair<std::string, Tensor>>& added,
                       const std::string& base) {
  std::set<std::string> taken(g.outer_names.begin(), g.outer_names.end());
  for (const auto& in : g.inputs) taken.insert(in.name);
  for (const auto& [name, _] : added) taken.insert(name);
  for (const auto& [name, _] : g.initializers) taken.insert(name);
  for (const auto& n : g.nodes) taken.insert(n.outputs.begin(), n.outputs.end());
  std::string name = base;
  for (int i = 1; taken.count(name); ++i) name = base + "_" + std::to_string(i);
  return name;
}

void compact(GraphDef& g, const std::vector<bool>& dead) {
  std::vector<NodeDef> kept;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!dead[i]) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
  std::set<std::string> used;
  for (const auto& n : g.nodes) {
    used.insert(n.inputs.begin(), n.inputs.end());
    used.insert(n.implicit_inputs.begin(), n.implicit_inputs.end());
  }
  for (const auto& o : g.outputs) used.insert(o.name);
  std::vector<std::pair<std::string, Tensor>> inits;
  for (auto& [name, t] : g.initializers)
    if (used.count(name)) inits.emplace_back(name, std::move(t));
  g.initializers = std::move(inits);
}

Attribute tensor_attribute(Tensor t) {
  Attribute a;
  a.type = Attribute::Type::kTensor;
  a.t = std::move(t);
  return a;
}

Attribute int_attribute(int64_t v) {
  Attribute a;
  a.type = Attribute::Type::kInt;
  a.i = v;
  return a;
}

Attribute float_attribute(float v) {
  Attribute a;
  a.type = Attribute::Type::kFloat;
  a.f = v;
  return a;
}

}  // namespace parity::refrt
