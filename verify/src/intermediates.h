// Per-intermediate comparison of refrt (ONNX values) with libtorch (FX values of the same name) and
// the first divergence: the earliest node in topological order whose value exceeds tolerance.
#pragma once
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "onnx_graph.h"
#include "parity/exporter/program.h"
#include "parity/tensor.h"

namespace parity::verify {

struct IntermediateScan {
  nlohmann::json values = nlohmann::json::array();  // one entry per compared value, topological order
  nlohmann::json first_divergence;                  // null when every compared value is within tolerance
  int64_t first_index = -1;                         // topological index of the diverging node, -1 = none
  int64_t unmatched = 0;                            // FX tensor values without an ONNX value of that name
};

IntermediateScan compare_intermediates(const pt2::Program& program,
                                       const std::map<std::string, OnnxProducer>& producers,
                                       const std::map<std::string, Tensor>& libtorch,
                                       const std::map<std::string, Tensor>& refrt);

// "File "x.py", line 42, in forward\n    code..." -> "x.py:42 in forward: code" (the outermost frame,
// which is the user's line; deeper frames are library code). Empty when there is no trace.
std::string source_of(const std::string& stack_trace);

}  // namespace parity::verify
