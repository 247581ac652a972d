// Internal: writes a ModelProto whose large initializers are still references to tensors (usually views
// of the memory-mapped .pt2), streaming their bytes into the .onnx file (inline raw_data) or into an
// external-data file, never holding the whole model in memory. Includes protobuf headers (exporter .cc only).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "onnx/onnx-ml.pb.h"
#include "parity/tensor.h"

namespace parity::exporter {

// Initializers of at least this many bytes are kept as references while the graph is built (they are
// never small enough for constant folding or CSE, which read at most 1024 elements).
constexpr size_t kDeferredPayloadBytes = 64 * 1024;
// protobuf cannot serialize or parse a message of 2 GiB or more.
constexpr uint64_t kProtobufLimit = 2147483647;

// A pending initializer: dtype and dims set, data to come from payloads[index] at write time.
void set_pending_payload(onnx::TensorProto* proto, size_t index);
std::optional<size_t> pending_payload(const onnx::TensorProto& proto);

struct ModelWriteOptions {
  bool external_data = false;                     // write initializers >= external_threshold to external_data_file
  std::string external_data_file;                 // relative to the .onnx file's folder; default "<onnx name>.data"
  uint64_t external_threshold = 1024;             // bytes; smaller initializers stay inline (onnx's size_threshold)
  uint64_t auto_external_bytes = kProtobufLimit;  // a model larger than this uses external data anyway
};

// The model as one inline protobuf message (no external data). Throws parity::Error when it would not
// fit protobuf's 2 GiB limit. `model` is left as it was.
std::string serialize_model(onnx::ModelProto& model, const std::vector<Tensor>& payloads, const std::string& origin);

// Writes `onnx_path` (and, with external data, its data file) through temporary files renamed into place
// once both are complete; on failure nothing is left behind. Returns true when external data was written.
bool write_model_file(onnx::ModelProto& model, const std::vector<Tensor>& payloads, const std::string& onnx_path,
                      const ModelWriteOptions& options);

}  // namespace parity::exporter
