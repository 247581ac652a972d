#include "onnx_graph.h"

#include "onnx/onnx-ml.pb.h"
#include "parity/error.h"
#include "parity/fs.h"

namespace parity::verify {

std::map<std::string, OnnxProducer> onnx_producers(const std::string& onnx_path) {
  onnx::ModelProto model;
  if (!model.ParseFromString(read_file(onnx_path, "verify")))
    throw Error({"verify", onnx_path}, "not an ONNX model (protobuf parse failed)", ErrorKind::kInput);
  std::map<std::string, OnnxProducer> out;
  for (const auto& node : model.graph().node())
    for (const auto& value : node.output())
      if (!value.empty()) out[value] = {node.name(), node.op_type()};
  return out;
}

}  // namespace parity::verify
