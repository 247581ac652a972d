// Session: load (protobuf -> own structs), validate, plan, create kernels; run with a per-call frame.
#include "parity/refrt/session.h"

#include <chrono>
#include <filesystem>
#include <set>

#include "kernel.h"
#include "parity/fs.h"
#include "parity/internal/onnx_tensor.h"

namespace parity::refrt {

namespace {

constexpr int kMinOpset = 7;
constexpr int kMaxOpset = 23;

struct PlannedNode {
  NodeDef def;
  std::unique_ptr<Kernel> kernel;
  std::vector<int> inputs;   // value ids; -1 = absent optional input
  std::vector<int> outputs;  // value ids
  std::vector<int> release;  // values whose last use is this node (freed after it runs)
};

ValueInfo value_info(const onnx::ValueInfoProto& vi) {
  ValueInfo info;
  info.name = vi.name();
  if (vi.type().has_tensor_type()) {
    const auto& tt = vi.type().tensor_type();
    info.dtype = static_cast<DType>(tt.elem_type());
    info.has_shape = tt.has_shape();
    for (const auto& d : tt.shape().dim())
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
      out.t = tensor_from_proto(a.t(), origin);
      break;
    case onnx::AttributeProto::FLOATS:
      out.type = Attribute::Type::kFloats;
      out.floats.assign(a.floats().begin(), a.floats().end());
      break;
    case onnx::AttributeProto::INTS:
      out.type = Attribute::Type::kInts;
      out.ints.assign(a.ints().begin(), a.ints().end());
      break;
    default: out.type = Attribute::Type::kOther;
  }
  return out;
}

}  // namespace

struct Session::Impl {
  std::string origin;
  int opset = 0;
  std::vector<ValueInfo> inputs, outputs;
  std::vector<std::string> value_names;       // id -> name
  std::map<std::string, int> value_ids;       // name -> id
  std::vector<std::pair<int, Tensor>> initializers;
  std::vector<int> input_ids, output_ids;
  std::vector<PlannedNode> nodes;             // topological order

  int id_of(const std::string& name) {
    auto [it, inserted] = value_ids.emplace(name, static_cast<int>(value_names.size()));
    if (inserted) value_names.push_back(name);
    return it->second;
  }

