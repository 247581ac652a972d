// Accessors of the PT2 program IR.
#include <cmath>
#include <limits>
#include <regex>
#include <set>
#include <sstream>

#include "parity/error.h"
#include "parity/exporter/program.h"

#include "in_place_aliases.h"
#include "parity/sym_expr.h"

namespace parity::pt2 {

Argument Argument::tensor(const std::string& name) {
  schema::Argument a;
  a.set_as_tensor(schema::TensorArgument{name});
  return Argument(std::move(a));
}

void Argument::wrong_kind(const char* wanted) const {
  throw Error({"pt2"}, std::string("expected ") + wanted + " argument, got " + describe());
}

bool Argument::is_symbolic_scalar() const {
  switch (kind()) {
    case ArgKind::as_sym_int:
      return a_.as_sym_int().kind() == schema::SymIntArgument::Kind::as_name;
    case ArgKind::as_sym_float:
      return a_.as_sym_float().kind() == schema::SymFloatArgument::Kind::as_name;
    case ArgKind::as_sym_bool:
      return a_.as_sym_bool().kind() == schema::SymBoolArgument::Kind::as_name;
    default:
      return false;
  }
}

std::string Argument::tensor_name() const {
  if (!is(ArgKind::as_tensor)) wrong_kind("tensor");
  return a_.as_tensor().name;
}

std::vector<std::string> Argument::tensor_names() const {
  if (!is(ArgKind::as_tensors)) wrong_kind("tensor list");
  std::vector<std::string> out;
  for (const auto& t : a_.as_tensors()) out.push_back(t.name);
  return out;
}

std::vector<std::optional<std::string>> Argument::optional_tensor_names() const {
  std::vector<std::optional<std::string>> out;
  if (is(ArgKind::as_tensors)) {
    for (const auto& n : tensor_names()) out.emplace_back(n);
    return out;
  }
  if (!is(ArgKind::as_optional_tensors)) wrong_kind("optional tensor list");
  for (const auto& t : a_.as_optional_tensors()) {
    if (t.is(schema::OptionalTensorArgument::Kind::as_tensor))
      out.emplace_back(t.as_tensor().name);
    else
      out.emplace_back(std::nullopt);
  }
  return out;
}

int64_t Argument::as_int() const {
  if (is(ArgKind::as_int)) return a_.as_int();
  if (is(ArgKind::as_sym_int) && !is_symbolic_scalar()) return a_.as_sym_int().as_int();
  wrong_kind("int");
}

std::vector<int64_t> Argument::as_ints() const {
  if (is(ArgKind::as_ints)) return a_.as_ints();
  if (!is(ArgKind::as_sym_ints)) wrong_kind("int list");
  std::vector<int64_t> out;
  for (const auto& v : a_.as_sym_ints()) {
    if (v.kind() != schema::SymIntArgument::Kind::as_int) wrong_kind("static int list");
    out.push_back(v.as_int());
  }
  return out;
}

double Argument::as_float() const {
  if (is(ArgKind::as_float)) return a_.as_float();
  if (is(ArgKind::as_int)) return static_cast<double>(a_.as_int());
  if (is(ArgKind::as_sym_float) && !is_symbolic_scalar()) return a_.as_sym_float().as_float();
  wrong_kind("float");
}

std::vector<double> Argument::as_floats() const {
  if (!is(ArgKind::as_floats)) wrong_kind("float list");
  return a_.as_floats();
}

bool Argument::as_bool() const {
  if (is(ArgKind::as_bool)) return a_.as_bool();
  if (is(ArgKind::as_sym_bool) && !is_symbolic_scalar()) return a_.as_sym_bool().as_bool();
  wrong_kind("bool");
}

size_t Argument::list_length() const {
  switch (kind()) {
    case ArgKind::as_tensors:
      return a_.as_tensors().size();
    case ArgKind::as_ints:
      return a_.as_ints().size();
    case ArgKind::as_floats:
      return a_.as_floats().size();
    case ArgKind::as_strings:
      return a_.as_strings().size();
    case ArgKind::as_sym_ints:
      return a_.as_sym_ints().size();
    case ArgKind::as_bools:
      return a_.as_bools().size();
    case ArgKind::as_sym_bools:
      return a_.as_sym_bools().size();
    case ArgKind::as_sym_floats:
      return a_.as_sym_floats().size();
    case ArgKind::as_optional_tensors:
      return a_.as_optional_tensors().size();
    default:
      wrong_kind("list");
  }
}

const std::string& Argument::as_string() const {
  if (!is(ArgKind::as_string)) wrong_kind("string");
  return a_.as_string();
}

std::string Argument::symbol() const {
  if (!is_symbolic_scalar()) wrong_kind("symbolic scalar");
  if (is(ArgKind::as_sym_int)) return a_.as_sym_int().as_name();
  if (is(ArgKind::as_sym_float)) return a_.as_sym_float().as_name();
  return a_.as_sym_bool().as_name();
}

Graph Argument::subgraph() const {
  if (!is(ArgKind::as_graph)) wrong_kind("graph");
  // A subgraph may write its own temporaries in place (a while_loop body's clone); torch refuses writes
  // to a subgraph's inputs, so there are no output specs to follow.
  Graph g = to_graph(a_.as_graph().graph);
  std::vector<OutputSpec> none;
  resolve_in_place_aliases(g, none);
  return g;
}

namespace {

template <class T>
std::string join_list(const std::vector<T>& items, size_t limit = 8) {
  std::string out = "[";
  for (size_t i = 0; i < items.size() && i < limit; ++i) {
    std::ostringstream s;
    s << items[i];
    out += (i ? ", " : "") + s.str();
  }
  return out + (items.size() > limit ? ", ...]" : "]");
}

std::string sym_text(const schema::SymIntArgument& s) {
  return s.kind() == schema::SymIntArgument::Kind::as_name ? s.as_name() : std::to_string(s.as_int());
}

}  // namespace

std::string Argument::describe() const {
  const std::string payload = value_text();
  if (is_none()) return payload;
  return std::string(kind_name()) + (payload.empty() ? "" : " " + payload);
}

std::string Argument::value_text() const {
  std::string payload;
  switch (kind()) {
    case ArgKind::unset:
      return "<absent>";
    case ArgKind::as_none:
      return "None";
    case ArgKind::as_tensor:
      payload = a_.as_tensor().name;
      break;
    case ArgKind::as_tensors:
      payload = join_list(tensor_names());
      break;
    case ArgKind::as_int:
      payload = std::to_string(a_.as_int());
      break;
    case ArgKind::as_ints:
      payload = join_list(a_.as_ints());
      break;
    case ArgKind::as_float:
      payload = join_list(std::vector<double>{a_.as_float()});
      break;
    case ArgKind::as_floats:
      payload = join_list(a_.as_floats());
      break;
    case ArgKind::as_bool:
      payload = a_.as_bool() ? "True" : "False";
      break;
    case ArgKind::as_string:
      payload = "'" + a_.as_string().substr(0, 60) + "'";
      break;
    case ArgKind::as_sym_int:
      payload = sym_text(a_.as_sym_int());
      break;
    case ArgKind::as_sym_ints: {
      std::vector<std::string> items;
      for (const auto& s : a_.as_sym_ints()) items.push_back(sym_text(s));
      payload = join_list(items);
      break;
    }
    case ArgKind::as_scalar_type:
      payload = std::to_string(static_cast<int64_t>(a_.as_scalar_type()));
      break;
    case ArgKind::as_device:
      payload = a_.as_device().type;
      break;
    case ArgKind::as_custom_obj:
      payload = a_.as_custom_obj().name;
      break;
    case ArgKind::as_operator:
      payload = a_.as_operator();
      break;
    case ArgKind::as_bools:
      payload = join_list(a_.as_bools());
      break;
    case ArgKind::as_graph:
      payload = "<subgraph>";
      break;
    default:
      payload = "<" + std::string(kind_name()) + ">";
      break;
  }
  return payload;
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
    if (s.kind == InputSpec::Kind::kUserInput && s.arg.is_tensor()) out.push_back(s.arg.tensor_name());
  return out;
}

bool Argument::is_number() const {
  switch (kind()) {
    case ArgKind::as_int:
    case ArgKind::as_float:
    case ArgKind::as_bool:
    case ArgKind::as_sym_int:
    case ArgKind::as_sym_float:
    case ArgKind::as_sym_bool:
      return true;
    default:
      return false;
  }
}

std::vector<Argument> Program::user_outputs() const {
  std::vector<Argument> out;
  for (const auto& s : output_specs)
    if (s.kind == OutputSpec::Kind::kUserOutput && (s.arg.is_tensor() || s.arg.is_number())) out.push_back(s.arg);
  return out;
}

std::vector<std::string> Program::user_output_names() const {
  std::vector<std::string> out;
  for (const auto& a : user_outputs())
    out.push_back(a.is_tensor() ? a.tensor_name() : a.is_symbolic_scalar() ? a.symbol() : std::string());
  return out;
}

namespace {}  // namespace

bool is_view_target(const std::string& fx_target) {
  static const std::set<std::string> views = {
      "slice", "select",           "view",    "_unsafe_view", "unsqueeze", "squeeze", "alias",        "as_strided",
      "t",     "transpose",        "permute", "expand",       "diagonal",  "narrow",  "unfold",       "detach",
      "split", "split_with_sizes", "unbind",  "chunk",        "view_as",   "movedim", "tensor_split", "unflatten"};
  const OpTarget t = OpTarget::parse(fx_target);
  return t.is_aten() && views.count(t.op) != 0;
}

OpTarget OpTarget::parse(const std::string& fx_target) {
  static const std::string prefix = "torch.ops.";
  OpTarget t;
  t.torch_ops = fx_target.rfind(prefix, 0) == 0;
  const std::string rest = t.torch_ops ? fx_target.substr(prefix.size()) : fx_target;
  const auto d1 = rest.find('.');
  t.ns = rest.substr(0, d1);
  if (d1 == std::string::npos) return t;
  const auto d2 = rest.find('.', d1 + 1);
  t.op = rest.substr(d1 + 1, d2 == std::string::npos ? std::string::npos : d2 - d1 - 1);
  if (d2 != std::string::npos) t.overload = rest.substr(d2 + 1);
  return t;
}

std::string OpTarget::key() const {
  if (op.empty()) return ns;
  return ns + "::" + op + (overload.empty() ? "" : "." + overload);
}

std::string OpTarget::qualified() const {
  if (op.empty()) return ns;
  return ns + "." + op + (overload.empty() ? "" : "." + overload);
}

bool OpTarget::is_in_place() const {
  return is_aten() && op.size() > 1 && op.back() == '_' && op[op.size() - 2] != '_';
}

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
  throw Error({"pt2", archive_path}, std::string(kind) + " '" + spec.target + "' (graph input '" + spec.arg.describe() +
                                         "') has no stored data in data/weights/ or data/constants/");
}

