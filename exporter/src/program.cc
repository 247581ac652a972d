// Accessors of the PT2 program IR.
#include <cmath>
#include <limits>
#include <regex>
#include <set>

#include "parity/error.h"
#include "parity/exporter/program.h"
#include "parity/sym_expr.h"

namespace parity::pt2 {

namespace {
[[noreturn]] void wrong_kind(const Argument& a, const char* wanted) {
  throw Error({"pt2"}, std::string("expected ") + wanted + " argument, got " + a.describe());
}

double json_float(const json& v) {
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s == "Infinity") return std::numeric_limits<double>::infinity();
    if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
    if (s == "NaN") return std::nan("");
    throw Error({"pt2"}, "bad float literal '" + s + "'");
  }
  return v.get<double>();
}
}  // namespace

std::string Argument::tensor_name() const {
  if (kind != "as_tensor") wrong_kind(*this, "tensor");
  return value.at("name").get<std::string>();
}

std::vector<std::string> Argument::tensor_names() const {
  if (kind != "as_tensors") wrong_kind(*this, "tensor list");
  std::vector<std::string> out;
  for (const auto& t : value) out.push_back(t.at("name").get<std::string>());
  return out;
}

std::vector<std::optional<std::string>> Argument::optional_tensor_names() const {
  if (kind == "as_tensors") {
    std::vector<std::optional<std::string>> out;
    for (const auto& n : tensor_names()) out.emplace_back(n);
    return out;
  }
  if (kind != "as_optional_tensors") wrong_kind(*this, "optional tensor list");
  std::vector<std::optional<std::string>> out;
  for (const auto& t : value) {
    if (t.contains("as_tensor")) out.emplace_back(t["as_tensor"].at("name").get<std::string>());
    else out.emplace_back(std::nullopt);
  }
  return out;
}

int64_t Argument::as_int() const {
  if (kind == "as_int") return value.get<int64_t>();
  if (kind == "as_sym_int" && value.contains("as_int")) return value["as_int"].get<int64_t>();
  wrong_kind(*this, "int");
}

std::vector<int64_t> Argument::as_ints() const {
  if (kind == "as_ints") return value.get<std::vector<int64_t>>();
  if (kind == "as_sym_ints") {
    std::vector<int64_t> out;
    for (const auto& v : value) {
      if (!v.contains("as_int")) wrong_kind(*this, "static int list");
      out.push_back(v["as_int"].get<int64_t>());
    }
    return out;
  }
  wrong_kind(*this, "int list");
}

double Argument::as_float() const {
  if (kind == "as_float") return json_float(value);
  if (kind == "as_int") return static_cast<double>(value.get<int64_t>());
  wrong_kind(*this, "float");
}

bool Argument::as_bool() const {
  if (kind == "as_bool") return value.get<bool>();
  wrong_kind(*this, "bool");
}

std::string Argument::describe() const {
  std::string payload = value.dump();
  if (payload.size() > 80) payload = payload.substr(0, 77) + "...";
  return (kind.empty() ? "<empty>" : kind) + " " + payload;
}

const Argument* Node::input(const std::string& arg_name) const {
  for (const auto& in : inputs)
    if (in.name == arg_name) return &in.arg;
  return nullptr;
}

std::string Node::stack_trace() const {
  auto it = metadata.find("stack_trace");
  return it == metadata.end() ? "" : it->second;
}

const TensorMeta& Graph::meta(const std::string& tensor, const std::string& where) const {
  auto it = tensor_values.find(tensor);
  if (it == tensor_values.end()) throw Error({"pt2", "", where}, "no tensor_values entry for '" + tensor + "'");
  return it->second;
}

std::vector<std::string> Program::user_input_names() const {
  std::vector<std::string> out;
  for (const auto& s : input_specs)
    if (s.kind == InputSpec::Kind::kUserInput && s.arg.kind == "as_tensor") out.push_back(s.arg.tensor_name());
  return out;
}

std::vector<std::string> Program::user_output_names() const {
  std::vector<std::string> out;
  for (const auto& s : output_specs)
    if (s.kind == OutputSpec::Kind::kUserOutput && s.arg.kind == "as_tensor") out.push_back(s.arg.tensor_name());
  return out;
}

namespace {

// "torch.ops.aten.add_.Tensor" -> "add_"
std::string op_name(const std::string& target) {
  const auto last = target.rfind('.');
  if (last == std::string::npos || last == 0) return "";
  const auto prev = target.rfind('.', last - 1);
  return target.substr(prev == std::string::npos ? 0 : prev + 1, last - (prev == std::string::npos ? 0 : prev + 1));
}

bool is_in_place(const std::string& target) {
  const std::string op = op_name(target);
  return target.rfind("torch.ops.aten.", 0) == 0 && op.size() > 1 && op.back() == '_' && op[op.size() - 2] != '_';
}

bool is_view(const std::string& target) {
  static const std::set<std::string> views = {"slice", "select", "view", "_unsafe_view", "unsqueeze", "squeeze", "alias",
                                              "as_strided", "t", "transpose", "permute", "expand", "diagonal", "narrow",
                                              "unfold", "detach"};
  return target.rfind("torch.ops.aten.", 0) == 0 && views.count(op_name(target)) != 0;
}

}  // namespace