  void load(const onnx::ModelProto& model);
};

void Session::Impl::load(const onnx::ModelProto& model) {
  const ErrorContext where{"refrt", origin};
  for (const auto& op : model.opset_import())
    if (op.domain().empty() || op.domain() == "ai.onnx") opset = static_cast<int>(op.version());
  if (opset == 0) throw Error(where, "the model imports no ai.onnx opset");
  if (opset < kMinOpset || opset > kMaxOpset)
    throw Error(where, "opset " + std::to_string(opset) + " is not supported (refrt implements " +
                           std::to_string(kMinOpset) + ".." + std::to_string(kMaxOpset) + ")");
  const onnx::GraphProto& g = model.graph();
  std::set<std::string> defined;
  for (const auto& init : g.initializer()) {
    if (!defined.insert(init.name()).second) throw Error(where, "initializer '" + init.name() + "' is defined twice");
    initializers.emplace_back(id_of(init.name()), tensor_from_proto(init, origin));
  }
  for (const auto& in : g.input()) {
    if (defined.count(in.name())) continue;  // an initializer that is also listed as an input
    defined.insert(in.name());
    inputs.push_back(value_info(in));
    input_ids.push_back(id_of(in.name()));
  }

  // Topological order (Kahn); the file's order is kept where it is already valid.
  const int n = g.node_size();
  std::vector<std::vector<int>> consumers(static_cast<size_t>(n));
  std::vector<int> missing(static_cast<size_t>(n), 0);
  std::map<std::string, int> producer;
  for (int i = 0; i < n; ++i)
    for (const auto& out : g.node(i).output()) {
      if (out.empty()) continue;
      if (defined.count(out) || !producer.emplace(out, i).second)
        throw Error({"refrt", origin, g.node(i).name(), g.node(i).op_type()}, "value '" + out + "' is defined twice");
    }
  for (int i = 0; i < n; ++i) {
    std::set<int> deps;
    for (const auto& in : g.node(i).input()) {
      if (in.empty() || defined.count(in)) continue;
      auto it = producer.find(in);
      if (it == producer.end())
        throw Error({"refrt", origin, g.node(i).name(), g.node(i).op_type()},
                    "input '" + in + "' is not a graph input, an initializer or any node's output");
      deps.insert(it->second);
    }
    missing[static_cast<size_t>(i)] = static_cast<int>(deps.size());
    for (int d : deps) consumers[static_cast<size_t>(d)].push_back(i);
  }
  std::vector<int> ready, order;
  for (int i = n - 1; i >= 0; --i)
    if (missing[static_cast<size_t>(i)] == 0) ready.push_back(i);
  while (!ready.empty()) {
    const int i = ready.back();
    ready.pop_back();
    order.push_back(i);
    for (int c : consumers[static_cast<size_t>(i)])
      if (--missing[static_cast<size_t>(c)] == 0) ready.push_back(c);
  }
  if (static_cast<int>(order.size()) != n) {
    for (int i = 0; i < n; ++i)
      if (missing[static_cast<size_t>(i)] > 0)
        throw Error({"refrt", origin, g.node(i).name(), g.node(i).op_type()}, "the graph has a cycle through this node");
  }

  // Kernels, created once with their attributes.
  for (int i : order) {
    const onnx::NodeProto& p = g.node(i);
    PlannedNode node;
    node.def.name = p.name().empty() ? p.op_type() + "_" + std::to_string(i) : p.name();
    node.def.op_type = p.op_type();
    node.def.domain = p.domain() == "ai.onnx" ? "" : p.domain();
    node.def.opset = opset;
    node.def.inputs.assign(p.input().begin(), p.input().end());
    node.def.outputs.assign(p.output().begin(), p.output().end());
    const ErrorContext node_where{"refrt", origin, node.def.name, node.def.op_type};
    for (const auto& a : p.attribute()) {
      try {
        node.def.attributes[a.name()] = attribute(a, origin);
      } catch (const Error& e) {
        throw e.with_context(node_where);
      }
    }
    const KernelRegistration* reg = find_kernel(node.def.op_type, node.def.domain, opset);
    if (!reg)
      throw Error(node_where, "no refrt kernel for " + (node.def.domain.empty() ? "" : node.def.domain + "::") +
                                  node.def.op_type + " at opset " + std::to_string(opset));
    try {
      node.kernel = reg->factory(node.def);
    } catch (const Error& e) {
      throw e.with_context(node_where);
    }
    for (const auto& in : node.def.inputs) node.inputs.push_back(in.empty() ? -1 : id_of(in));
    for (const auto& out : node.def.outputs) node.outputs.push_back(out.empty() ? -1 : id_of(out));
    nodes.push_back(std::move(node));
  }
  std::set<int> graph_outputs;
  for (const auto& out : g.output()) {
    if (!defined.count(out.name()) && !producer.count(out.name()))
      throw Error(where, "graph output '" + out.name() + "' is never produced");
    outputs.push_back(value_info(out));
    output_ids.push_back(id_of(out.name()));
    graph_outputs.insert(output_ids.back());
  }

  // Memory plan: free every intermediate right after its last consumer.
  std::map<int, size_t> last_use;
  for (size_t k = 0; k < nodes.size(); ++k)
    for (int v : nodes[k].inputs)
      if (v >= 0) last_use[v] = k;
  std::set<int> initializer_ids;
  for (const auto& [id, _] : initializers) initializer_ids.insert(id);
  for (const auto& [v, k] : last_use)
    if (!graph_outputs.count(v) && !initializer_ids.count(v)) nodes[k].release.push_back(v);
}

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

std::unique_ptr<Session> Session::load_bytes(const std::string& bytes, const std::string& origin, SessionOptions) {
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) throw Error({"refrt", origin}, "not a valid ONNX model (protobuf parse failed)");
  if (!model.has_graph()) throw Error({"refrt", origin}, "the model has no graph");
  auto impl = std::make_unique<Impl>();
  impl->origin = origin;
  impl->load(model);
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

std::unique_ptr<Session> Session::load_file(const std::string& path, SessionOptions options) {
  return load_bytes(read_file(path, "refrt"), path, options);
}

const std::vector<ValueInfo>& Session::inputs() const { return impl_->inputs; }
const std::vector<ValueInfo>& Session::outputs() const { return impl_->outputs; }

RunResult Session::run(const std::vector<Tensor>& inputs, const RunOptions& options) const {
  const Impl& s = *impl_;
  const ErrorContext where{"refrt", s.origin};
  if (inputs.size() != s.inputs.size())
    throw Error(where, "the model takes " + std::to_string(s.inputs.size()) + " inputs, " +
                           std::to_string(inputs.size()) + " were given");
  std::vector<Tensor> frame(s.value_names.size());
  for (const auto& [id, t] : s.initializers) frame[static_cast<size_t>(id)] = t;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ValueInfo& info = s.inputs[i];
    const Tensor& t = inputs[i];
    if (info.dtype != DType::kUndefined && t.dtype() != info.dtype)
      throw Error(where, "input '" + info.name + "' must be " + dtype_name(info.dtype) + ", got " + dtype_name(t.dtype()));
    if (info.has_shape) {
      bool ok = info.dims.size() == t.rank();
      for (size_t d = 0; ok && d < info.dims.size(); ++d) ok = info.dims[d].value < 0 || info.dims[d].value == t.dim(d);
      if (!ok) throw Error(where, "input '" + info.name + "' has shape " + shape_str(t.shape()) + ", the model declares another");
    }
    frame[static_cast<size_t>(s.input_ids[i])] = t;
  }
  RunResult result;
  KernelIO io;
  for (const auto& node : s.nodes) {
    io.inputs.clear();
    for (int v : node.inputs) {
      const Tensor* t = v < 0 ? nullptr : &frame[static_cast<size_t>(v)];
      io.inputs.push_back(t && t->defined() ? t : nullptr);
    }
    io.outputs.assign(node.outputs.size(), Tensor());
    const auto start = std::chrono::steady_clock::now();
    try {
      node.kernel->compute(io);
    } catch (const Error& e) {
      throw e.with_context({"refrt", s.origin, node.def.name, node.def.op_type});
    } catch (const std::exception& e) {
      throw Error({"refrt", s.origin, node.def.name, node.def.op_type}, e.what());
    }
    if (options.profile)
      result.timings.push_back({node.def.name, node.def.op_type,
                                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count()});
    for (size_t k = 0; k < node.outputs.size(); ++k)
      if (node.outputs[k] >= 0) frame[static_cast<size_t>(node.outputs[k])] = std::move(io.outputs[k]);
    if (options.keep_intermediates)
      for (size_t k = 0; k < node.outputs.size(); ++k)
        if (node.outputs[k] >= 0) result.intermediates[node.def.outputs[k]] = frame[static_cast<size_t>(node.outputs[k])];
    for (int v : node.release) frame[static_cast<size_t>(v)] = Tensor();
  }
  for (int id : s.output_ids) result.outputs.push_back(frame[static_cast<size_t>(id)]);
  return result;
}

}  // namespace parity::refrt
