#include "requant_rule.h"

#include <cmath>
#include <set>

namespace parity::verify {

std::vector<std::string> quantized_activations(const pt2::Program& program) {
  std::vector<std::string> names;
  for (const auto& node : program.graph.nodes) {
    if (node.target.rfind("torch.ops.quantized_decomposed.quantize_per_", 0) != 0) continue;
    if (node.outputs.size() == 1 && node.outputs[0].is_tensor()) names.push_back(node.outputs[0].tensor_name());
  }
  return names;
}

RequantRun requantized_reference(const pt2::Program& program, const refrt::Session& session,
                                 const std::vector<Tensor>& inputs, const std::vector<std::string>& activations) {
  RequantRun run;
  refrt::RunOptions ro;
  ro.keep_values = std::set<std::string>(activations.begin(), activations.end());
  // The plan that produced the compared outputs (fused kernels included), so its activations are theirs.
  const refrt::RunResult ours = session.run(inputs, ro);
  if (ours.intermediates.empty()) {
    run.base.problem = "refrt's run keeps none of the program's quantized activations";
    return run;
  }
  run.reference = run_reference(program, inputs, false, &ours.intermediates);
  for (const auto& [name, sub] : run.reference->substituted) {
    ++run.base.activations;
    run.base.one_step += sub.differing;
    run.base.max_steps = std::max(run.base.max_steps, sub.max_diff);
    if (run.base.problem.empty() && !(sub.max_diff <= 1))
      run.base.problem = name + ": refrt's activation is " + std::to_string(sub.max_diff) +
                         " steps from libtorch's requantization of the same input";
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
