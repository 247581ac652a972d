// Reads which ONNX node produces each value of a model's main graph (for naming divergences).
// Internal to verify/; its .cc sees the ONNX protobuf headers and must never see libtorch.
#pragma once
#include <map>
#include <string>

namespace parity::verify {

struct OnnxProducer {
  std::string node, op_type;
};

// value name -> producing node of the main graph. Throws parity::Error naming the file.
std::map<std::string, OnnxProducer> onnx_producers(const std::string& onnx_path);

}  // namespace parity::verify
