// Internal: builds the ONNX GraphProto. Includes protobuf-generated headers (exporter .cc files only).
#pragma once
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "onnx/onnx-ml.pb.h"
#include "parity/tensor.h"

namespace parity::exporter {

class GraphBuilder {
 public:
  explicit GraphBuilder(onnx::GraphProto* graph) : graph_(graph), names_(std::make_shared<Names>()) {}
  // A builder for a subgraph (If branch, Loop/Scan body) of `parent`: value and node names stay unique
  // across the whole model, as ONNX requires of nested scopes.
  GraphBuilder(onnx::GraphProto* graph, const GraphBuilder& parent) : graph_(graph), names_(parent.names_) {}

  // A value name not used yet, derived from `base`.
  std::string unique_name(const std::string& base);
  void reserve_name(const std::string& name) { names_->used.insert(name); }
  bool is_used(const std::string& name) const { return names_->used.count(name) != 0; }

  // Appends a node; its name derives from the current FX node, and it carries that node's metadata.
  onnx::NodeProto* add_node(const std::string& op_type, const std::vector<std::string>& inputs,
                            const std::vector<std::string>& outputs);
  // Adds an initializer named exactly `name` (the caller made it unique). Tensors of at least
  // kDeferredPayloadBytes are not copied: the initializer refers to them (model_writer.h) until written.
  void add_initializer(const std::string& name, const Tensor& t);
  // An INT4 / UINT4 initializer (ONNX TensorProto 22 / 21) holding `values` (int8 / uint8, each within the
  // 4-bit range), packed two per byte, the first element in the low nibble.
  void add_int4_initializer(const std::string& name, const Tensor& values);
  // The tensors that pending initializers refer to (shared by the whole model's builders).
  const std::vector<Tensor>& payloads() const { return names_->payloads; }
  // A small int64 / floating constant as an initializer with a fresh name.
  std::string constant_i64(const std::vector<int64_t>& values, bool as_scalar = false);
  std::string constant_scalar(double value, DType dtype);

  // Set by the driver around each FX node's translation.
  void set_current_node(const std::string& fx_name, std::vector<std::pair<std::string, std::string>> metadata);

  onnx::GraphProto* proto() { return graph_; }
  // Custom-op domains used anywhere in the model (root graph or subgraphs): each needs an opset_import.
  void use_domain(const std::string& domain) { names_->domains.insert(domain); }
  const std::set<std::string>& used_domains() const { return names_->domains; }

 private:
  struct Names {
    std::set<std::string> used;
    std::map<std::string, int> node_counts;
    std::set<std::string> domains;
    std::vector<Tensor> payloads;
  };
  onnx::GraphProto* graph_;
  std::shared_ptr<Names> names_;
  std::string current_fx_;
  std::vector<std::pair<std::string, std::string>> current_metadata_;
};

void set_attr(onnx::NodeProto* node, const std::string& name, int64_t v);
void set_attr(onnx::NodeProto* node, const std::string& name, float v);
void set_attr(onnx::NodeProto* node, const std::string& name, const std::vector<int64_t>& v);
void set_attr(onnx::NodeProto* node, const std::string& name, const std::string& v);

}  // namespace parity::exporter
