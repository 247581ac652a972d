// Sequence and optional values: the ONNX types beside tensors that the sequence and optional operators
// (SequenceConstruct, SequenceAt, Optional, ...) and control flow carrying them work on. Tensors stay
// plain parity::Tensor everywhere; a run holds these values in a side frame, allocated only when one
// exists, so models of tensors only run exactly as before. No protobuf types in this header.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "parity/refrt/session.h"
#include "parity/tensor.h"

namespace parity::refrt {

// Immutable once built (shared between the frame, kernels and results by shared_ptr<const Value>).
struct Value {
  ValueKind kind = ValueKind::kSequence;  // never kTensor
  // The elements' dtype. kUndefined only for an empty value whose source did not declare it.
  DType elem_type = DType::kUndefined;
  bool has_element = true;  // optionals: false = empty (None)
  // kSequence: the elements. kOptionalTensor: its one tensor. kOptionalSequence: the sequence's elements.
  std::vector<Tensor> tensors;

  static std::shared_ptr<const Value> sequence(std::vector<Tensor> elements, DType elem_type);
  static std::shared_ptr<const Value> optional_tensor(const Tensor& t);
  static std::shared_ptr<const Value> optional_sequence(const Value& sequence);
  static std::shared_ptr<const Value> empty_optional(ValueKind kind, DType elem_type);

  bool is_optional() const { return kind == ValueKind::kOptionalTensor || kind == ValueKind::kOptionalSequence; }
  // For errors: "a sequence of 3 float32 tensors", "an empty optional sequence of int64", ...
  std::string describe() const;
};

const char* value_kind_name(ValueKind kind);  // "tensor", "sequence", "optional tensor", "optional sequence"

// A graph input or output file of the ONNX backend-test layout: a TensorProto, or for a sequence or
// optional type a SequenceProto / OptionalProto (which one the model's declaration says: `declared`).
struct NamedValue {
  std::string name;
  Tensor tensor;                       // kind kTensor
  std::shared_ptr<const Value> value;  // the other kinds
};
NamedValue read_value_file(const std::string& path, const ValueInfo& declared);
// `<dir>/<prefix>_0.pb, _1.pb, ...` until the first missing index; file i is read as declared[i]
// (a tensor where `declared` has no entry).
std::vector<NamedValue> read_value_dir(const std::string& dir, const std::string& prefix,
                                       const std::vector<ValueInfo>& declared);

}  // namespace parity::refrt
