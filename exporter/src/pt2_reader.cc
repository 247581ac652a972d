// PT2 archive -> pt2::Program. Every field read from the file is checked; errors name the archive
// and the record. Pickled records are refused, never unpickled.
#include <algorithm>
#include <cstring>

#include <nlohmann/json.hpp>

#include "parity/error.h"
#include "parity/exporter/program.h"
#include "in_place_aliases.h"
#include "zip_reader.h"

namespace parity::pt2 {

namespace {

using json = nlohmann::json;
constexpr int kSupportedSchemaMajor = schema::kSchemaMajor;

struct Reader {
  const ZipArchive& zip;
  std::string prefix;  // "<stem>/" inside the archive

  [[noreturn]] void fail(const std::string& record, const std::string& msg) const {
    throw Error({"pt2", zip.path()}, record.empty() ? msg : record + ": " + msg);
  }

  json parse_json(const std::string& record) const {
    const std::string_view bytes = zip.entry(prefix + record);
    try {
      return json::parse(bytes.begin(), bytes.end());
    } catch (const json::exception& e) {
      fail(record, std::string("broken JSON: ") + e.what());
    }
  }
};

SymDim to_sym_dim(const schema::SymInt& s) {
  SymDim d;
  if (s.kind() == schema::SymInt::Kind::as_int) {
    d.value = s.as_int();
  } else {
    d.expr = simplify_sym_expr(s.as_expr().expr_str);
    const auto& hint = s.as_expr().hint;
    if (hint && hint->kind() == schema::SymExprHint::Kind::as_int) d.hint = hint->as_int();
  }
  return d;
}

Node to_node(const schema::Node& sn) {
  Node n;
  n.target = sn.target;
  n.name = sn.name.value_or("");
  for (const auto& in : sn.inputs)
    n.inputs.push_back({in.name, Argument(in.arg), in.kind.value_or(schema::ArgumentKind::UNKNOWN)});
  for (const auto& out : sn.outputs) n.outputs.emplace_back(out);
  n.metadata = sn.metadata;
  if (n.name.empty() && !n.outputs.empty() && n.outputs[0].is_tensor()) n.name = n.outputs[0].tensor_name();
  return n;
}

// Reads a JSON value into a schema type; a structural error becomes a parity::Error naming the path.
template <class T>
T read_schema(const json& j, const std::string& what) {
  T out{};
  try {
    from_json(j, out);
  } catch (const schema::ParseError& e) {
    throw Error({"pt2"}, what + (e.path().empty() ? "" : "." + e.path()) + ": " + e.detail());
  }
  return out;
}

TensorMeta parse_tensor_meta(const json& j) {
  return to_tensor_meta(read_schema<schema::TensorMeta>(j, "tensor_meta"));
}

}  // namespace

TensorMeta to_tensor_meta(const schema::TensorMeta& sm) {
  TensorMeta m;
  m.torch_dtype = static_cast<int32_t>(sm.dtype);
  m.dtype = dtype_from_torch(m.torch_dtype);
  for (const auto& s : sm.sizes) m.sizes.push_back(to_sym_dim(s));
  bool static_strides = true;
  for (const auto& s : sm.strides) {
    const SymDim d = to_sym_dim(s);
    static_strides = static_strides && d.value.has_value();
    m.strides.push_back(d.value.value_or(0));
  }
  if (!static_strides) m.strides.clear();
  m.storage_offset = to_sym_dim(sm.storage_offset).value.value_or(0);
  return m;
}

Graph to_graph(const schema::Graph& sg) {
  Graph g;
  for (const auto& a : sg.inputs) g.inputs.emplace_back(a);
  for (const auto& a : sg.outputs) g.outputs.emplace_back(a);
  for (const auto& n : sg.nodes) g.nodes.push_back(to_node(n));
  for (const auto& [name, meta] : sg.tensor_values) g.tensor_values[name] = to_tensor_meta(meta);
  g.sym_int_values = sg.sym_int_values;
  return g;
}

namespace {

InputSpec to_input_spec(const schema::InputSpec& spec) {
  using K = schema::InputSpec::Kind;
  InputSpec s;
  switch (spec.kind()) {
    case K::user_input:
      s.kind = InputSpec::Kind::kUserInput;
      s.arg = Argument(spec.user_input().arg);
      break;
    case K::parameter:
      s.kind = InputSpec::Kind::kParameter;
      s.arg = Argument::tensor(spec.parameter().arg.name);
      s.target = spec.parameter().parameter_name;
      break;
    case K::buffer:
      s.kind = InputSpec::Kind::kBuffer;
      s.arg = Argument::tensor(spec.buffer().arg.name);
      s.target = spec.buffer().buffer_name;
      s.persistent = spec.buffer().persistent;
      break;
    case K::tensor_constant:
      s.kind = InputSpec::Kind::kTensorConstant;
      s.arg = Argument::tensor(spec.tensor_constant().arg.name);
      s.target = spec.tensor_constant().tensor_constant_name;
      break;
    case K::custom_obj: {
      s.kind = InputSpec::Kind::kCustomObj;
      schema::Argument a;
      a.set_as_custom_obj(spec.custom_obj().arg);
      s.arg = Argument(std::move(a));
      s.target = spec.custom_obj().custom_obj_name;
      break;
    }
    case K::token:
      s.kind = InputSpec::Kind::kTokenInput;
      s.target = spec.token().arg.name;
      break;
    case K::constant_input: {
      s.kind = InputSpec::Kind::kConstantInput;
      s.target = spec.constant_input().name;
      break;
    }
    default:
      throw Error({"pt2"}, std::string("unknown input spec kind '") + spec.kind_name() + "'");
  }
  return s;
}

OutputSpec to_output_spec(const schema::OutputSpec& spec) {
  using K = schema::OutputSpec::Kind;
  OutputSpec s;
  switch (spec.kind()) {
    case K::user_output:
      s.kind = OutputSpec::Kind::kUserOutput, s.arg = Argument(spec.user_output().arg);
      break;
    case K::loss_output:
      s.kind = OutputSpec::Kind::kLossOutput, s.arg = Argument::tensor(spec.loss_output().arg.name);
      break;
    case K::buffer_mutation:
      s.kind = OutputSpec::Kind::kBufferMutation, s.arg = Argument::tensor(spec.buffer_mutation().arg.name);
      s.target = spec.buffer_mutation().buffer_name;
      break;
    case K::parameter_mutation:
      s.kind = OutputSpec::Kind::kParameterMutation, s.arg = Argument::tensor(spec.parameter_mutation().arg.name);
      s.target = spec.parameter_mutation().parameter_name;
      break;
    case K::gradient_to_parameter:
      s.kind = OutputSpec::Kind::kGradientToParameter, s.arg = Argument::tensor(spec.gradient_to_parameter().arg.name);
      s.target = spec.gradient_to_parameter().parameter_name;
      break;
    case K::gradient_to_user_input:
      s.kind = OutputSpec::Kind::kGradientToUserInput, s.arg = Argument::tensor(spec.gradient_to_user_input().arg.name);
      s.target = spec.gradient_to_user_input().user_input_name;
      break;
    case K::user_input_mutation:
      s.kind = OutputSpec::Kind::kUserInputMutation, s.arg = Argument::tensor(spec.user_input_mutation().arg.name);
      s.target = spec.user_input_mutation().user_input_name;
      break;
    case K::token:
      s.kind = OutputSpec::Kind::kToken, s.target = spec.token().arg.name;
      break;
    default:
      throw Error({"pt2"}, std::string("unknown output spec kind '") + spec.kind_name() + "'");
  }
  return s;
}

void read_program(const schema::ExportedProgram& ep, Program& p) {
  p.schema_major = static_cast<int>(ep.schema_version.major);
  p.schema_minor = static_cast<int>(ep.schema_version.minor);
  p.torch_version = ep.torch_version;
  p.graph = to_graph(ep.graph_module.graph);
  for (const auto& spec : ep.graph_module.signature.input_specs) p.input_specs.push_back(to_input_spec(spec));
  for (const auto& spec : ep.graph_module.signature.output_specs) p.output_specs.push_back(to_output_spec(spec));
  for (const auto& entry : ep.graph_module.module_call_graph) {
    if (!entry.fqn.empty() || !entry.signature) continue;
    p.in_spec = entry.signature->in_spec;
    p.out_spec = entry.signature->out_spec;
    p.forward_arg_names = entry.signature->forward_arg_names.value_or(std::vector<std::string>{});
  }
  for (const auto& [sym, range] : ep.range_constraints) p.range_constraints[sym] = {range.min_val, range.max_val};
}

// A complex tensor (complex32 / complex64 / complex128) is stored as interleaved (real, imaginary) parts: its
// meta as the exporter's pair layout (docs/complex.md), a real tensor of the part dtype with a trailing dim
// of 2, so that the stored bytes are read as they are. Other metas are returned as they are.
TensorMeta as_complex_pairs(const TensorMeta& meta) {
  const DType part = meta.torch_dtype == 9    ? DType::kFloat16
                     : meta.torch_dtype == 10 ? DType::kFloat32
                     : meta.torch_dtype == 11 ? DType::kFloat64
                                              : DType::kUndefined;
  if (part == DType::kUndefined) return meta;
  TensorMeta pairs = meta;
  pairs.dtype = part;
  SymDim two;
  two.value = 2;
  pairs.sizes.push_back(two);
  for (auto& s : pairs.strides) s *= 2;
  if (pairs.strides.size() + 1 == pairs.sizes.size()) pairs.strides.push_back(1);
  pairs.storage_offset *= 2;
  return pairs;
}

// A tensor stored as raw untyped storage; viewed with the meta's sizes/strides/offset.
Tensor read_stored_tensor(const Reader& r, const std::string& record, const std::string& name,
                          const TensorMeta& stored_meta, const std::shared_ptr<MappedFile>& file) {
  const TensorMeta meta = as_complex_pairs(stored_meta);
  if (meta.dtype == DType::kUndefined)
    r.fail(record, "tensor '" + name + "' has dtype " + std::to_string(meta.torch_dtype) + " that Parity cannot store");
  Shape shape;
  for (const auto& d : meta.sizes) {
    if (!d.value) r.fail(record, "tensor '" + name + "' has a symbolic size");
    shape.push_back(*d.value);
  }
  const std::string_view bytes = r.zip.entry(r.prefix + record);
  const int64_t numel = checked_numel(shape, "tensor '" + name + "'");
  const size_t elem = dtype_size(meta.dtype);
  std::vector<int64_t> strides = meta.strides;
  if (strides.size() != shape.size()) r.fail(record, "tensor '" + name + "' has strides of the wrong rank");
  // The largest element index touched must lie inside the storage.
  uint64_t extent = 0;
  if (numel > 0) {
    if (meta.storage_offset < 0) r.fail(record, "tensor '" + name + "' has a negative storage offset");
    extent = static_cast<uint64_t>(meta.storage_offset) + 1;
    for (size_t i = 0; i < shape.size(); ++i) {
      if (strides[i] < 0) r.fail(record, "tensor '" + name + "' has a negative stride");
      uint64_t span = 0;  // overflow-checked: absurd strides must not wrap around into a small extent
      if (__builtin_mul_overflow(static_cast<uint64_t>(shape[i] - 1), static_cast<uint64_t>(strides[i]), &span) ||
          __builtin_add_overflow(extent, span, &extent))
        r.fail(record, "tensor '" + name + "' has sizes and strides that overflow");
    }
  }
  if (extent > bytes.size() / elem)
    r.fail(record, "storage of tensor '" + name + "' has " + std::to_string(bytes.size()) + " bytes, but shape " +
                       shape_str(shape) + " with its strides needs " + std::to_string(extent * elem));
  bool contiguous = true;
  for (int64_t i = static_cast<int64_t>(shape.size()) - 1, expect = 1; i >= 0; --i) {
    if (shape[i] != 1 && strides[i] != expect) contiguous = false;
    expect *= shape[i];
  }
  const char* base = bytes.data() + static_cast<size_t>(meta.storage_offset) * elem;
  if (contiguous) return Tensor::view(meta.dtype, shape, file, base);
  Tensor out(meta.dtype, shape);
  char* dst = static_cast<char*>(out.mutable_raw());
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t n = 0; n < numel; ++n) {
    int64_t off = 0;
    for (size_t i = 0; i < shape.size(); ++i) off += index[i] * strides[i];
    std::memcpy(dst + n * elem, base + off * elem, elem);
    for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) {
      if (++index[i] < shape[i]) break;
      index[i] = 0;
    }
  }
  return out;
}

