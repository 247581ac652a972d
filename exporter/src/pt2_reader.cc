// PT2 archive -> pt2::Program. Every field read from the file is checked; errors name the archive
// and the record. Pickled records are refused, never unpickled.
#include <algorithm>
#include <cstring>

#include "parity/error.h"
#include "parity/exporter/program.h"
#include "parity/exporter/zip_reader.h"

namespace parity::pt2 {

namespace {

constexpr int kSupportedSchemaMajor = 8;

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

Argument parse_argument(const json& j) {
  if (!j.is_object() || j.size() != 1) throw Error({"pt2"}, "argument is not a one-key union: " + j.dump().substr(0, 80));
  return Argument{j.begin().key(), j.begin().value()};
}

SymDim parse_sym_int(const json& j) {
  SymDim d;
  if (j.contains("as_int")) {
    d.value = j["as_int"].get<int64_t>();
  } else if (j.contains("as_expr")) {
    d.expr = simplify_sym_expr(j["as_expr"].at("expr_str").get<std::string>());
    const json& hint = j["as_expr"].value("hint", json());
    if (hint.is_object() && hint.contains("as_int")) d.hint = hint["as_int"].get<int64_t>();
  } else {
    throw Error({"pt2"}, "unknown SymInt form " + j.dump().substr(0, 80));
  }
  return d;
}

TensorMeta parse_tensor_meta(const json& j) {
  TensorMeta m;
  m.torch_dtype = j.at("dtype").get<int32_t>();
  m.dtype = dtype_from_torch(m.torch_dtype);
  bool static_strides = true;
  for (const auto& s : j.at("sizes")) m.sizes.push_back(parse_sym_int(s));
  for (const auto& s : j.value("strides", json::array())) {
    SymDim d = parse_sym_int(s);
    if (!d.value) static_strides = false;
    m.strides.push_back(d.value.value_or(0));
  }
  if (!static_strides) m.strides.clear();
  if (j.contains("storage_offset")) {
    SymDim off = parse_sym_int(j["storage_offset"]);
    m.storage_offset = off.value.value_or(0);
  }
  return m;
}

Node parse_node(const json& j) {
  Node n;
  n.target = j.at("target").get<std::string>();
  n.name = j.value("name", json()).is_string() ? j["name"].get<std::string>() : "";
  for (const auto& in : j.at("inputs")) {
    NamedArgument a;
    a.name = in.at("name").get<std::string>();
    a.arg = parse_argument(in.at("arg"));
    a.kind = in.value("kind", json()).is_number() ? in["kind"].get<int>() : 0;
    n.inputs.push_back(std::move(a));
  }
  for (const auto& out : j.at("outputs")) n.outputs.push_back(parse_argument(out));
  const json metadata = j.value("metadata", json::object());  // named: items() must not outlive it
  for (const auto& [k, v] : metadata.items())
    if (v.is_string()) n.metadata[k] = v.get<std::string>();
  if (n.name.empty() && !n.outputs.empty() && n.outputs[0].is_tensor()) n.name = n.outputs[0].tensor_name();
  return n;
}

}  // namespace

Graph parse_graph(const json& j) {
  Graph g;
  for (const auto& a : j.at("inputs")) g.inputs.push_back(parse_argument(a));
  for (const auto& a : j.at("outputs")) g.outputs.push_back(parse_argument(a));
  for (const auto& n : j.at("nodes")) g.nodes.push_back(parse_node(n));
  for (const auto& [name, meta] : j.at("tensor_values").items()) g.tensor_values[name] = parse_tensor_meta(meta);
  const json sym_ints = j.value("sym_int_values", json::object());
  for (const auto& [name, v] : sym_ints.items()) g.sym_int_values[name] = v;
  return g;
}

namespace {

void parse_signature(const json& sig, Program& p) {
  for (const auto& spec : sig.at("input_specs")) {
    InputSpec s;
    const std::string kind = spec.begin().key();
    const json& v = spec.begin().value();
    if (kind == "user_input") {
      s.kind = InputSpec::Kind::kUserInput;
      s.arg = parse_argument(v.at("arg"));
    } else if (kind == "parameter") {
      s.kind = InputSpec::Kind::kParameter;
      s.arg = Argument{"as_tensor", v.at("arg")};
      s.target = v.at("parameter_name").get<std::string>();
    } else if (kind == "buffer") {
      s.kind = InputSpec::Kind::kBuffer;
      s.arg = Argument{"as_tensor", v.at("arg")};
      s.target = v.at("buffer_name").get<std::string>();
      s.persistent = v.value("persistent", true);
    } else if (kind == "tensor_constant") {
      s.kind = InputSpec::Kind::kTensorConstant;
      s.arg = Argument{"as_tensor", v.at("arg")};
      s.target = v.at("tensor_constant_name").get<std::string>();
    } else if (kind == "custom_obj") {
      s.kind = InputSpec::Kind::kCustomObj;
      s.arg = Argument{"as_custom_obj", v.at("arg")};
      s.target = v.value("custom_obj_name", "");
    } else if (kind == "token") {
      s.kind = InputSpec::Kind::kTokenInput;
      s.arg = Argument{"as_token", v.at("arg")};
    } else if (kind == "constant_input") {
      s.kind = InputSpec::Kind::kConstantInput;
      s.arg = parse_argument(v.at("value"));
      s.target = v.value("name", "");
    } else {
      throw Error({"pt2"}, "unknown input spec kind '" + kind + "'");
    }
    p.input_specs.push_back(std::move(s));
  }
  static const std::map<std::string, std::pair<OutputSpec::Kind, const char*>> kinds = {
      {"user_output", {OutputSpec::Kind::kUserOutput, ""}},
      {"loss_output", {OutputSpec::Kind::kLossOutput, ""}},
      {"buffer_mutation", {OutputSpec::Kind::kBufferMutation, "buffer_name"}},
      {"parameter_mutation", {OutputSpec::Kind::kParameterMutation, "parameter_name"}},
      {"gradient_to_parameter", {OutputSpec::Kind::kGradientToParameter, "parameter_name"}},
      {"gradient_to_user_input", {OutputSpec::Kind::kGradientToUserInput, "user_input_name"}},
      {"user_input_mutation", {OutputSpec::Kind::kUserInputMutation, "user_input_name"}},
      {"token", {OutputSpec::Kind::kToken, ""}},
  };
  for (const auto& spec : sig.at("output_specs")) {
    const std::string kind = spec.begin().key();
    auto it = kinds.find(kind);
    if (it == kinds.end()) throw Error({"pt2"}, "unknown output spec kind '" + kind + "'");
    const json& v = spec.begin().value();
    OutputSpec s;
    s.kind = it->second.first;
    const json& arg = v.at("arg");
    s.arg = arg.size() == 1 && arg.begin().key().rfind("as_", 0) == 0 ? parse_argument(arg) : Argument{"as_tensor", arg};
    if (*it->second.second) s.target = v.value(it->second.second, "");
    p.output_specs.push_back(std::move(s));
  }
}

// A tensor stored as raw untyped storage; viewed with the meta's sizes/strides/offset.
Tensor read_stored_tensor(const Reader& r, const std::string& record, const std::string& name, const TensorMeta& meta,
                          const std::shared_ptr<MappedFile>& file) {
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
      r.fail(config_record, "'" + name + "' is stored with pickle (use_pickle=true); Parity never unpickles. "
                            "Save plain tensors (no subclasses) with torch.export.save");
    const std::string path_name = entry.at("path_name").get<std::string>();
    if (path_name.find("..") != std::string::npos || path_name.find('/') != std::string::npos)
      r.fail(config_record, "'" + name + "' has an unsafe path_name '" + path_name + "'");
    out[name] = read_stored_tensor(r, folder + path_name, name, parse_tensor_meta(entry.at("tensor_meta")), r.zip.file());
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
    const json& version = model.at("schema_version");
    p.schema_major = version.at("major").get<int>();
    p.schema_minor = version.at("minor").get<int>();
    if (p.schema_major != kSupportedSchemaMajor)
      r.fail(model_record, "export schema major version " + std::to_string(p.schema_major) +
                               " is not supported (Parity reads major " + std::to_string(kSupportedSchemaMajor) + ")");
    p.torch_version = model.value("torch_version", "");
    const json& gm = model.at("graph_module");
    p.graph = parse_graph(gm.at("graph"));
    parse_signature(gm.at("signature"), p);
    for (const auto& entry : gm.value("module_call_graph", json::array())) {
      if (entry.value("fqn", "") != "" || !entry.value("signature", json()).is_object()) continue;
      const json& sig = entry["signature"];
      p.in_spec = sig.value("in_spec", "");
      p.out_spec = sig.value("out_spec", "");
      if (sig.contains("forward_arg_names") && sig["forward_arg_names"].is_array())
        p.forward_arg_names = sig["forward_arg_names"].get<std::vector<std::string>>();
    }
    const json ranges = model.value("range_constraints", json::object());
    for (const auto& [sym, range] : ranges.items()) {
      RangeConstraint rc;
      if (range.value("min_val", json()).is_number_integer()) rc.min = range["min_val"].get<int64_t>();
      if (range.value("max_val", json()).is_number_integer()) rc.max = range["max_val"].get<int64_t>();
      p.range_constraints[sym] = rc;
    }
  } catch (const json::exception& e) {
    r.fail(model_record, std::string("unexpected structure: ") + e.what());
  } catch (const Error& e) {
    if (!e.context().file.empty()) throw;
    r.fail(model_record, e.message());
  }

  try {
    read_stored_tensors(r, "data/weights/", "data/weights/" + p.model_name + "_weights_config.json", p.weights);
    read_stored_tensors(r, "data/constants/", "data/constants/" + p.model_name + "_constants_config.json", p.constants);
    const json dims = zip.contains(r.prefix + "extra/parity_dims.json") ? r.parse_json("extra/parity_dims.json") : json::object();
      for (const auto& [sym, name] : dims.items())
        if (name.is_string()) p.dim_names[sym] = name.get<std::string>();
  } catch (const json::exception& e) {
    r.fail("weights", std::string("unexpected structure: ") + e.what());
  }
  return p;
}

}  // namespace parity::pt2
