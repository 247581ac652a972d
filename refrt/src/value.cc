// Sequence and optional values, and their backend-test files (SequenceProto / OptionalProto).
#include "parity/refrt/value.h"

#include <filesystem>

#include "parity/error.h"
#include "parity/fs.h"
#include "onnx/onnx-data.pb.h"
#include "parity/internal/onnx_tensor.h"
#include "parity/tensor_io.h"

namespace parity::refrt {

std::shared_ptr<const Value> Value::sequence(std::vector<Tensor> elements, DType elem_type) {
  auto v = std::make_shared<Value>();
  v->kind = ValueKind::kSequence;
  v->elem_type = elem_type;
  v->tensors = std::move(elements);
  return v;
}

std::shared_ptr<const Value> Value::optional_tensor(const Tensor& t) {
  auto v = std::make_shared<Value>();
  v->kind = ValueKind::kOptionalTensor;
  v->elem_type = t.dtype();
  v->tensors = {t};
  return v;
}

std::shared_ptr<const Value> Value::optional_sequence(const Value& sequence) {
  auto v = std::make_shared<Value>(sequence);
  v->kind = ValueKind::kOptionalSequence;
  v->has_element = true;
  return v;
}

std::shared_ptr<const Value> Value::empty_optional(ValueKind kind, DType elem_type) {
  auto v = std::make_shared<Value>();
  v->kind = kind;
  v->elem_type = elem_type;
  v->has_element = false;
  return v;
}

const char* value_kind_name(ValueKind kind) {
  switch (kind) {
    case ValueKind::kTensor:
      return "tensor";
    case ValueKind::kSequence:
      return "sequence";
    case ValueKind::kOptionalTensor:
      return "optional tensor";
    case ValueKind::kOptionalSequence:
      return "optional sequence";
  }
  return "?";
}

std::string Value::describe() const {
  const std::string dtype = elem_type == DType::kUndefined ? "unknown dtype" : dtype_name(elem_type);
  if (is_optional() && !has_element) return std::string("an empty ") + value_kind_name(kind) + " of " + dtype;
  if (kind == ValueKind::kOptionalTensor) return "an optional holding a " + dtype + " tensor";
  const std::string n = std::to_string(tensors.size());
  return std::string(kind == ValueKind::kSequence ? "a sequence" : "an optional holding a sequence") + " of " + n +
         " " + dtype + " tensors";
}

namespace {

// The elements of a SequenceProto of tensors; all of one dtype (an ONNX sequence is homogeneous).
std::vector<Tensor> sequence_elements(const onnx::SequenceProto& p, const std::string& origin, DType& elem_type) {
  if (p.elem_type() != onnx::SequenceProto::TENSOR && !(p.elem_type() == 0 && p.tensor_values_size() == 0))
    throw Error(
        {"refrt", origin},
        "a sequence of element type " + std::to_string(p.elem_type()) + " (refrt implements sequences of tensors)",
        ErrorKind::kUnsupported);
  std::vector<Tensor> out;
  for (const auto& t : p.tensor_values()) {
    out.push_back(tensor_from_proto(t, origin));
    if (elem_type == DType::kUndefined) elem_type = out.back().dtype();
    if (out.back().dtype() != elem_type)
      throw Error({"refrt", origin}, "sequence element #" + std::to_string(out.size() - 1) + " is " +
                                         dtype_name(out.back().dtype()) + ", the sequence holds " +
                                         dtype_name(elem_type));
  }
  return out;
}

std::shared_ptr<const Value> value_from_bytes(const std::string& bytes, const ValueInfo& declared,
                                              const std::string& origin) {
  const ErrorContext where{"refrt", origin};
  DType elem = declared.dtype;
  if (declared.kind == ValueKind::kSequence) {
    onnx::SequenceProto p;
    if (!p.ParseFromString(bytes)) throw Error(where, "not a valid SequenceProto");
    auto elements = sequence_elements(p, origin, elem);
    return Value::sequence(std::move(elements), elem);
  }
  onnx::OptionalProto p;
  if (!p.ParseFromString(bytes)) throw Error(where, "not a valid OptionalProto");
  if (declared.kind == ValueKind::kOptionalTensor) {
    if (p.has_sequence_value())
      throw Error(where, "the optional holds a sequence, the model declares an optional tensor");
    if (!p.has_tensor_value()) return Value::empty_optional(declared.kind, elem);
    return Value::optional_tensor(tensor_from_proto(p.tensor_value(), origin));
  }
  if (p.has_tensor_value()) throw Error(where, "the optional holds a tensor, the model declares an optional sequence");
  if (!p.has_sequence_value()) return Value::empty_optional(declared.kind, elem);
  auto elements = sequence_elements(p.sequence_value(), origin, elem);
  return Value::optional_sequence(*Value::sequence(std::move(elements), elem));
}

}  // namespace

NamedValue read_value_file(const std::string& path, const ValueInfo& declared) {
  if (declared.kind == ValueKind::kTensor) {
    NamedTensor t = read_tensor_file(path);
    return {t.name, std::move(t.tensor), nullptr};
  }
  return {declared.name, Tensor(), value_from_bytes(read_file(path, "refrt"), declared, path)};
}

std::vector<NamedValue> read_value_dir(const std::string& dir, const std::string& prefix,
                                       const std::vector<ValueInfo>& declared) {
  std::vector<NamedValue> out;
  for (size_t i = 0;; ++i) {
    const auto path = std::filesystem::path(dir) / (prefix + "_" + std::to_string(i) + ".pb");
    if (!std::filesystem::exists(path)) break;
    out.push_back(read_value_file(path.string(), i < declared.size() ? declared[i] : ValueInfo{}));
  }
  return out;
}

}  // namespace parity::refrt
