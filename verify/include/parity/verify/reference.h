// The libtorch reference executor: runs a PT2 graph node by node through the ATen dispatcher.
// This header is free of libtorch and protobuf types; only reference.cc sees libtorch.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "parity/exporter/program.h"
#include "parity/tensor.h"

namespace parity::verify {

// A value replaced during a run (run_reference's `substitutes`): how far libtorch's own result, computed
// from the same inputs, was from the substitute.
struct Substitution {
  double max_diff = 0;    // largest |libtorch - substitute| over the elements
  int64_t differing = 0;  // elements that differ
  // Where they differ: how far libtorch's unrounded value (x / scale) lies from the rounding tie between the
  // two integers, in steps (the largest over those elements). A float rounding flip needs a near-tie; NaN
  // when the node's unrounded value cannot be recovered.
  double max_tie_distance = 0;
};

struct ReferenceResult {
  std::vector<Tensor> outputs;    // user outputs, in order
  std::vector<Tensor> mutations;  // new values of mutated state, as Program::mutations()
  // FX tensor name -> value (when requested), as the node produced it: a later in-place op on the same
  // tensor (relu_) does not change the recorded value.
  std::map<std::string, Tensor> intermediates;
  std::map<std::string, Substitution> substituted;  // FX tensor name -> its substitution, in a substituted run
  // What the run did that torch's ExportedProgram.module() would not: a runtime assertion on a
  // data-dependent value that failed and was run past (reference_layout.h), one line each.
  std::vector<std::string> notes;
};

// `user_inputs` follow Program::user_input_names(). Throws parity::Error naming the node and ATen op.
// `substitutes` (FX tensor name -> value): each such value, once its node has run, is replaced by the given
// one (same shape and dtype, else an error), so that what follows computes from it.
ReferenceResult run_reference(const pt2::Program& program, const std::vector<Tensor>& user_inputs,
                              bool keep_intermediates = false,
                              const std::map<std::string, Tensor>* substitutes = nullptr);

// The torch version libtorch reports (e.g. "2.13.0").
std::string libtorch_version();

// Loads a shared library that registers operators with libtorch (TORCH_LIBRARY: a case's custom ops,
// case.json "torch_libraries") so that the reference can dispatch them. dlopen(RTLD_NOW | RTLD_GLOBAL),
// never unloaded; loading one twice is harmless. Throws parity::Error (stage "reference") naming the
// file and dlerror()'s text.
void load_torch_library(const std::string& path);

}  // namespace parity::verify