const Tensor& Program::stored_tensor(const InputSpec& spec) const {
  using Kind = InputSpec::Kind;
  const bool with_weights = spec.kind == Kind::kParameter || (spec.kind == Kind::kBuffer && spec.persistent);
  const auto& first = with_weights ? weights : constants;
  const auto& second = with_weights ? constants : weights;
  if (auto it = first.find(spec.target); it != first.end()) return it->second;
  if (auto it = second.find(spec.target); it != second.end()) return it->second;  // older writers mixed them
  const char* kind = spec.kind == Kind::kParameter ? "parameter"
                     : spec.kind == Kind::kBuffer  ? (spec.persistent ? "buffer" : "non-persistent buffer")
                                                   : "tensor constant";
  throw Error({"pt2", archive_path}, std::string(kind) + " '" + spec.target + "' (graph input '" +
                                        spec.arg.describe() + "') has no stored data in data/weights/ or data/constants/");
}

std::vector<Program::Mutation> Program::mutations() const {
  std::vector<Mutation> out;
  std::set<std::string> seen;  // output names
  for (const auto& s : output_specs) {
    if (s.arg.kind != "as_tensor") continue;
    const char* prefix = s.kind == OutputSpec::Kind::kBufferMutation      ? "mutated_buffer."
                         : s.kind == OutputSpec::Kind::kParameterMutation ? "mutated_parameter."
                         : s.kind == OutputSpec::Kind::kUserInputMutation ? "mutated_input."
                                                                          : nullptr;
    if (prefix && seen.insert(prefix + s.target).second) out.push_back({s.arg.tensor_name(), prefix + s.target});
  }
  // Training IR (not functionalised) keeps in-place ops and lists no mutation outputs: the placeholder an
  // in-place op writes (directly or through a chain of views) holds the new state after the graph.
  std::map<std::string, const Node*> producer;
  for (const auto& n : graph.nodes)
    for (const auto& o : n.outputs)
      if (o.kind == "as_tensor") producer[o.tensor_name()] = &n;
  std::set<std::string> written;
  auto mark = [&](std::string t) {
    for (auto it = producer.find(t); it != producer.end() && is_view(it->second->target); it = producer.find(t)) {
      const Argument* base = it->second->input("self");
      if (!base || !base->is_tensor()) break;
      t = base->tensor_name();
    }
    written.insert(t);
  };
  for (const auto& n : graph.nodes) {
    if (is_in_place(n.target) && !n.inputs.empty() && n.inputs[0].arg.is_tensor()) mark(n.inputs[0].arg.tensor_name());
    // Batch norm in training mode writes its running statistics (a mutable argument, not `self`).
    const std::string op = op_name(n.target);
    const Argument* training = n.input("training");
    if ((op == "batch_norm" || op == "_native_batch_norm_legit" || op == "native_batch_norm") && training &&
        training->kind == "as_bool" && training->as_bool())
      for (const char* arg : {"running_mean", "running_var"})
        if (const Argument* a = n.input(arg); a && a->is_tensor()) mark(a->tensor_name());
  }
  for (const auto& s : input_specs) {
    if (s.arg.kind != "as_tensor" || !written.count(s.arg.tensor_name())) continue;
    const std::string name = s.kind == InputSpec::Kind::kBuffer      ? "mutated_buffer." + s.target
                             : s.kind == InputSpec::Kind::kParameter ? "mutated_parameter." + s.target
                             : s.kind == InputSpec::Kind::kUserInput ? "mutated_input." + s.arg.tensor_name()
                                                                     : "";
    if (!name.empty() && seen.insert(name).second) out.push_back({s.arg.tensor_name(), name});
  }
  return out;
}

DType dtype_from_torch(int32_t t) {
  switch (t) {
    case 1: return DType::kUInt8;
    case 2: return DType::kInt8;
    case 3: return DType::kInt16;
    case 4: return DType::kInt32;
    case 5: return DType::kInt64;
    case 6: return DType::kFloat16;
    case 7: return DType::kFloat32;
    case 8: return DType::kFloat64;
    case 12: return DType::kBool;
    case 13: return DType::kBFloat16;
    case 28: return DType::kUInt16;
    case 34: return DType::kUInt32;
    case 35: return DType::kUInt64;
    default: return DType::kUndefined;
  }
}

std::string simplify_sym_expr(const std::string& expr) {
  static const std::regex symbol(R"(Symbol\('([A-Za-z_][A-Za-z0-9_]*)'[^)]*\))");
  static const std::regex integer(R"(Integer\((-?[0-9]+)\))");
  std::string s = std::regex_replace(expr, symbol, "$1");
  s = std::regex_replace(s, integer, "$1");
  return srepr_to_infix(s);
}

}  // namespace parity::pt2
