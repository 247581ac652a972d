// The export driver: PT2 program -> ONNX ModelProto.
#include "parity/exporter/export.h"

#include <algorithm>
#include <iostream>
#include <sstream>

#include "builder.h"
#include "model_writer.h"
#include "driver.h"
#include "parity/error.h"
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
  tt->set_elem_type(static_cast<int32_t>(meta.dtype));
  auto* shape = tt->mutable_shape();
  for (const auto& d : meta.sizes) {
    auto* dim = shape->add_dim();
    if (d.value) dim->set_dim_value(*d.value);
    else dim->set_dim_param(dim_text(d, dim_names));
  }
}

}  // namespace

namespace {

// The model with its large initializers as references to `payloads` (views of the mapped .pt2).
void build_model(const pt2::Program& program, const ExportOptions& options, onnx::ModelProto& model,
                 std::vector<Tensor>& payloads) {
  const ErrorContext where{"export", program.archive_path};
  if (options.opset < kMinOpset || options.opset > kMaxOpset)
    throw Error(where, "opset " + std::to_string(options.opset) + " is outside the supported range " +
                           std::to_string(kMinOpset) + ".." + std::to_string(kMaxOpset));
  model.set_ir_version(ir_version_for(options.opset));
  model.set_producer_name("parity");
  model.set_producer_version(kProducerVersion);
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(options.opset);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("main_graph");
  GraphBuilder graph(g);
  std::map<std::string, std::string> values;  // FX value name -> ONNX value name

  // Inputs: user tensors become graph inputs; parameters, buffers and constants become initializers.
  size_t user_index = 0;
  std::map<const void*, std::pair<std::string, Tensor>> initializer_of;  // stored bytes -> initializer
  for (const auto& spec : program.input_specs) {
    using Kind = pt2::InputSpec::Kind;
    if (spec.kind == Kind::kUserInput) {
      if (spec.arg.is(pt2::ArgKind::as_tensor)) {
        const std::string fx = spec.arg.tensor_name();
        std::string name = fx;
        if (user_index < options.input_names.size()) name = options.input_names[user_index];
        ++user_index;
        graph.reserve_name(name);
        values[fx] = name;
        set_value_info(g->add_input(), name, program.graph.meta(fx, fx), program.dim_names);
      } else if (spec.arg.is(pt2::ArgKind::as_none) || spec.arg.is(pt2::ArgKind::as_int) || spec.arg.is(pt2::ArgKind::as_float) ||
                 spec.arg.is(pt2::ArgKind::as_bool) || spec.arg.is(pt2::ArgKind::as_string)) {
        continue;  // a constant user input: torch.export already baked its value into the graph
      } else {
        throw Error(where, "user input of kind " + std::string(spec.arg.kind_name()) + " is not supported yet");
      }
    } else if (spec.kind == Kind::kParameter || spec.kind == Kind::kBuffer || spec.kind == Kind::kTensorConstant) {
      const std::string& fx = spec.arg.tensor_name();
      const Tensor& stored = program.stored_tensor(spec);
      // One tensor under several names (tied weights, a constant lifted twice): one initializer.
      const auto same_bytes = initializer_of.find(stored.raw());
      if (stored.numel() > 0 && same_bytes != initializer_of.end() && same_bytes->second.second.dtype() == stored.dtype() &&
          same_bytes->second.second.shape() == stored.shape()) {
        values[fx] = same_bytes->second.first;
        continue;
      }
      graph.add_initializer(spec.target, stored);
      if (stored.numel() > 0) initializer_of.emplace(stored.raw(), std::make_pair(spec.target, stored));
      values[fx] = spec.target;
    } else if (spec.kind == Kind::kCustomObj) {
      throw Error(where, "custom object '" + spec.target + "' (graph input '" + spec.arg.describe() +
                             "'): torchbind script objects have no ONNX form; export the module without them",
                  ErrorKind::kUnsupported);
    } else if (spec.kind == Kind::kTokenInput) {
      throw Error(where, "effect token input '" + spec.target +
                             "': programs with side-effecting ops (tokens) are not supported yet",
                  ErrorKind::kUnsupported);
    } else if (spec.kind == Kind::kConstantInput) {
      continue;  // a Python scalar or None specialised by torch.export: its value is already in the graph
    } else {
      throw Error(where, "input spec kind " + std::to_string(static_cast<int>(spec.kind)) + " is not supported yet");
    }
  }

  // Nodes: every unsupported op is collected so that one run lists them all.
  load_translation_plugins(options.plugins);  // their translations join the registry
  translate_nodes(program, program.graph, graph, options.opset, values);
  for (const auto& domain : graph.used_domains()) {
    auto* custom_opset = model.add_opset_import();
    custom_opset->set_domain(domain);
    custom_opset->set_version(1);
  }
  graph.set_current_node("", {});

  // Outputs: a graph output needs its own name; alias through Identity when it is an input,
  // an initializer, or already used by an earlier output.
  std::set<std::string> output_names;
  std::set<std::string> input_like;
  for (const auto& in : g->input()) input_like.insert(in.name());
  for (const auto& init : g->initializer()) input_like.insert(init.name());
  auto add_output = [&](const std::string& fx, const std::string& wanted) {
    auto it = values.find(fx);
    if (it == values.end()) throw Error(where, "output '" + fx + "' is not produced by the graph");
    std::string name = it->second;
    if (wanted != name || input_like.count(name) || output_names.count(name)) {
      if (graph.is_used(wanted) && wanted != name) {
        if (std::any_of(g->input().begin(), g->input().end(), [&](const auto& i) { return i.name() == wanted; }))
          throw Error(where, "output name '" + wanted + "' collides with an input name");
      }
      const std::string alias = wanted != name && !graph.is_used(wanted) ? wanted : graph.unique_name(fx + "_output");
      graph.reserve_name(alias);
      graph.add_node("Identity", {name}, {alias});
      name = alias;
    }
    output_names.insert(name);
    set_value_info(g->add_output(), name, program.graph.meta(fx, "output"), program.dim_names);
  };
  size_t out_index = 0;
  for (const auto& fx : program.user_output_names()) {
    const bool named = out_index < options.output_names.size();
    add_output(fx, named ? options.output_names[out_index] : values.count(fx) ? values.at(fx) : fx);
    ++out_index;
  }
  // Mutated buffers and inputs follow the user's outputs, so a caller can carry the state forward.
  if (options.keep_mutations)
    for (const auto& m : program.mutations()) add_output(m.fx_value, m.output_name);
  // Typed intermediates help readers and shape inference; FX metadata gives them for free.
  std::set<std::string> declared(output_names);
  declared.insert(input_like.begin(), input_like.end());
  for (const auto& [fx, onnx_name] : values) {
    if (declared.count(onnx_name)) continue;
    auto meta = program.graph.tensor_values.find(fx);
    if (meta == program.graph.tensor_values.end()) continue;
    set_value_info(g->add_value_info(), onnx_name, meta->second, program.dim_names);
  }
  if (options.optimize) {
    // Parameter, buffer and constant names are the module's state: never merged into another name.
    OptimizeOptions passes;
    for (const auto& spec : program.input_specs)
      if (spec.kind == pt2::InputSpec::Kind::kParameter || spec.kind == pt2::InputSpec::Kind::kBuffer ||
          spec.kind == pt2::InputSpec::Kind::kTensorConstant)
        passes.protected_names.insert(spec.target);
    optimize(model, passes);
  }
  payloads = graph.payloads();
}

}  // namespace

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
