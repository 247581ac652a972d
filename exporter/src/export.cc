// The export driver: PT2 program -> ONNX ModelProto.
#include "parity/exporter/export.h"

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "builder.h"
#include "model_writer.h"
#include "driver.h"
#include "parity/error.h"
#include "parity/exporter/complex_dtype.h"
#include "parity/fs.h"
#include "passes.h"
#include "plugins.h"
#include "translate.h"

namespace parity::exporter {

namespace {

constexpr const char* kProducerVersion = "0.1.0";

// ONNX IR version that a given opset needs (metadata_props on nodes needs IR >= 10).
int64_t ir_version_for(int opset) { return opset >= 23 ? 11 : 10; }

std::string dim_text(const pt2::SymDim& d, const std::map<std::string, std::string>& names) {
  // Replace each symbol token of the expression with the user's Dim name when known.
  std::string out, token;
  auto flush = [&] {
    if (token.empty()) return;
    auto it = names.find(token);
    out += it == names.end() ? token : it->second;
    token.clear();
  };
  for (char c : d.expr) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      token += c;
    } else {
      flush();
      out += c;
    }
  }
  flush();
  return out;
}

void set_value_info(onnx::ValueInfoProto* vi, const std::string& name, const pt2::TensorMeta& meta,
                    const std::map<std::string, std::string>& dim_names) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  const bool complex = is_complex(meta);  // the (real, imaginary) pair layout: one more dim of 2
  tt->set_elem_type(static_cast<int32_t>(complex ? complex_part_dtype(meta) : meta.dtype));
  auto* shape = tt->mutable_shape();
  for (const auto& d : meta.sizes) {
    auto* dim = shape->add_dim();
    if (d.value)
      dim->set_dim_value(*d.value);
    else
      dim->set_dim_param(dim_text(d, dim_names));
  }
  if (complex) shape->add_dim()->set_dim_value(2);
}

// A complex graph input or output is its pair layout (docs/complex.md): the value info says so in its
// doc_string, and the model's metadata lists it (see add_complex_metadata), so that a runtime or the
// verifier can turn the pairs back into complex numbers.
void note_complex_io(const pt2::TensorMeta& meta, onnx::ValueInfoProto* vi,
                     std::vector<std::pair<std::string, std::string>>& complex_io) {
  if (!is_complex(meta)) return;
  const std::string dtype = pt2::complex_dtype_name(meta.torch_dtype);
  vi->set_doc_string(dtype + " as (real, imaginary) pairs in the last dim");
  complex_io.emplace_back(vi->name(), dtype);
}

}  // namespace

namespace {

// One export in progress: the ONNX graph being built and the FX -> ONNX value names.
struct ModelBuild {
  const pt2::Program& program;
  const ExportOptions& options;
  onnx::GraphProto* g;
  GraphBuilder graph;
  ErrorContext where;
  std::map<std::string, std::string> values;  // FX value name -> ONNX value name
  std::set<std::string> output_names, input_like;
  // The complex graph inputs and outputs, (ONNX name, torch dtype name), in graph order.
  std::vector<std::pair<std::string, std::string>> complex_inputs, complex_outputs;

