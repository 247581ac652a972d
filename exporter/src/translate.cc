#include "translate.h"

#include "parity/error.h"

namespace parity::exporter {

std::map<std::string, Translation>& translation_registry() {
  static std::map<std::string, Translation> registry;
  return registry;
}

TranslationRegistrar::TranslationRegistrar(const char* key, TranslateFn fn, int min_opset) {
  translation_registry()[key] = Translation{fn, min_opset};
}

void TranslateContext::fail(const std::string& message) const {
  throw Error({"export", program.archive_path, node.name, node.target}, message);
}

const pt2::Argument& TranslateContext::required(const std::string& name) const {
  const pt2::Argument* a = arg(name);
  if (!a) fail("missing required argument '" + name + "'");
  return *a;
}

std::string TranslateContext::tensor(const std::string& name) const {
  const pt2::Argument& a = required(name);
  if (!a.is_tensor()) fail("argument '" + name + "' is not a tensor: " + a.describe());
  auto it = values_.find(a.tensor_name());
  if (it == values_.end()) fail("argument '" + name + "' refers to unknown value '" + a.tensor_name() + "'");
  return it->second;
}

std::vector<std::string> TranslateContext::tensors(const std::string& name) const {
  std::vector<std::string> out;
  for (const auto& t : required(name).tensor_names()) {
    auto it = values_.find(t);
    if (it == values_.end()) fail("argument '" + name + "' refers to unknown value '" + t + "'");
    out.push_back(it->second);
  }
  return out;
}

int64_t TranslateContext::int_arg(const std::string& name, int64_t fallback) const {
  const pt2::Argument* a = arg(name);
  if (!a || a->is_none()) return fallback;
  try {
    return a->as_int();
  } catch (const Error&) {
    fail("argument '" + name + "' must be a static int here, got " + a->describe());
  }
}

std::optional<int64_t> TranslateContext::optional_int(const std::string& name) const {
  const pt2::Argument* a = arg(name);
  if (!a || a->is_none()) return std::nullopt;
  return int_arg(name, 0);
}

std::vector<int64_t> TranslateContext::ints_arg(const std::string& name, std::vector<int64_t> fallback) const {
  const pt2::Argument* a = arg(name);
  if (!a || a->is_none()) return fallback;
  try {
    return a->as_ints();
  } catch (const Error&) {
    fail("argument '" + name + "' must be a static int list here, got " + a->describe());
  }
}

double TranslateContext::float_arg(const std::string& name, double fallback) const {
  const pt2::Argument* a = arg(name);
  if (!a || a->is_none()) return fallback;
  try {
    return a->as_float();
  } catch (const Error&) {
    fail("argument '" + name + "' must be a number, got " + a->describe());
  }
}

bool TranslateContext::bool_arg(const std::string& name, bool fallback) const {
  const pt2::Argument* a = arg(name);
  if (!a || a->is_none()) return fallback;
  return a->as_bool();
}

const pt2::TensorMeta& TranslateContext::input_meta(const std::string& name) const {
  const pt2::Argument& a = required(name);
  if (!a.is_tensor()) fail("argument '" + name + "' is not a tensor");
  return program.graph.meta(a.tensor_name(), node.name);
}

const pt2::TensorMeta& TranslateContext::output_meta(size_t i) const {
  std::vector<std::string> names;
  for (const auto& out : node.outputs) {
    if (out.kind == "as_tensor") names.push_back(out.tensor_name());
    if (out.kind == "as_tensors")
      for (const auto& n : out.tensor_names()) names.push_back(n);
  }
  if (i >= names.size()) fail("has no tensor output #" + std::to_string(i));
  return program.graph.meta(names[i], node.name);
}

std::string TranslateContext::sym_value(const nlohmann::json& sym) const {
  if (sym.contains("as_int")) return graph.constant_i64({sym["as_int"].get<int64_t>()}, true);
  if (sym.contains("as_name")) {
    const std::string name = sym["as_name"].get<std::string>();
    auto it = values_.find(name);
    if (it == values_.end()) fail("symbolic int '" + name + "' is not defined before use");
    return it->second;
  }
  fail("unknown symbolic int form " + sym.dump());
}

std::string TranslateContext::int_value(const std::string& name) const {
  const pt2::Argument& a = required(name);
  if (a.kind == "as_int") return graph.constant_i64({a.as_int()}, true);
  if (a.kind == "as_sym_int") return sym_value(a.value);
  fail("argument '" + name + "' is not an int: " + a.describe());
}

std::string TranslateContext::int_list_value(const std::string& name) const {
  const pt2::Argument& a = required(name);
  if (a.kind == "as_ints") return graph.constant_i64(a.as_ints());
  if (a.kind != "as_sym_ints") fail("argument '" + name + "' is not an int list: " + a.describe());
  bool all_static = true;
  for (const auto& s : a.value) all_static = all_static && s.contains("as_int");
  if (all_static) return graph.constant_i64(a.as_ints());
  // Mixed static/symbolic: unsqueeze each scalar to [1] and concatenate.
  std::vector<std::string> parts;
  const std::string axes = graph.constant_i64({0});
  for (const auto& s : a.value) {
    if (s.contains("as_int")) {
      parts.push_back(graph.constant_i64({s["as_int"].get<int64_t>()}));
    } else {
      const std::string out = graph.unique_name(node.name + "_dim");
      graph.add_node("Unsqueeze", {sym_value(s), axes}, {out});
      parts.push_back(out);
    }
  }
  const std::string out = graph.unique_name(node.name + "_shape");
  onnx::NodeProto* concat = graph.add_node("Concat", parts, {out});
  set_attr(concat, "axis", int64_t{0});
  return out;
}

std::string TranslateContext::output(size_t i) {
  std::vector<std::string> names;
  for (const auto& out : node.outputs) {
    if (out.kind == "as_tensor") names.push_back(out.tensor_name());
    else if (out.kind == "as_tensors")
      for (const auto& n : out.tensor_names()) names.push_back(n);
    else if (out.kind == "as_sym_int" && out.value.contains("as_name")) names.push_back(out.value["as_name"]);
  }
  if (i >= names.size()) fail("has no output #" + std::to_string(i));
  auto it = values_.find(names[i]);
  if (it != values_.end()) return it->second;
  const std::string onnx_name = graph.is_used(names[i]) ? graph.unique_name(names[i]) : names[i];
  graph.reserve_name(onnx_name);
  values_[names[i]] = onnx_name;
  return onnx_name;
}

void TranslateContext::alias_output(size_t i, const std::string& value) {
  // Keep the FX name visible: an Identity costs nothing and keeps intermediates alignable.
  emit("Identity", {value}, {output(i)});
}

std::string TranslateContext::cast_if_needed(const std::string& value, DType from, DType to) {
  if (from == to || to == DType::kUndefined) return value;
  const std::string out = temp("cast");
  set_attr(emit("Cast", {value}, {out}), "to", static_cast<int64_t>(to));
  return out;
}

}  // namespace parity::exporter
