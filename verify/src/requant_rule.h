// The requantized rule (compare.h's RequantRule) for one input set: refrt keeps its quantized activations,
// libtorch runs again with them in place of its own, and refrt's floating outputs are judged against that
// run.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "parity/exporter/program.h"
#include "parity/refrt/session.h"
#include "parity/verify/compare.h"
#include "parity/verify/reference.h"

namespace parity::verify {

// The FX values a quantize_per_tensor / quantize_per_channel node produces, in graph order.
std::vector<std::string> quantized_activations(const pt2::Program& program);

struct RequantRun {
  std::optional<ReferenceResult> reference;  // libtorch with refrt's activations; unset when `base.problem`
  RequantRule base;                          // activations, one_step, max_steps; problem when it cannot apply
};

// Runs refrt (its usual plan, keeping `activations`) and libtorch with those values substituted. `aliases`
// (the export's ExportOptions::value_aliases): an activation the ONNX model carries under another name (a
// duplicate quantization merged by CSE) is read under that name.
RequantRun requantized_reference(const pt2::Program& program, const refrt::Session& session,
                                 const std::vector<Tensor>& inputs, const std::vector<std::string>& activations,
                                 const std::map<std::string, std::string>& aliases = {});

// The verdict on refrt's output `index` (`ours`) against the substituted run.
RequantRule requant_verdict(const RequantRun& run, size_t index, const Tensor& ours);

}  // namespace parity::verify