  ModelBuild(const pt2::Program& p, const ExportOptions& o, onnx::GraphProto* graph_proto)
      : program(p), options(o), g(graph_proto), graph(graph_proto), where{"export", p.archive_path} {}
};

void start_model(const ModelBuild& b, onnx::ModelProto& model) {
  if (b.options.opset < kMinOpset || b.options.opset > kMaxOpset)
    throw Error(b.where, "opset " + std::to_string(b.options.opset) + " is outside the supported range " +
                             std::to_string(kMinOpset) + ".." + std::to_string(kMaxOpset));
  model.set_ir_version(ir_version_for(b.options.opset));
  model.set_producer_name("parity");
  model.set_producer_version(kProducerVersion);
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(b.options.opset);
  b.g->set_name("main_graph");
}

// A user input: a tensor becomes a graph input; a constant was baked into the graph by torch.export.
void add_user_input(ModelBuild& b, const pt2::InputSpec& spec, size_t& user_index) {
  using K = pt2::ArgKind;
  if (spec.arg.is(K::as_none) || spec.arg.is(K::as_int) || spec.arg.is(K::as_float) || spec.arg.is(K::as_bool) ||
      spec.arg.is(K::as_string))
    return;
  if (!spec.arg.is(K::as_tensor))
    throw Error(b.where, "user input of kind " + std::string(spec.arg.kind_name()) + " is not supported yet");
  const std::string fx = spec.arg.tensor_name();
  const std::string name = user_index < b.options.input_names.size() ? b.options.input_names[user_index] : fx;
  ++user_index;
  b.graph.reserve_name(name);
  b.values[fx] = name;
  auto* vi = b.g->add_input();
  set_value_info(vi, name, b.program.graph.meta(fx, fx), b.program.dim_names);
  note_complex_io(b.program.graph.meta(fx, fx), vi, b.complex_inputs);
}

// Inputs: user tensors become graph inputs; parameters, buffers and constants become initializers, one
// per stored tensor (tied weights, a constant lifted twice).
void add_inputs(ModelBuild& b) {
  using Kind = pt2::InputSpec::Kind;
  size_t user_index = 0;
  std::map<const void*, std::pair<std::string, Tensor>> initializer_of;  // stored bytes -> initializer
  for (const auto& spec : b.program.input_specs) {
    if (spec.kind == Kind::kUserInput) {
      add_user_input(b, spec, user_index);
    } else if (spec.kind == Kind::kParameter || spec.kind == Kind::kBuffer || spec.kind == Kind::kTensorConstant) {
      const std::string& fx = spec.arg.tensor_name();
      const Tensor& stored = b.program.stored_tensor(spec);
      const auto same = initializer_of.find(stored.raw());
      if (stored.numel() > 0 && same != initializer_of.end() && same->second.second.dtype() == stored.dtype() &&
          same->second.second.shape() == stored.shape()) {
        b.values[fx] = same->second.first;
        continue;
      }
      b.graph.add_initializer(spec.target, stored);
      if (stored.numel() > 0) initializer_of.emplace(stored.raw(), std::make_pair(spec.target, stored));
      b.values[fx] = spec.target;
    } else if (spec.kind == Kind::kCustomObj) {
      throw Error(b.where,
                  "custom object '" + spec.target + "' (graph input '" + spec.arg.describe() +
                      "'): torchbind script objects have no ONNX form; export the module without them",
                  ErrorKind::kUnsupported);
    } else if (spec.kind == Kind::kTokenInput) {
      throw Error(
          b.where,
          "effect token input '" + spec.target + "': programs with side-effecting ops (tokens) are not supported yet",
          ErrorKind::kUnsupported);
    } else if (spec.kind != Kind::kConstantInput) {  // a specialised Python scalar or None: already in the graph
      throw Error(b.where, "input spec kind " + std::to_string(static_cast<int>(spec.kind)) + " is not supported yet");
    }
  }
}

// Nodes: every unsupported op is collected so that one run lists them all.
void add_nodes(ModelBuild& b, onnx::ModelProto& model) {
  load_translation_plugins(b.options.plugins);  // their translations join the registry
  translate_nodes(b.program, b.program.graph, b.graph, b.options.opset, b.values);
  for (const auto& domain : b.graph.used_domains()) {
    auto* custom_opset = model.add_opset_import();
    custom_opset->set_domain(domain);
    custom_opset->set_version(1);
  }
  b.graph.set_current_node("", {});
}

// A graph output needs its own name: alias through Identity when it is an input, an initializer, or
// already used by an earlier output.
void add_output(ModelBuild& b, const std::string& fx, const std::string& wanted) {
  auto it = b.values.find(fx);
  if (it == b.values.end()) throw Error(b.where, "output '" + fx + "' is not produced by the graph");
  std::string name = it->second;
  if (wanted != name || b.input_like.count(name) || b.output_names.count(name)) {
    if (b.graph.is_used(wanted) && wanted != name &&
        std::any_of(b.g->input().begin(), b.g->input().end(), [&](const auto& i) { return i.name() == wanted; }))
      throw Error(b.where, "output name '" + wanted + "' collides with an input name");
    const std::string alias = wanted != name && !b.graph.is_used(wanted) ? wanted : b.graph.unique_name(fx + "_output");
    b.graph.reserve_name(alias);
    b.graph.add_node("Identity", {name}, {alias});
    name = alias;
  }
  b.output_names.insert(name);
  auto* vi = b.g->add_output();
  set_value_info(vi, name, b.program.graph.meta(fx, "output"), b.program.dim_names);
  note_complex_io(b.program.graph.meta(fx, "output"), vi, b.complex_outputs);
}

// A number among the user's outputs (a cond / while_loop result, a size, a constant): a 0-d value of its kind,
// as capture saves numbers (int64, float64, bool).
void add_number_output(ModelBuild& b, const pt2::Argument& arg, const std::string& wanted) {
  using K = pt2::ArgKind;
  const DType dtype = arg.is(K::as_sym_float) || arg.is(K::as_float) ? DType::kFloat64
                      : arg.is(K::as_sym_bool) || arg.is(K::as_bool) ? DType::kBool
                                                                     : DType::kInt64;
  std::string value;
  if (arg.is_symbolic_scalar()) {
    auto it = b.values.find(arg.symbol());
    if (it == b.values.end()) throw Error(b.where, "output '" + arg.symbol() + "' is not produced by the graph");
    auto* cast = b.graph.add_node("Cast", {it->second}, {b.graph.unique_name(arg.symbol() + "_number")});
    set_attr(cast, "to", static_cast<int64_t>(dtype));
    value = cast->output(0);
  } else if (dtype == DType::kInt64) {
    value = b.graph.constant_i64({arg.as_int()}, true);
  } else {
    value = b.graph.constant_scalar(dtype == DType::kBool ? (arg.as_bool() ? 1.0 : 0.0) : arg.as_float(), dtype);
  }
  const std::string name = b.graph.is_used(wanted) ? b.graph.unique_name(wanted) : wanted;
  b.graph.reserve_name(name);
  b.graph.add_node("Identity", {value}, {name});
  b.output_names.insert(name);
  auto* type = b.g->add_output();
  type->set_name(name);
  type->mutable_type()->mutable_tensor_type()->set_elem_type(static_cast<int32_t>(dtype));
  type->mutable_type()->mutable_tensor_type()->mutable_shape();  // rank 0
}

// The user's outputs, then the mutated buffers and inputs (so a caller can carry the state forward), then
// typed intermediates (they help readers and shape inference; FX metadata gives them for free).
void add_outputs(ModelBuild& b) {
  for (const auto& in : b.g->input()) b.input_like.insert(in.name());
  for (const auto& init : b.g->initializer()) b.input_like.insert(init.name());  // translations add some too
  size_t out_index = 0;
  for (const auto& arg : b.program.user_outputs()) {
    const bool named = out_index < b.options.output_names.size();
    if (arg.is_number()) {
      const std::string fallback = arg.is_symbolic_scalar() ? arg.symbol() : "output_" + std::to_string(out_index);
      add_number_output(b, arg, named ? b.options.output_names[out_index] : fallback);
    } else {
      const std::string fx = arg.tensor_name();
      add_output(b, fx, named ? b.options.output_names[out_index] : b.values.count(fx) ? b.values.at(fx) : fx);
    }
    ++out_index;
  }
  if (b.options.keep_mutations)
    for (const auto& m : b.program.mutations()) add_output(b, m.fx_value, m.output_name);
  std::set<std::string> declared(b.output_names);
  declared.insert(b.input_like.begin(), b.input_like.end());
  // Several FX names can be bound to one ONNX value (an in-place result and the tensor it wrote); their
  // metadata differ when the write changed the shape (resize_), so the value is typed once, by the FX name
  // that is its own (the node output the value was made for), else by the first.
  std::map<std::string, std::string> typed_by;  // ONNX name -> FX name whose metadata types it
  for (const auto& [fx, onnx_name] : b.values) {
    if (declared.count(onnx_name) || !b.program.graph.tensor_values.count(fx)) continue;
    auto [it, fresh] = typed_by.emplace(onnx_name, fx);
    if (!fresh && fx == onnx_name) it->second = fx;
  }
  for (const auto& [onnx_name, fx] : typed_by)
    set_value_info(b.g->add_value_info(), onnx_name, b.program.graph.tensor_values.at(fx), b.program.dim_names);
}

// The model's metadata_props `parity.complex_inputs` / `parity.complex_outputs`: a JSON object
// {ONNX name: "complex64" | "complex128" | "complex32"} of the graph inputs / outputs that carry complex values
// as (real, imaginary) pairs in a trailing dim of 2 (docs/complex.md). Absent when there are none.
void add_complex_metadata(const ModelBuild& b, onnx::ModelProto& model) {
  auto add = [&](const char* key, const std::vector<std::pair<std::string, std::string>>& io) {
    if (io.empty()) return;
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    for (const auto& [name, dtype] : io) j[name] = dtype;
    auto* prop = model.add_metadata_props();
    prop->set_key(key);
    prop->set_value(j.dump());
  };
  add("parity.complex_inputs", b.complex_inputs);
  add("parity.complex_outputs", b.complex_outputs);
}

// The exporter's passes; parameter and buffer names are the module's state, never merged away.
void run_passes(const ModelBuild& b, onnx::ModelProto& model, std::vector<Tensor>& payloads) {
  OptimizeOptions passes;
  passes.payloads = &payloads;  // the passes may read large weights and add transposed or folded ones
  passes.aliases = b.options.value_aliases;
  for (const auto& spec : b.program.input_specs)
    // Lifted tensor constants (a torch.tensor(...) in forward) are not the module's state: they may fold.
    if (spec.kind == pt2::InputSpec::Kind::kParameter || spec.kind == pt2::InputSpec::Kind::kBuffer)
      passes.protected_names.insert(spec.target);
  optimize(model, passes);
}

// The model with its large initializers as references to `payloads` (views of the mapped .pt2).
void build_model(const pt2::Program& program, const ExportOptions& requested, onnx::ModelProto& model,
                 std::vector<Tensor>& payloads) {
  ExportOptions options = requested;
  options.opset = resolve_opset(program, requested.opset);
  ModelBuild b(program, options, model.mutable_graph());
  start_model(b, model);
  add_inputs(b);
  add_nodes(b, model);
  add_outputs(b);
  add_complex_metadata(b, model);
  payloads = b.graph.payloads();
  if (options.optimize) run_passes(b, model, payloads);
}

// Whether `g` or one of its subgraphs calls a target that starts with `prefix`.
bool calls(const pt2::Graph& g, const std::string& prefix) {
  for (const auto& n : g.nodes) {
    if (n.target.rfind(prefix, 0) == 0) return true;
    for (const auto& in : n.inputs)
      if (in.arg.is(pt2::ArgKind::as_graph) && calls(in.arg.subgraph(), prefix)) return true;
  }
  return false;
}

// Whether a tensor of `g` or of one of its subgraphs is bfloat16.
bool has_bfloat16(const pt2::Graph& g) {
  for (const auto& [name, meta] : g.tensor_values)
    if (meta.dtype == DType::kBFloat16) return true;
  for (const auto& n : g.nodes)
    for (const auto& in : n.inputs)
      if (in.arg.is(pt2::ArgKind::as_graph) && has_bfloat16(in.arg.subgraph())) return true;
  return false;
}

}  // namespace

