// Tensors <-> serialized ONNX TensorProto (the backend-test layout: test_data_set_<k>/input_<i>.pb).
// No protobuf types here: callers stay free of protobuf headers.
#pragma once
#include <string>
#include <vector>

#include "parity/tensor.h"

namespace parity {

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

// Parses a serialized TensorProto; `origin` names the source in errors.
NamedTensor parse_tensor_proto(const std::string& bytes, const std::string& origin);
NamedTensor read_tensor_file(const std::string& path);
std::string serialize_tensor_proto(const Tensor& t, const std::string& name);
void write_tensor_file(const std::string& path, const Tensor& t, const std::string& name);

// Reads `<dir>/<prefix>_0.pb, _1.pb, ...` until the first missing index.
std::vector<NamedTensor> read_tensor_dir(const std::string& dir, const std::string& prefix);
// Sorted list of `test_data_set_<k>` subdirectories of `case_dir`.
std::vector<std::string> list_test_data_sets(const std::string& case_dir);

}  // namespace parity
