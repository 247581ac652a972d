// Internal: conversions between onnx::TensorProto and Tensor. Includes protobuf-generated headers,
// so only .cc files of common/exporter/refrt include it (never verify/, which sees libtorch).
#pragma once
#include <string>

#include "onnx/onnx-ml.pb.h"
#include "parity/tensor.h"

namespace parity {

// Resolves external data of an initializer; returns the bytes (may be a view into a mapped file).
struct ExternalDataResolver {
  virtual ~ExternalDataResolver() = default;
  virtual Tensor resolve(const onnx::TensorProto& proto, DType dtype, const Shape& shape) const = 0;
};

// Validates dtype, dims and payload length against dims x dtype size; `origin` names the source.
Tensor tensor_from_proto(const onnx::TensorProto& proto, const std::string& origin,
                         const ExternalDataResolver* external = nullptr);
// The same, but a raw_data payload of at least `adopt_bytes` is moved out of `proto` into the tensor
// (no copy; `proto` loses its raw_data). For loaders that own the parsed model.
Tensor tensor_from_proto_adopting(onnx::TensorProto& proto, const std::string& origin,
                                  const ExternalDataResolver* external, size_t adopt_bytes);
void tensor_to_proto(const Tensor& t, const std::string& name, onnx::TensorProto* proto);

}  // namespace parity