std::vector<Program::Mutation> Program::mutations() const {
  std::vector<Mutation> out;
  std::set<std::string> seen;  // output names
  for (const auto& s : output_specs) {
    if (!s.arg.is(pt2::ArgKind::as_tensor)) continue;
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
    for (const auto& t : output_tensor_names(n)) producer[t] = &n;
  std::set<std::string> written;
  auto mark = [&](std::string t) {
    for (auto it = producer.find(t); it != producer.end() && is_view_target(it->second->target);
         it = producer.find(t)) {
      const Argument* base = it->second->input("self");
      if (!base || !base->is_tensor()) break;
      t = base->tensor_name();
    }
    written.insert(t);
  };
  for (const auto& n : graph.nodes)
    for (const auto& t : tensors_written_by(n)) mark(t);
  for (const auto& s : input_specs) {
    if (!s.arg.is(pt2::ArgKind::as_tensor) || !written.count(s.arg.tensor_name())) continue;
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
    case 1:
      return DType::kUInt8;
    case 2:
      return DType::kInt8;
    case 3:
      return DType::kInt16;
    case 4:
      return DType::kInt32;
    case 5:
      return DType::kInt64;
    case 6:
      return DType::kFloat16;
    case 7:
      return DType::kFloat32;
    case 8:
      return DType::kFloat64;
    case 12:
      return DType::kBool;
    case 13:
      return DType::kBFloat16;
    case 28:
      return DType::kUInt16;
    case 34:
      return DType::kUInt32;
    case 35:
      return DType::kUInt64;
    default:
      return DType::kUndefined;
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