int resolve_opset(const pt2::Program& program, int requested) {
  if (requested != kAutoOpset) return requested;
  int opset = kDefaultOpset;
  if (calls(program.graph, "torch.ops.torchao.")) opset = std::max(opset, 21);
  // ONNX's Gelu (opset 20) is one node where opset 18 needs five (nine for the tanh form).
  if (calls(program.graph, "torch.ops.aten.gelu.") || calls(program.graph, "torch.ops.aten.gelu_."))
    opset = std::max(opset, 20);
  // bfloat16 Conv, pooling and most activations are valid ONNX from opset 22 only.
  if (has_bfloat16(program.graph)) opset = std::max(opset, 22);
  return opset;
}

std::string export_program(const pt2::Program& program, const ExportOptions& options) {
  onnx::ModelProto model;
  std::vector<Tensor> payloads;
  build_model(program, options, model, payloads);
  return serialize_model(model, payloads, program.archive_path);
}

bool export_program_to_file(const pt2::Program& program, const std::string& onnx_path, const ExportOptions& options) {
  onnx::ModelProto model;
  std::vector<Tensor> payloads;
  build_model(program, options, model, payloads);
  ModelWriteOptions write;
  write.external_data = options.external_data;
  write.external_data_file = options.external_data_file;
  write.external_threshold = options.external_data_threshold;
  write.auto_external_bytes = options.external_data_auto_bytes;
  return write_model_file(model, payloads, onnx_path, write);
}

bool export_file(const std::string& pt2_path, const std::string& onnx_path, const ExportOptions& options) {
  const pt2::Program program = pt2::read_pt2(pt2_path);
  return export_program_to_file(program, onnx_path, options);
}

}  // namespace parity::exporter
