// ModelProto -> ModelDef. The only place (with external_data.cc) where refrt sees protobuf.
#include <set>

#include "external_data.h"
#include "model_def.h"
#include "parity/internal/onnx_tensor.h"

namespace parity::refrt {
namespace {

ValueInfo value_info(const onnx::ValueInfoProto& vi, bool require_type, const ErrorContext& where) {
  ValueInfo info;
  info.name = vi.name();
  const std::string what = "graph value '" + vi.name() + "'";
  if (!vi.has_type()) {
    if (require_type) throw Error(where, what + " has no type");
    return info;
  }
  if (!vi.type().has_tensor_type())
    throw Error(where, what + " is not a tensor (sequence, map, optional and sparse values are not implemented)",
                ErrorKind::kUnsupported);
  const auto& tt = vi.type().tensor_type();
  if (!dtype_is_supported(tt.elem_type()) || dtype_size(static_cast<DType>(tt.elem_type())) == 0) {
    if (require_type || tt.elem_type() != 0)
      throw Error(where, what + " has element type " + std::to_string(tt.elem_type()) + ", which refrt does not implement",
                  ErrorKind::kUnsupported);
  } else {
    info.dtype = static_cast<DType>(tt.elem_type());
  }
  info.has_shape = tt.has_shape();
  for (const auto& d : tt.shape().dim()) {
    if (d.has_dim_value() && d.dim_value() < 0)
      throw Error(where, what + " declares a negative dimension " + std::to_string(d.dim_value()));
    info.dims.push_back(d.has_dim_value() ? DimValue{d.dim_value(), ""} : DimValue{-1, d.dim_param()});
  }
  return info;
}

Attribute attribute(const onnx::AttributeProto& a, const std::string& origin) {
  Attribute out;
  switch (a.type()) {
    case onnx::AttributeProto::FLOAT: out.type = Attribute::Type::kFloat; out.f = a.f(); break;
    case onnx::AttributeProto::INT: out.type = Attribute::Type::kInt; out.i = a.i(); break;
    case onnx::AttributeProto::STRING: out.type = Attribute::Type::kString; out.s = a.s(); break;
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
    case onnx::AttributeProto::GRAPH: out.type = Attribute::Type::kGraph; break;  // control flow: later
    default: out.type = Attribute::Type::kOther;
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
    throw Error(where, "opset " + std::to_string(opset) + " is newer than implemented (refrt implements ai.onnx opsets " +
                           std::to_string(kMinOpset) + ".." + std::to_string(kMaxOpset) + ")",
                ErrorKind::kUnsupported);
  if (opset < kMinOpset)
    throw Error(where, "opset " + std::to_string(opset) + " is older than implemented (refrt implements ai.onnx opsets " +
                           std::to_string(kMinOpset) + ".." + std::to_string(kMaxOpset) + ")",
                ErrorKind::kUnsupported);
}

NodeDef node_def(const onnx::NodeProto& p, int index, const ModelDef& def) {
  NodeDef node;
  node.name = p.name().empty() ? p.op_type() + "_" + std::to_string(index) : p.name();
  node.op_type = p.op_type();
  node.domain = domain_name(p.domain());
  const ErrorContext where{"refrt", def.origin, node.name, node.op_type};
  auto opset = def.opsets.find(node.domain);
  if (opset == def.opsets.end())
    throw Error(where, "domain '" + node.domain + "' is not in the model's opset_import");
  node.opset = opset->second;
  node.inputs.assign(p.input().begin(), p.input().end());
  node.outputs.assign(p.output().begin(), p.output().end());
  for (const auto& a : p.attribute()) {
    if (a.name().empty()) throw Error(where, "an attribute has no name");
    try {
      if (!node.attributes.emplace(a.name(), attribute(a, def.origin)).second)
        throw Error(where, "attribute '" + a.name() + "' is given twice");
    } catch (const Error& e) {
      throw as_refrt_error(e, where);
    }
  }
  return node;
}

}  // namespace

ModelDef parse_model(const std::string& bytes, const std::string& origin, const std::string& base_dir) {
  const ErrorContext where{"refrt", origin};
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) throw Error(where, "not a valid ONNX model (protobuf parse failed)");
  if (!model.has_graph()) throw Error(where, "the model has no graph");
  ModelDef def;
  def.origin = origin;
  parse_opsets(model, def, where);
  const onnx::GraphProto& g = model.graph();
  if (g.sparse_initializer_size() > 0)
    throw Error(where, "sparse initializers are not implemented", ErrorKind::kUnsupported);

  const ModelDirExternalData external(base_dir, origin);
  std::set<std::string> names;
  for (const auto& init : g.initializer()) {
    if (init.name().empty()) throw Error(where, "an initializer has no name");
    if (!names.insert(init.name()).second) throw Error(where, "initializer '" + init.name() + "' is defined twice");
    try {
      def.initializers.emplace_back(init.name(), frozen(tensor_from_proto(init, origin, &external)));
    } catch (const Error& e) {
      throw as_refrt_error(e, where);
    }
  }
  std::set<std::string> input_names;
  for (const auto& in : g.input()) {
    if (in.name().empty()) throw Error(where, "a graph input has no name");
    if (!input_names.insert(in.name()).second) throw Error(where, "graph input '" + in.name() + "' is listed twice");
    if (names.count(in.name())) continue;  // an initializer also listed as an input (IR < 4 style)
    def.inputs.push_back(value_info(in, /*require_type=*/true, where));
  }
  for (const auto& out : g.output()) {
    if (out.name().empty()) throw Error(where, "a graph output has no name");
    def.outputs.push_back(value_info(out, /*require_type=*/false, where));
  }
  for (int i = 0; i < g.node_size(); ++i) def.nodes.push_back(node_def(g.node(i), i, def));
  return def;
}

}  // namespace parity::refrt
