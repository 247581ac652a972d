#include "requant_rule.h"

#include <cmath>
#include <map>
#include <set>

namespace parity::verify {

namespace {

// How near a rounding tie (in steps) libtorch's unrounded value must lie where refrt's activation rounded the
// other way. Float32 rounding upstream moves a value by about 1e-6 of a step per unit of magnitude (values up to
// a few hundred steps); 1e-3 keeps a wide margin over that, while a wrong kernel's off-by-one lands anywhere.
constexpr double kTieSlack = 1e-3;

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// A quantize op: PT2E's quantize_per_tensor / _per_channel, torchao's quantize_affine (quantize_ with dynamic
// activations).
bool is_quantize_op(const pt2::Node& node) {
  return starts_with(node.target, "torch.ops.quantized_decomposed.quantize_per_") ||
         starts_with(node.target, "torch.ops.torchao.quantize_affine.");
}

// The same spelled out in ATen (a decomposed program): an 8-bit integer cast of a clamped float tensor.
bool is_decomposed_quantize(const pt2::Graph& g, const pt2::Node& node,
                            const std::map<std::string, const pt2::Node*>& producers) {
  if (node.target != "torch.ops.aten._to_copy.default" && !starts_with(node.target, "torch.ops.aten.to.dtype"))
    return false;
  const pt2::Argument* self = node.input("self");
  if (!self || !self->is_tensor() || node.outputs.size() != 1 || !node.outputs[0].is_tensor()) return false;
  const DType out = g.meta(node.outputs[0].tensor_name(), node.name).dtype;
  if (out != DType::kInt8 && out != DType::kUInt8) return false;
  if (!dtype_is_floating(g.meta(self->tensor_name(), node.name).dtype)) return false;
  // The clamp, possibly behind views (torchao reshapes to its block layout and back).
  auto p = producers.find(self->tensor_name());
  while (p != producers.end() && (starts_with(p->second->target, "torch.ops.aten.view.") ||
                                  starts_with(p->second->target, "torch.ops.aten.reshape.") ||
                                  starts_with(p->second->target, "torch.ops.aten._unsafe_view."))) {
    const pt2::Argument* base = p->second->input("self");
    if (!base || !base->is_tensor()) return false;
    p = producers.find(base->tensor_name());
  }
  return p != producers.end() && starts_with(p->second->target, "torch.ops.aten.clamp");
}

}  // namespace

std::vector<std::string> quantized_activations(const pt2::Program& program) {
  const pt2::Graph& g = program.graph;
  std::map<std::string, const pt2::Node*> producers;
  for (const auto& node : g.nodes)
    for (const auto& out : node.outputs)
      if (out.is_tensor()) producers[out.tensor_name()] = &node;
  std::vector<std::string> names;
  for (const auto& node : g.nodes) {
    if (!is_quantize_op(node) && !is_decomposed_quantize(g, node, producers)) continue;
    if (node.outputs.size() == 1 && node.outputs[0].is_tensor()) names.push_back(node.outputs[0].tensor_name());
  }
  return names;
}

RequantRun requantized_reference(const pt2::Program& program, const refrt::Session& session,
                                 const std::vector<Tensor>& inputs, const std::vector<std::string>& activations,
                                 const std::map<std::string, std::string>& aliases) {
  RequantRun run;
  refrt::RunOptions ro;
  // Each activation under the name the ONNX model gives its value.
  std::map<std::string, std::string> onnx_name;
  for (const auto& a : activations) {
    const auto it = aliases.find(a);
    onnx_name[a] = it == aliases.end() ? a : it->second;
    ro.keep_values.insert(onnx_name[a]);
  }
  // The plan that produced the compared outputs (fused kernels included), so its activations are theirs.
  const refrt::RunResult ours = session.run(inputs, ro);
  std::map<std::string, Tensor> substitutes;
  for (const auto& [fx, name] : onnx_name) {
    const auto it = ours.intermediates.find(name);
    if (it != ours.intermediates.end()) substitutes.emplace(fx, it->second);
  }
  if (substitutes.empty()) {
    run.base.problem = "refrt's run keeps none of the program's quantized activations";
    return run;
  }
  run.reference = run_reference(program, inputs, false, &substitutes);
  for (const auto& [name, sub] : run.reference->substituted) {
    ++run.base.activations;
    run.base.one_step += sub.differing;
    run.base.max_steps = std::max(run.base.max_steps, sub.max_diff);
    if (sub.differing > 0) {
      run.base.flipped[name] = sub.differing;
      run.base.max_tie_distance = std::max(run.base.max_tie_distance, sub.max_tie_distance);
    }
    if (!run.base.problem.empty()) continue;
    if (!(sub.max_diff <= 1))
      run.base.problem = name + ": refrt's activation is " + std::to_string(sub.max_diff) +
                         " steps from libtorch's requantization of the same input";
    else if (sub.differing > 0 && !(sub.max_tie_distance <= kTieSlack))
      run.base.problem = name + ": refrt's activation is a step from libtorch's in " + std::to_string(sub.differing) +
                         " elements, one of them " + std::to_string(sub.max_tie_distance) +
                         " steps from a rounding tie in libtorch's run: float rounding moves only near-ties, so this "
                         "is a wrong value, not a flip";
  }
  if (!run.base.problem.empty()) run.reference.reset();
  return run;
}

RequantRule requant_verdict(const RequantRun& run, size_t index, const Tensor& ours) {
  RequantRule rule = run.base;
  rule.max_abs_error = NAN;
  if (!run.reference || index >= run.reference->outputs.size()) {
    if (rule.problem.empty()) rule.problem = "libtorch's substituted run has no output " + std::to_string(index);
    return rule;
  }
  const Comparison c = compare_tensors(run.reference->outputs[index], ours);
  rule.max_abs_error = c.problem.empty() ? c.max_abs_error : INFINITY;
  rule.passed = c.passed;
  if (!c.passed) rule.problem = c.problem.empty() ? "beyond the fixed tolerance of the substituted run" : c.problem;
  return rule;
}

}  // namespace parity::verify
