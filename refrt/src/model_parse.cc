// ModelProto -> ModelDef. The only place (with external_data.cc) where refrt sees protobuf.
#include <algorithm>
#include <set>

#include <google/protobuf/io/zero_copy_stream.h>

#include "external_data.h"
#include "model_def.h"
#include "parity/fs.h"
#include "parity/internal/onnx_tensor.h"

namespace parity::refrt {
namespace {

// The tensor type inside `type`: itself, or the elements of a sequence / optional of tensors (or of
// an optional sequence); sets info.kind. nullptr when `type` is none of these (maps, sparse tensors,
// nested sequences): refrt does not implement them.
const onnx::TypeProto_Tensor* tensor_type_of(const onnx::TypeProto& type, ValueInfo& info) {
  if (type.has_tensor_type()) return &type.tensor_type();
  if (type.has_sequence_type()) {
    const auto& elem = type.sequence_type().elem_type();
    info.kind = ValueKind::kSequence;
    return elem.has_tensor_type() ? &elem.tensor_type() : nullptr;
  }
  if (type.has_optional_type()) {
    const auto& elem = type.optional_type().elem_type();
    if (elem.has_tensor_type()) {
      info.kind = ValueKind::kOptionalTensor;
      return &elem.tensor_type();
    }
    info.kind = ValueKind::kOptionalSequence;
    if (elem.has_sequence_type() && elem.sequence_type().elem_type().has_tensor_type())
      return &elem.sequence_type().elem_type().tensor_type();
  }
  return nullptr;
}

ValueInfo value_info(const onnx::ValueInfoProto& vi, bool require_type, const ErrorContext& where) {
  ValueInfo info;
  info.name = vi.name();
  const std::string what = "graph value '" + vi.name() + "'";
  if (!vi.has_type()) {
    if (require_type) throw Error(where, what + " has no type");
    return info;
  }
  const onnx::TypeProto_Tensor* tensor_type = tensor_type_of(vi.type(), info);
  if (!tensor_type)
    throw Error(where,
                what +
                    " is neither a tensor nor a sequence or optional of tensors (maps, sparse tensors "
                    "and nested sequences are not implemented)",
                ErrorKind::kUnsupported);
  const auto& tt = *tensor_type;
  if (!dtype_is_supported(tt.elem_type()) || dtype_size(static_cast<DType>(tt.elem_type())) == 0) {
    if (require_type || tt.elem_type() != 0)
      throw Error(where,
                  what + " has element type " + std::to_string(tt.elem_type()) + ", which refrt does not implement",
                  ErrorKind::kUnsupported);
  } else {
    info.dtype = static_cast<DType>(tt.elem_type());
  }
  if (info.kind != ValueKind::kTensor) return info;  // elements of a sequence may differ in shape
  info.has_shape = tt.has_shape();
  for (const auto& d : tt.shape().dim()) {
    if (d.has_dim_value() && d.dim_value() < 0)
      throw Error(where, what + " declares a negative dimension " + std::to_string(d.dim_value()));
    info.dims.push_back(d.has_dim_value() ? DimValue{d.dim_value(), ""} : DimValue{-1, d.dim_param()});
  }
  return info;
}

GraphDef parse_graph(const onnx::GraphProto& g, const ModelDef& def, const ExternalDataResolver* external,
                     bool top_level, onnx::GraphProto* owned = nullptr);

Attribute attribute(const onnx::AttributeProto& a, const ModelDef& def, const ExternalDataResolver* external) {
  const std::string& origin = def.origin;
  Attribute out;
  switch (a.type()) {
    case onnx::AttributeProto::FLOAT:
      out.type = Attribute::Type::kFloat;
      out.f = a.f();
      break;
    case onnx::AttributeProto::INT:
      out.type = Attribute::Type::kInt;
      out.i = a.i();
      break;
    case onnx::AttributeProto::STRING:
      out.type = Attribute::Type::kString;
      out.s = a.s();
      break;
    case onnx::AttributeProto::TENSOR:
      out.type = Attribute::Type::kTensor;
      out.t = frozen(tensor_from_proto(a.t(), origin));
      break;
    case onnx::AttributeProto::FLOATS:
      out.type = Attribute::Type::kFloats;
      out.floats.assign(a.floats().begin(), a.floats().end());
      break;
    case onnx::AttributeProto::INTS:
      out.type = Attribute::Type::kInts;
      out.ints.assign(a.ints().begin(), a.ints().end());
      break;
    case onnx::AttributeProto::STRINGS:
      out.type = Attribute::Type::kStrings;
      out.strings.assign(a.strings().begin(), a.strings().end());
      break;
    case onnx::AttributeProto::GRAPH:
      out.type = Attribute::Type::kGraph;
      out.g = std::make_shared<const GraphDef>(parse_graph(a.g(), def, external, /*top_level=*/false));
      break;
    case onnx::AttributeProto::TYPE_PROTO: {
      out.type = Attribute::Type::kTypeProto;
      onnx::ValueInfoProto vi;
      *vi.mutable_type() = a.tp();
      out.tp = value_info(vi, /*require_type=*/true, {"refrt", origin});
      break;
    }
    default:
      out.type = Attribute::Type::kOther;
  }
  return out;
}

std::string domain_name(const std::string& domain) { return domain == "ai.onnx" ? "" : domain; }

void parse_opsets(const onnx::ModelProto& model, ModelDef& def, const ErrorContext& where) {
  for (const auto& op : model.opset_import()) {
    const std::string domain = domain_name(op.domain());
    if (op.version() < 1 || op.version() > 1000000)
      throw Error(where, "opset_import of domain '" + op.domain() + "' has version " + std::to_string(op.version()));
    if (!def.opsets.emplace(domain, static_cast<int>(op.version())).second)
      throw Error(where, "opset_import lists domain '" + (domain.empty() ? "ai.onnx" : domain) + "' twice");
  }
  auto it = def.opsets.find("");
  if (it == def.opsets.end()) throw Error(where, "the model imports no ai.onnx opset");
  const int opset = it->second;
  if (opset > kMaxOpset)
    throw Error(where,
                "opset " + std::to_string(opset) + " is newer than implemented (refrt implements ai.onnx opsets " +
                    std::to_string(kMinOpset) + ".." + std::to_string(kMaxOpset) + ")",
                ErrorKind::kUnsupported);
  if (opset < kMinOpset)
    throw Error(where,
                "opset " + std::to_string(opset) + " is older than implemented (refrt implements ai.onnx opsets " +
                    std::to_string(kMinOpset) + ".." + std::to_string(kMaxOpset) + ")",
                ErrorKind::kUnsupported);
}

NodeDef node_def(const onnx::NodeProto& p, int index, const ModelDef& def, const ExternalDataResolver* external) {
  NodeDef node;
  node.name = p.name().empty() ? p.op_type() + "_" + std::to_string(index) : p.name();
  node.op_type = p.op_type();
  node.domain = domain_name(p.domain());
  const ErrorContext where{"refrt", def.origin, node.name, node.op_type};
  auto opset = def.opsets.find(node.domain);
  if (opset == def.opsets.end()) throw Error(where, "domain '" + node.domain + "' is not in the model's opset_import");
  node.opset = opset->second;
  node.origin = def.origin;
  node.inputs.assign(p.input().begin(), p.input().end());
  node.outputs.assign(p.output().begin(), p.output().end());
  // Every operator has at least one output (kernels write output 0 unconditionally).
  if (node.outputs.empty()) throw Error(where, "the node has no outputs");
  std::set<std::string> implicit;
  for (const auto& a : p.attribute()) {
    if (a.name().empty()) throw Error(where, "an attribute has no name");
    try {
      auto [it, fresh] = node.attributes.emplace(a.name(), attribute(a, def, external));
      if (!fresh) throw Error(where, "attribute '" + a.name() + "' is given twice");
      if (it->second.g) implicit.insert(it->second.g->outer_names.begin(), it->second.g->outer_names.end());
    } catch (const Error& e) {
      throw as_refrt_error(e, where);
    }
  }
  node.implicit_inputs.assign(implicit.begin(), implicit.end());
  return node;
}

// Inline initializers of at least this size are moved out of the parsed model (`owned`), not copied.
constexpr size_t kAdoptBytes = 64 * 1024;

GraphDef parse_graph(const onnx::GraphProto& g, const ModelDef& def, const ExternalDataResolver* external,
                     bool top_level, onnx::GraphProto* owned) {
  const ErrorContext where{"refrt", def.origin};
  const std::string scope = top_level ? "" : " (in subgraph '" + g.name() + "')";
  GraphDef graph;
  graph.name = g.name();
  if (g.sparse_initializer_size() > 0)
    throw Error(where, "sparse initializers are not implemented", ErrorKind::kUnsupported);
  std::set<std::string> defined;
  for (int i = 0; i < g.initializer_size(); ++i) {
    const onnx::TensorProto& init = g.initializer(i);
    if (init.name().empty()) throw Error(where, "an initializer has no name" + scope);
    if (!defined.insert(init.name()).second)
      throw Error(where, "initializer '" + init.name() + "' is defined twice" + scope);
    try {
      const std::string name = init.name();
      graph.initializers.emplace_back(name, frozen(owned ? tensor_from_proto_adopting(*owned->mutable_initializer(i),
                                                                                      def.origin, external, kAdoptBytes)
                                                         : tensor_from_proto(init, def.origin, external)));
    } catch (const Error& e) {
      throw as_refrt_error(e, where);
    }
  }
  std::set<std::string> input_names;
  for (const auto& in : g.input()) {
    if (in.name().empty()) throw Error(where, "a graph input has no name" + scope);
    if (!input_names.insert(in.name()).second)
      throw Error(where, "graph input '" + in.name() + "' is listed twice" + scope);
    if (defined.count(in.name())) continue;  // an initializer also listed as an input (IR < 4 style)
    defined.insert(in.name());
    graph.inputs.push_back(value_info(in, /*require_type=*/top_level, where));
  }
  for (const auto& out : g.output()) {
    if (out.name().empty()) throw Error(where, "a graph output has no name" + scope);
    graph.outputs.push_back(value_info(out, /*require_type=*/false, where));
  }
  for (int i = 0; i < g.node_size(); ++i) graph.nodes.push_back(node_def(g.node(i), i, def, external));
  if (!top_level) {  // free names: read here, defined in an enclosing graph
    for (const auto& n : graph.nodes)
      for (const auto& out : n.outputs) defined.insert(out);
    std::set<std::string> outer;
    auto read = [&](const std::string& name) {
      if (!name.empty() && !defined.count(name)) outer.insert(name);
    };
    for (const auto& n : graph.nodes) {
      for (const auto& in : n.inputs) read(in);
      for (const auto& in : n.implicit_inputs) read(in);
    }
    for (const auto& out : graph.outputs) read(out.name);
    graph.outer_names.assign(outer.begin(), outer.end());
  }
  return graph;
}

// The model's bytes in chunks, giving back the pages of every chunk the parser has moved past (a no-op
// unless the bytes are a read-only mapping). Protobuf copies what it keeps, and once it asks for the next
// chunk it no longer reads the previous ones, so those pages can go: the file is read once, from the page
// cache, and never held resident next to the parsed model.
class ReleasingInput : public google::protobuf::io::ZeroCopyInputStream {
 public:
  ReleasingInput(const void* data, size_t size) : data_(static_cast<const unsigned char*>(data)), size_(size) {}
  bool Next(const void** chunk, int* n) override {
    if (pos_ >= size_) return false;
    const size_t behind = pos_ > kChunk ? pos_ - kChunk : 0;  // one chunk of margin for BackUp
    if (behind > released_) {
      MappedFile::release_pages(data_ + released_, behind - released_);
      released_ = behind;
    }
    const size_t len = std::min(kChunk, size_ - pos_);
    *chunk = data_ + pos_;
    *n = static_cast<int>(len);
    pos_ += len;
    return true;
  }
  void BackUp(int count) override { pos_ -= static_cast<size_t>(count); }
  bool Skip(int count) override {
    const size_t step = std::min(static_cast<size_t>(count), size_ - pos_);
    pos_ += step;
    return step == static_cast<size_t>(count);
  }
  int64_t ByteCount() const override { return static_cast<int64_t>(pos_); }

 private:
  static constexpr size_t kChunk = size_t{16} << 20;
  const unsigned char* data_;
  size_t size_, pos_ = 0, released_ = 0;
};

}  // namespace

ModelDef parse_model(const void* data, size_t size, const std::string& origin, const std::string& base_dir) {
  const ErrorContext where{"refrt", origin};
  onnx::ModelProto model;
  ReleasingInput input(data, size);
  if (size > static_cast<size_t>(INT32_MAX) || !model.ParseFromZeroCopyStream(&input))
    throw Error(where, "not a valid ONNX model (protobuf parse failed)");
  if (!model.has_graph()) throw Error(where, "the model has no graph");
  ModelDef def;
  def.origin = origin;
  parse_opsets(model, def, where);
  const ModelDirExternalData external(base_dir, origin);
  def.graph = parse_graph(model.graph(), def, &external, /*top_level=*/true, model.mutable_graph());
  return def;
}

}  // namespace parity::refrt
