// Internal to refrt's load-time passes: the graph index every pass builds and the small rewrites they
// share (fusing a node into its private-domain form, dropping dead nodes, naming new initializers).
#pragma once
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "../activation.h"
#include "../dispatch.h"
#include "../model_def.h"

namespace parity::refrt {

// Who produces and who reads each value of a graph; rebuilt after every rewrite.
struct GraphIndex {
  std::map<std::string, size_t> producer;
  std::map<std::string, std::vector<size_t>> consumers;
  std::set<std::string> outputs;
  std::map<std::string, const Tensor*> constants;  // initializers a graph input cannot override

  explicit GraphIndex(const GraphDef& g) {
    for (const auto& [name, t] : g.initializers) constants[name] = &t;
    for (const auto& in : g.inputs) constants.erase(in.name);
    for (const auto& name : g.outer_names) constants.erase(name);
    for (const auto& out : g.outputs) outputs.insert(out.name);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      for (const auto& out : g.nodes[i].outputs)
        if (!out.empty()) producer[out] = i;
      for (const auto& in : g.nodes[i].inputs)
        if (!in.empty()) consumers[in].push_back(i);
      for (const auto& in : g.nodes[i].implicit_inputs) consumers[in].push_back(i);
    }
  }
  const std::vector<size_t>& readers(const std::string& v) const {
    static const std::vector<size_t> none;
    auto it = consumers.find(v);
    return it == consumers.end() ? none : it->second;
  }
  // `v` is read by exactly `n` nodes and is not a graph output: fusing its readers removes it.
  bool internal(const std::string& v, size_t n) const { return !outputs.count(v) && readers(v).size() == n; }
  const Tensor* constant(const std::string& v) const {
    auto it = constants.find(v);
    return it == constants.end() ? nullptr : it->second;
  }
  // A float32, float16 or bfloat16 scalar constant (any rank, one element), as a float (exact).
  std::optional<float> scalar(const std::string& v) const {
    const Tensor* t = constant(v);
    if (!t || t->numel() != 1) return std::nullopt;
    if (t->dtype() == DType::kFloat32) return *t->data<float>();
    if (t->dtype() == DType::kFloat16) return half_to_float(*static_cast<const uint16_t*>(t->raw()));
    if (t->dtype() == DType::kBFloat16) return bf16_to_float(*static_cast<const uint16_t*>(t->raw()));
    return std::nullopt;
  }
};

inline bool is_op(const NodeDef& n, const char* op) { return n.domain.empty() && n.op_type == op; }

// The plain ai.onnx node reading `v` when it is its only reader (and `v` is no graph output).
const NodeDef* sole_reader(const GraphDef& g, const GraphIndex& ix, const std::string& v, size_t* index = nullptr);

// For a binary node with `v` as one operand: the other operand's float32 scalar value.
std::optional<float> other_scalar(const GraphIndex& ix, const NodeDef& n, const std::string& v);

// Records `part` among the nodes `into` replaced (for the profiler).
void absorb(NodeDef& into, const NodeDef& part);

// Turns an ai.onnx anchor node into its fused form (same attributes, private domain).
void make_fused(NodeDef& n, const std::string& op);

// `base`, or `base_K` with the first K that names no graph input, outer value, initializer (of the graph or `added`)
// and no node output.
std::string fresh_name(const GraphDef& g, const std::vector<std::pair<std::string, Tensor>>& added,
                       const std::string& base);

// Attributes of the fused nodes a pass builds.
Attribute tensor_attribute(Tensor t);
Attribute int_attribute(int64_t v);
Attribute float_attribute(float v);

// Drops the nodes marked dead (order kept) and the initializers no node reads any more.
void compact(GraphDef& g, const std::vector<bool>& dead);

}  // namespace parity::refrt
