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
  std::vector<Tensor> outputs;                 // user outputs, in order
  std::map<std::string, Tensor> intermediates;  // FX tensor name -> value (when requested)
};

// `user_inputs` follow Program::user_input_names(). Throws parity::Error naming the node and ATen op.
ReferenceResult run_reference(const pt2::Program& program, const std::vector<Tensor>& user_inputs,
                              bool keep_intermediates = false);

// The torch version libtorch reports (e.g. "2.13.0").
std::string libtorch_version();

}  // namespace parity::verify