void read_stored_tensors(const Reader& r, const std::string& folder, const std::string& config_record,
                         std::map<std::string, Tensor>& out) {
  if (!r.zip.contains(r.prefix + config_record)) return;
  const json config = r.parse_json(config_record);
  const json entries = config.value("config", json::object());
  for (const auto& [name, entry] : entries.items()) {
    if (entry.value("use_pickle", false))
      r.fail(config_record, "'" + name +
                                "' is stored with pickle (use_pickle=true); Parity never unpickles. "
                                "Save plain tensors (no subclasses) with torch.export.save");
    const std::string path_name = entry.at("path_name").get<std::string>();
    if (path_name.find("..") != std::string::npos || path_name.find('/') != std::string::npos)
      r.fail(config_record, "'" + name + "' has an unsafe path_name '" + path_name + "'");
    out[name] =
        read_stored_tensor(r, folder + path_name, name, parse_tensor_meta(entry.at("tensor_meta")), r.zip.file());
  }
}

}  // namespace

Program read_pt2(const std::string& path) {
  const ZipArchive zip = ZipArchive::open(path);
  Reader r{zip, ""};
  for (const auto& name : zip.names()) {
    const std::string tail = "archive_format";
    if (name.size() >= tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0 &&
        std::count(name.begin(), name.end(), '/') <= 1) {
      r.prefix = name.substr(0, name.size() - tail.size());
      break;
    }
  }
  if (!zip.contains(r.prefix + "archive_format"))
    r.fail("", "not a torch.export archive (no archive_format record); was it written by torch.export.save?");
  const std::string_view format = zip.entry(r.prefix + "archive_format");
  if (format != "pt2") r.fail("archive_format", "is '" + std::string(format.substr(0, 20)) + "', expected 'pt2'");

  Program p;
  p.archive_path = path;
  p.model_name = "model";
  const std::string model_record = "models/" + p.model_name + ".json";
  if (!zip.contains(r.prefix + model_record))
    r.fail("", "no " + model_record + " record (only the default model name 'model' is supported)");
  const json model = r.parse_json(model_record);
  try {
    // The version first: an archive of another major version may not parse as this one.
    const auto version = read_schema<schema::SchemaVersion>(
        model.is_object() && model.contains("schema_version") ? model["schema_version"] : json(), "schema_version");
    if (version.major != kSupportedSchemaMajor)
      throw Error({"pt2"}, "export schema major version " + std::to_string(version.major) +
                               " is not supported (Parity reads major " + std::to_string(kSupportedSchemaMajor) + ")");
    read_program(read_schema<schema::ExportedProgram>(model, "ExportedProgram"), p);
    resolve_in_place_aliases(p.graph, p.output_specs);
  } catch (const Error& e) {
    if (!e.context().file.empty()) throw;
    r.fail(model_record, e.message());
  }

  try {
    read_stored_tensors(r, "data/weights/", "data/weights/" + p.model_name + "_weights_config.json", p.weights);
    read_stored_tensors(r, "data/constants/", "data/constants/" + p.model_name + "_constants_config.json", p.constants);
    const json dims =
        zip.contains(r.prefix + "extra/parity_dims.json") ? r.parse_json("extra/parity_dims.json") : json::object();
    for (const auto& [sym, name] : dims.items())
      if (name.is_string()) p.dim_names[sym] = name.get<std::string>();
  } catch (const json::exception& e) {
    r.fail("weights", std::string("unexpected structure: ") + e.what());
  }
  return p;
}

}  // namespace parity::pt2
