// Internal: a model as refrt's own structs, parsed from ModelProto (protobuf stays in the .cc files).
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kernel.h"
#include "parity/refrt/session.h"

namespace parity::refrt {

// Oldest ai.onnx opset a model may import. Each node still needs a kernel whose since_version covers
// the model's opset, so an op that changed before the version refrt implements is refused by name
// ("refrt implements it from opset 6") while the ops unchanged since opset 1 (Not, Shape) run.
constexpr int kMinOpset = 1;
constexpr int kMaxOpset = 23;  // newest ai.onnx opset whose changes refrt has reviewed

struct GraphDef {
  std::string name;
  std::vector<ValueInfo> inputs;  // graph inputs that are not initializers, in order
  std::vector<ValueInfo> outputs;
  std::vector<std::pair<std::string, Tensor>> initializers;
  std::vector<NodeDef> nodes;            // file order; NodeDef::opset is its domain's version
  std::vector<std::string> outer_names;  // values read from enclosing graphs (sorted); empty at top level
};

struct ModelDef {
  std::string origin;                 // file or label, for errors
  std::map<std::string, int> opsets;  // domain ("" = ai.onnx) -> imported version
  GraphDef graph;
};

// Parses `size` bytes at `data` (a serialized ModelProto) and checks what a single pass can: opsets,
// unique initializer/input names, tensor types of inputs, initializer payloads. External data is
// resolved under `base_dir`. Throws parity::Error (stage "refrt", file = origin). When `data` lies in a
// read-only MappedFile, the parser hands the pages it has passed back to the page cache, so a mapped
// model is never resident twice (its bytes and the parsed tensors).
ModelDef parse_model(const void* data, size_t size, const std::string& origin, const std::string& base_dir);

}  // namespace parity::refrt
