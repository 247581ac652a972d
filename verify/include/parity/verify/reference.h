// The libtorch reference executor: runs a PT2 graph node by node through the ATen dispatcher.
// This header is free of libtorch and protobuf types; only reference.cc sees libtorch.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "parity/exporter/program.h"
#include "parity/tensor.h"

namespace parity::verify {

struct ReferenceResult {
  std::vector<Tensor> outputs;                  // user outputs, in order
  std::vector<Tensor> mutations;                // new values of mutated state, as Program::mutations()
  std::map<std::string, Tensor> intermediates;  // FX tensor name -> value (when requested)
};

// `user_inputs` follow Program::user_input_names(). Throws parity::Error naming the node and ATen op.
ReferenceResult run_reference(const pt2::Program& program, const std::vector<Tensor>& user_inputs,
                              bool keep_intermediates = false);

// The torch version libtorch reports (e.g. "2.13.0").
std::string libtorch_version();

// Loads a shared library that registers operators with libtorch (TORCH_LIBRARY: a case's custom ops,
// case.json "torch_libraries") so that the reference can dispatch them. dlopen(RTLD_NOW | RTLD_GLOBAL),
// never unloaded; loading one twice is harmless. Throws parity::Error (stage "reference") naming the
// file and dlerror()'s text.
void load_torch_library(const std::string& path);

}  // namespace parity::verify
