#include "builder.h"

#include <cstring>

#include "model_writer.h"
#include "parity/error.h"
#include "parity/internal/onnx_tensor.h"

namespace parity::exporter {

std::string GraphBuilder::unique_name(const std::string& base) {
  std::string name = base.empty() ? "v" : base;
  for (int i = 1; names_->used.count(name); ++i) name = base + "_" + std::to_string(i);
  names_->used.insert(name);
  return name;
}

onnx::NodeProto* GraphBuilder::add_node(const std::string& op_type, const std::vector<std::string>& inputs,
                                        const std::vector<std::string>& outputs) {
  onnx::NodeProto* n = graph_->add_node();
  n->set_op_type(op_type);
  // "node_<fx>" for the main node of an FX node, "node_<fx>_<Op>_<k>" for helpers: readable and unique.
  const std::string base = current_fx_.empty() ? op_type : current_fx_;
  const int k = names_->node_counts[base]++;
  n->set_name(k == 0 ? "node_" + base : "node_" + base + "_" + op_type + "_" + std::to_string(k));
  for (const auto& in : inputs) n->add_input(in);
  for (const auto& out : outputs) {
    n->add_output(out);
    names_->used.insert(out);
  }
  for (const auto& [key, value] : current_metadata_) {
    auto* p = n->add_metadata_props();
    p->set_key(key);
    p->set_value(value);
  }
  return n;
}

void GraphBuilder::add_initializer(const std::string& name, const Tensor& t) {
  names_->used.insert(name);
  onnx::TensorProto* proto = graph_->add_initializer();
  if (t.nbytes() < kDeferredPayloadBytes) {
    tensor_to_proto(t, name, proto);
    return;
  }
  proto->set_name(name);
  proto->set_data_type(static_cast<int32_t>(t.dtype()));
  for (int64_t d : t.shape()) proto->add_dims(d);
  set_pending_payload(proto, names_->payloads.size());
  names_->payloads.push_back(t);
}

void GraphBuilder::add_int4_initializer(const std::string& name, const Tensor& values) {
  const bool is_signed = values.dtype() == DType::kInt8;
  if (!is_signed && values.dtype() != DType::kUInt8)
    throw Error({"export", name}, "int4 initializer from " + dtype_name(values.dtype()) + " values");
  const int64_t n = values.numel();
  Tensor packed(DType::kUInt8, {(n + 1) / 2});
  const auto* v = static_cast<const uint8_t*>(values.raw());
  uint8_t* out = packed.data<uint8_t>();
  for (int64_t i = 0; i < n; i += 2) {
    const uint8_t lo = v[i] & 0xF, hi = i + 1 < n ? v[i + 1] & 0xF : 0;
    out[i / 2] = static_cast<uint8_t>(lo | (hi << 4));
  }
  names_->used.insert(name);
  onnx::TensorProto* proto = graph_->add_initializer();
  proto->set_name(name);
  proto->set_data_type(is_signed ? onnx::TensorProto::INT4 : onnx::TensorProto::UINT4);
  for (int64_t d : values.shape()) proto->add_dims(d);
  if (packed.nbytes() < kDeferredPayloadBytes) {
    proto->set_raw_data(static_cast<const char*>(packed.raw()), packed.nbytes());
    return;
  }
  set_pending_payload(proto, names_->payloads.size());
  names_->payloads.push_back(std::move(packed));
}

std::string GraphBuilder::constant_i64(const std::vector<int64_t>& values, bool as_scalar) {
  Tensor t(DType::kInt64, as_scalar ? Shape{} : Shape{static_cast<int64_t>(values.size())});
  if (!values.empty()) std::memcpy(t.mutable_raw(), values.data(), values.size() * sizeof(int64_t));
  const std::string name = unique_name((current_fx_.empty() ? std::string("const") : current_fx_) + "_i64");
  add_initializer(name, t);
  return name;
}

std::string GraphBuilder::constant_scalar(double value, DType dtype) {
  Tensor t(dtype, {});
  switch (dtype) {
    case DType::kFloat32:
      *t.data<float>() = static_cast<float>(value);
      break;
    case DType::kFloat64:
      *t.data<double>() = value;
      break;
    case DType::kInt64:
      *t.data<int64_t>() = static_cast<int64_t>(value);
      break;
    case DType::kInt32:
      *t.data<int32_t>() = static_cast<int32_t>(value);
      break;
    case DType::kBool:
      *t.data<uint8_t>() = value != 0;
      break;
    default: {
      // float16/bfloat16 and narrow ints: make a float32 constant, the caller casts if needed.
      Tensor f(DType::kFloat32, {});
      *f.data<float>() = static_cast<float>(value);
      t = f;
    }
  }
  const std::string name = unique_name((current_fx_.empty() ? std::string("const") : current_fx_) + "_scalar");
  add_initializer(name, t);
  return name;
}

void GraphBuilder::set_current_node(const std::string& fx_name,
                                    std::vector<std::pair<std::string, std::string>> metadata) {
  current_fx_ = fx_name;
  current_metadata_ = std::move(metadata);
}

void set_attr(onnx::NodeProto* node, const std::string& name, int64_t v) {
  auto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void set_attr(onnx::NodeProto* node, const std::string& name, float v) {
  auto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

void set_attr(onnx::NodeProto* node, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

void set_attr(onnx::NodeProto* node, const std::string& name, const std::string& v) {
  auto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

}  // namespace parity::exporter
