#include "translate.h"

#include <algorithm>
#include <mutex>
#include <set>
#include <shared_mutex>

#include "parity/error.h"
#include "parity/exporter/export.h"

namespace parity::exporter {

// Registrations happen at static initialisation, of the library or of a plugin being dlopen()ed while other
// threads export: writers take this lock exclusively, lookups shared.
std::shared_mutex& registry_mutex() {
  static std::shared_mutex m;
  return m;
}

std::map<std::string, std::map<int, Translation>>& translation_registry() {
  static std::map<std::string, std::map<int, Translation>> registry;
  return registry;
}

std::map<std::string, std::string>& alias_registry() {
  static std::map<std::string, std::string> aliases;
  return aliases;
}

AliasRegistrar::AliasRegistrar(const char* key, const char* target) {
  std::unique_lock lock(registry_mutex());
  alias_registry()[key] = target;
}

std::map<std::string, std::map<int, Translation>>& complex_translation_registry() {
  static std::map<std::string, std::map<int, Translation>> registry;
  return registry;
}

std::set<std::string>& complex_transparent_keys() {
  static std::set<std::string> keys;
  return keys;
}

std::vector<std::string> registered_translations() {
  std::shared_lock lock(registry_mutex());
  std::vector<std::string> keys;
  for (const auto& [key, t] : translation_registry()) keys.push_back(key);
  for (const auto& [key, target] : alias_registry())
    if (!translation_registry().count(key) && translation_registry().count(target)) keys.push_back(key);
  for (const auto& [key, t] : complex_translation_registry())
    if (!translation_registry().count(key)) keys.push_back(key);  // ops that only ever see complex values
  std::sort(keys.begin(), keys.end());
  return keys;
}

namespace {

// "aten::relu_.default" -> "aten::relu.default"; nullopt for keys that are not in-place overloads
// (dunder names such as "__and__" end in an underscore too).
std::optional<std::string> functional_key(const std::string& key) {
  const auto colons = key.find("::");
  if (colons == std::string::npos) return std::nullopt;
  pt2::OpTarget t = pt2::OpTarget::parse("torch.ops." + key.substr(0, colons) + "." + key.substr(colons + 2));
  if (!t.is_in_place() || t.op.rfind("__", 0) == 0) return std::nullopt;
  t.op.pop_back();
  return t.key();
}

// The version of a registered key (or of the key an alias names) for `opset`; a plugin's registration
// of the alias key itself wins over the alias.
const Translation* registered(
    const std::string& key, int opset,
    const std::map<std::string, std::map<int, Translation>>& registry = translation_registry()) {
  auto it = registry.find(key);
  if (it == registry.end())
    if (auto alias = alias_registry().find(key); alias != alias_registry().end()) it = registry.find(alias->second);
  if (it == registry.end() || it->second.empty()) return nullptr;
  const auto& versions = it->second;
  auto newest = versions.upper_bound(opset);  // the first version that needs a newer opset
  return newest == versions.begin() ? &newest->second : &std::prev(newest)->second;
}

}  // namespace

std::optional<Translation> find_translation(const std::string& key, int opset) {
  std::shared_lock lock(registry_mutex());
  if (const Translation* t = registered(key, opset)) return *t;
  const auto functional = functional_key(key);
  const Translation* t = functional ? registered(*functional, opset) : nullptr;
  if (!t) return std::nullopt;
  Translation derived = *t;
  derived.in_place = true;
  return derived;
}

void Translation::run(TranslateContext& ctx) const {
  if (plugin_fn)
    run_plugin_translation(plugin_fn, ctx);
  else
    fn(ctx);
  if (in_place) rebind_in_place_result(ctx);
}

std::optional<Translation> find_complex_translation(const std::string& key, int opset) {
  std::shared_lock lock(registry_mutex());
  if (const Translation* t = registered(key, opset, complex_translation_registry())) return *t;
  if (complex_transparent_keys().count(key))
    if (const Translation* t = registered(key, opset)) return *t;
  return std::nullopt;
}

bool has_translation(const std::string& key) {
  return find_translation(key, kMaxOpset).has_value() || find_complex_translation(key, kMaxOpset).has_value();
}

ComplexTranslationRegistrar::ComplexTranslationRegistrar(const char* key, TranslateFn fn, int min_opset) {
  std::unique_lock lock(registry_mutex());
  complex_translation_registry()[key][min_opset] = Translation{fn, nullptr, min_opset, false};
}

ComplexTranslationRegistrar::ComplexTranslationRegistrar(const char* transparent_key) {
  std::unique_lock lock(registry_mutex());
  complex_transparent_keys().insert(transparent_key);
}

// ComplexHalf (9) is carried as float16 pairs; complex64 (10) and complex128 (11) as float32 / float64.
bool is_complex(const pt2::TensorMeta& meta) {
  return meta.torch_dtype == 9 || meta.torch_dtype == 10 || meta.torch_dtype == 11;
}

DType complex_part_dtype(const pt2::TensorMeta& meta) {
  switch (meta.torch_dtype) {
    case 9:
      return DType::kFloat16;
    case 10:
      return DType::kFloat32;
    case 11:
      return DType::kFloat64;
    default:
      return DType::kUndefined;
  }
}

bool node_touches_complex(const pt2::Graph& fx_graph, const pt2::Node& node) {
  auto complex_value = [&](const std::string& name) {
    const auto it = fx_graph.tensor_values.find(name);
    return it != fx_graph.tensor_values.end() && is_complex(it->second);
  };
  auto complex_arg = [&](const pt2::Argument& a) {
    if (a.is_tensor()) return complex_value(a.tensor_name());
    if (a.is(pt2::ArgKind::as_tensors))
      for (const auto& t : a.tensor_names())
        if (complex_value(t)) return true;
    return false;
  };
  for (const auto& in : node.inputs)
    if (complex_arg(in.arg)) return true;
  for (const auto& out : node.outputs)
    if (complex_arg(out)) return true;
  return false;
}

TranslationRegistrar::TranslationRegistrar(const char* key, TranslateFn fn, int min_opset) {
  std::unique_lock lock(registry_mutex());
  translation_registry()[key][min_opset] = Translation{fn, nullptr, min_opset, false};
}

void register_plugin_translation(const char* key, PluginTranslateFn fn, int min_opset) {
  std::unique_lock lock(registry_mutex());
  translation_registry()[key] = {{min_opset, Translation{nullptr, fn, min_opset, false}}};
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

const pt2::Argument& TranslateContext::positional(size_t i) const {
  if (i >= node.inputs.size()) fail("missing input #" + std::to_string(i));
  return node.inputs[i].arg;
}

std::string TranslateContext::string_arg(const std::string& name, const std::string& fallback) const {
  const pt2::Argument* a = arg(name);
  if (!a || a->is_none()) return fallback;
  if (!a->is(pt2::ArgKind::as_string)) fail("argument '" + name + "' must be a string, got " + a->describe());
  return a->as_string();
}

std::optional<DType> TranslateContext::dtype_arg(const std::string& name) const {
  const pt2::Argument* a = arg(name);
  if (!a || a->is_none()) return std::nullopt;
  if (!a->is(pt2::ArgKind::as_scalar_type)) fail("argument '" + name + "' must be a dtype, got " + a->describe());
  const DType t = pt2::dtype_from_torch(static_cast<int32_t>(a->typed().as_scalar_type()));
  if (t == DType::kUndefined) fail("argument '" + name + "': dtype " + a->describe() + " has no ONNX equivalent here");
  return t;
}

int64_t TranslateContext::rank(const std::string& tensor_arg) const {
  return static_cast<int64_t>(input_meta(tensor_arg).sizes.size());
}

int64_t TranslateContext::normalized_dim(int64_t dim, int64_t rank) const {
  const int64_t r = rank == 0 ? 1 : rank;
  if (dim < -r || dim >= r) fail("dim " + std::to_string(dim) + " out of range for rank " + std::to_string(rank));
  return dim < 0 ? dim + r : dim;
}

DType TranslateContext::dtype_of(const pt2::Argument& a) const {
  if (a.is_tensor()) return fx_graph.meta(a.tensor_name(), node.name).dtype;
  if (a.is(pt2::ArgKind::as_int) || a.is(pt2::ArgKind::as_sym_int)) return DType::kInt64;
  if (a.is(pt2::ArgKind::as_float) || a.is(pt2::ArgKind::as_sym_float)) return DType::kFloat64;
  if (a.is(pt2::ArgKind::as_bool) || a.is(pt2::ArgKind::as_sym_bool)) return DType::kBool;
  fail("argument " + a.describe() + " is not a number");
}

std::string TranslateContext::constant(double v, DType dtype) {
  const bool direct = dtype == DType::kFloat32 || dtype == DType::kFloat64 || dtype == DType::kInt64 ||
                      dtype == DType::kInt32 || dtype == DType::kBool;
  const std::string c = graph.constant_scalar(v, dtype);
  return direct ? c : cast_if_needed(c, DType::kFloat32, dtype);
}

std::string TranslateContext::value(const pt2::Argument& a, DType to) {
  if (a.is_tensor()) {
    auto it = values_.find(a.tensor_name());
    if (it == values_.end()) fail("refers to unknown value '" + a.tensor_name() + "'");
    return cast_if_needed(it->second, dtype_of(a), to);
  }
  if (a.is(pt2::ArgKind::as_int)) return constant(static_cast<double>(a.as_int()), to);
  if (a.is(pt2::ArgKind::as_float)) return constant(a.as_float(), to);
  if (a.is(pt2::ArgKind::as_bool)) return constant(a.as_bool() ? 1.0 : 0.0, to);
  if (a.is_symbolic_scalar()) return cast_if_needed(symbol_value(a.symbol()), dtype_of(a), to);
  if (a.is(pt2::ArgKind::as_sym_int)) return constant(static_cast<double>(a.as_int()), to);
  if (a.is(pt2::ArgKind::as_sym_float)) return constant(a.as_float(), to);
  if (a.is(pt2::ArgKind::as_sym_bool)) return constant(a.as_bool() ? 1.0 : 0.0, to);
  fail("argument " + a.describe() + " is not a tensor or number");
}

bool TranslateContext::bool_arg(const std::string& name, bool fallback) const {
  const pt2::Argument* a = arg(name);
  if (!a || a->is_none()) return fallback;
  return a->as_bool();
}

const pt2::TensorMeta& TranslateContext::input_meta(const std::string& name) const {
  const pt2::Argument& a = required(name);
  if (!a.is_tensor()) fail("argument '" + name + "' is not a tensor");
  return fx_graph.meta(a.tensor_name(), node.name);
}

std::vector<std::pair<std::string, pt2::ArgKind>> TranslateContext::output_names() const {
  std::vector<std::pair<std::string, pt2::ArgKind>> names;
  for (const auto& out : node.outputs) {
    if (out.is_tensor())
      names.emplace_back(out.tensor_name(), out.kind());
    else if (out.is(pt2::ArgKind::as_tensors))
      for (const auto& n : out.tensor_names()) names.emplace_back(n, pt2::ArgKind::as_tensor);
    else if (out.is_symbolic_scalar())
      names.emplace_back(out.symbol(), out.kind());
    else
      names.emplace_back("", out.kind());  // an output nobody reads
  }
  return names;
}

const pt2::TensorMeta& TranslateContext::output_meta(size_t i) const {
  const auto names = output_names();
  if (i >= names.size() || names[i].second != pt2::ArgKind::as_tensor)
    fail("has no tensor output #" + std::to_string(i));
  return fx_graph.meta(names[i].first, node.name);
}

DType TranslateContext::output_dtype(size_t i) const {
  const auto names = output_names();
  if (i >= names.size()) fail("has no output #" + std::to_string(i));
  if (names[i].second == pt2::ArgKind::as_sym_int) return DType::kInt64;
  if (names[i].second == pt2::ArgKind::as_sym_float) return DType::kFloat64;
  if (names[i].second == pt2::ArgKind::as_sym_bool) return DType::kBool;
  return output_meta(i).dtype;
}

std::string TranslateContext::symbol_value(const std::string& symbol) const {
  auto it = values_.find(symbol);
  if (it == values_.end()) fail("symbolic value '" + symbol + "' is not defined before use");
  return it->second;
}

std::string TranslateContext::sym_int_value(const pt2::schema::SymIntArgument& s) const {
  if (s.kind() == pt2::schema::SymIntArgument::Kind::as_int) return graph.constant_i64({s.as_int()}, true);
  return symbol_value(s.as_name());
}

std::string TranslateContext::int_value(const std::string& name) const {
  const pt2::Argument& a = required(name);
  if (a.is(pt2::ArgKind::as_int)) return graph.constant_i64({a.as_int()}, true);
  if (a.is(pt2::ArgKind::as_sym_int)) return sym_int_value(a.typed().as_sym_int());
  fail("argument '" + name + "' is not an int: " + a.describe());
}

std::string TranslateContext::int_list_value(const std::string& name, std::optional<int64_t> minus_one_as) const {
  const pt2::Argument& a = required(name);
  const auto literal = [&](int64_t v) { return v == -1 && minus_one_as ? *minus_one_as : v; };
  const auto constant = [&] {
    auto v = a.as_ints();
    for (auto& d : v) d = literal(d);
    return graph.constant_i64(v);
  };
  if (a.is(pt2::ArgKind::as_ints)) return constant();
  if (!a.is(pt2::ArgKind::as_sym_ints)) fail("argument '" + name + "' is not an int list: " + a.describe());
  using SymKind = pt2::schema::SymIntArgument::Kind;
  const auto& items = a.typed().as_sym_ints();
  bool all_static = true;
  for (const auto& s : items) all_static = all_static && s.kind() == SymKind::as_int;
  if (all_static) return constant();
  // Mixed static/symbolic: unsqueeze each scalar to [1] and concatenate.
  std::vector<std::string> parts;
  const std::string axes = graph.constant_i64({0});
  for (const auto& s : items) {
    if (s.kind() == SymKind::as_int) {
      parts.push_back(graph.constant_i64({literal(s.as_int())}));
    } else {
      const std::string out = graph.unique_name(node.name + "_dim");
      graph.add_node("Unsqueeze", {symbol_value(s.as_name()), axes}, {out});
      parts.push_back(out);
    }
  }
  const std::string out = graph.unique_name(node.name + "_shape");
  onnx::NodeProto* concat = graph.add_node("Concat", parts, {out});
  set_attr(concat, "axis", int64_t{0});
  return out;
}

std::string TranslateContext::output(size_t i) {
  const auto names = output_names();
  if (i >= names.size()) fail("has no output #" + std::to_string(i));
  const std::string& fx = names[i].first;
  if (fx.empty()) return temp("unused");
  auto it = values_.find(fx);
  if (it != values_.end() && !replace_bound_outputs_) return it->second;
  const std::string onnx_name = graph.is_used(fx) ? graph.unique_name(fx) : fx;
  graph.reserve_name(onnx_name);
  values_[fx] = onnx_name;
  return onnx_name;
}

void TranslateContext::rebind(const std::string& tensor_arg, const std::string& value) {
  values_[required(tensor_arg).tensor_name()] = value;
}

namespace {

// The node that produced `fx` and which of its tensor outputs it is (split and unbind make several).
const pt2::Node* producer_of(const pt2::Graph& graph, const std::string& fx, size_t& element) {
  for (const auto& node : graph.nodes)
    for (const auto& out : node.outputs) {
      if (out.is(pt2::ArgKind::as_tensor) && out.tensor_name() == fx) return element = 0, &node;
      if (out.is(pt2::ArgKind::as_tensors)) {
        const auto names = out.tensor_names();
        for (size_t i = 0; i < names.size(); ++i)
          if (names[i] == fx) return element = i, &node;
      }
    }
  return nullptr;
}

bool target_is(const pt2::Node& node, const std::string& op_and_overload) {
  const pt2::OpTarget t = pt2::OpTarget::parse(node.target);
  return t.op + "." + t.overload == op_and_overload;
}

pt2::Argument int_argument(int64_t v) {
  pt2::schema::Argument a;
  a.set_as_int(v);
  return pt2::Argument(std::move(a));
}

// Writes `updated` (the view's new value) into the base through the functional scatter of the view
// (slice_scatter / select_scatter), run as a synthetic node whose output is the base's new value.
void scatter_into_base(TranslateContext& ctx, const pt2::Node& view, const std::string& view_fx, bool slice,
                       const std::vector<std::pair<const char*, pt2::Argument>>& where) {
  const std::string base_fx = view.input("self")->tensor_name();
  pt2::Node scatter;
  scatter.name = view.name + "_write_back";
  scatter.target = slice ? "torch.ops.aten.slice_scatter.default" : "torch.ops.aten.select_scatter.default";
  scatter.metadata = ctx.node.metadata;
  constexpr auto positional = pt2::schema::ArgumentKind::POSITIONAL;
  scatter.inputs.push_back({"self", *view.input("self"), positional});
  scatter.inputs.push_back({"src", pt2::Argument::tensor(view_fx), positional});
  for (const auto& [name, arg] : where) scatter.inputs.push_back({name, arg, positional});
  scatter.outputs.push_back(pt2::Argument::tensor(base_fx));
  const std::string key = slice ? "aten::slice_scatter.default" : "aten::select_scatter.default";
  TranslateContext sub(ctx.program, ctx.fx_graph, scatter, ctx.graph, ctx.opset, ctx.values());
  sub.replace_bound_outputs();
  find_translation(key, ctx.opset)->run(sub);
}

std::vector<std::pair<const char*, pt2::Argument>> view_arguments(const pt2::Node& view,
                                                                  std::initializer_list<const char*> names) {
  std::vector<std::pair<const char*, pt2::Argument>> out;
  for (const char* name : names)
    if (const pt2::Argument* a = view.input(name)) out.emplace_back(name, *a);
  return out;
}

}  // namespace

void write_back_to_base(TranslateContext& ctx, const std::string& view_fx) {
  size_t element = 0;
  const pt2::Node* view = producer_of(ctx.fx_graph, view_fx, element);
  // A graph input, a value from outside or a computed tensor (clone, add): the write stays in this tensor.
  if (!view || !pt2::is_view_target(view->target)) return;
  const pt2::Argument* base = view->input("self");
  if (!base || !base->is_tensor()) return;
  const std::string base_fx = base->tensor_name();
  auto& values = ctx.values();
  const std::string updated = values.at(view_fx);
  const std::string op = pt2::OpTarget::parse(view->target).op;
  auto rebind_base = [&](const std::string& onnx_op, std::vector<std::string> inputs) {
    const std::string out = ctx.graph.unique_name(base_fx);
    ctx.graph.reserve_name(out);
    onnx::NodeProto* node = ctx.emit(onnx_op, std::move(inputs), {out});
    values[base_fx] = out;
    return node;
  };
  static const std::set<std::string> reshape_like = {"view",  "_unsafe_view", "unsqueeze", "squeeze",
                                                     "alias", "detach",       "view_as",   "unflatten"};
  if (reshape_like.count(op)) {
    rebind_base("Reshape", {updated, ctx.emit1("Shape", {values.at(base_fx)}, "base_shape")});
  } else if (op == "transpose" || op == "t" || op == "permute") {
    const int64_t rank = static_cast<int64_t>(ctx.fx_graph.meta(base_fx, "write back").sizes.size());
    std::vector<int64_t> perm(static_cast<size_t>(rank));
    for (int64_t i = 0; i < rank; ++i) perm[static_cast<size_t>(i)] = i;
    auto axis = [&](int64_t d) { return d < 0 ? d + rank : d; };
    if (op == "permute") {
      const auto dims = view->input("dims")->as_ints();
      for (size_t i = 0; i < dims.size(); ++i) perm[static_cast<size_t>(axis(dims[i]))] = static_cast<int64_t>(i);
    } else if (rank >= 2) {
      const int64_t a = op == "t" ? 0 : axis(view->input("dim0")->as_int());
      const int64_t b = op == "t" ? 1 : axis(view->input("dim1")->as_int());
      std::swap(perm[static_cast<size_t>(a)], perm[static_cast<size_t>(b)]);
    }
    set_attr(rebind_base("Transpose", {updated}), "perm", perm);  // the inverse permutation
  } else if (op == "slice") {
    scatter_into_base(ctx, *view, view_fx, true, view_arguments(*view, {"dim", "start", "end", "step"}));
  } else if (op == "select") {
    scatter_into_base(ctx, *view, view_fx, false, view_arguments(*view, {"dim", "index"}));
  } else if (op == "unbind") {
    auto where = view_arguments(*view, {"dim"});
    where.emplace_back("index", int_argument(static_cast<int64_t>(element)));
    scatter_into_base(ctx, *view, view_fx, false, where);
  } else if (op == "split" || op == "split_with_sizes") {
    int64_t start = 0, size = 0;
    if (op == "split") {
      size = view->input("split_size")->as_int();
      start = size * static_cast<int64_t>(element);
    } else {
      const auto sizes = view->input("split_sizes")->as_ints();
      for (size_t i = 0; i < element; ++i) start += sizes[i];
      size = sizes.at(element);
    }
    auto where = view_arguments(*view, {"dim"});
    where.emplace_back("start", int_argument(start));
    where.emplace_back("end", int_argument(start + size));
    scatter_into_base(ctx, *view, view_fx, true, where);
  } else {
    ctx.fail("writes in place into '" + view_fx + "', a `" + op + "` view of '" + base_fx +
             "'; Parity cannot write such a view back into its base (the base would keep its old value)");
  }
  write_back_to_base(ctx, base_fx);
}

void rebind_in_place_result(TranslateContext& ctx) {
  ctx.rebind("self", ctx.output());
  write_back_to_base(ctx, ctx.required("self").tensor_name());
}

void TranslateContext::alias_output(size_t i, const std::string& value) {
  // Keep the FX name visible: an Identity costs nothing and keeps intermediates alignable.
  emit("Identity", {value}, {output(i)});
}

std::string shape_of(TranslateContext& ctx, const std::string& v) { return ctx.emit1("Shape", {v}, "shape"); }

std::string element(TranslateContext& ctx, const std::string& v, int64_t i) {
  auto* g = ctx.emit("Gather", {v, ctx.graph.constant_i64({i}, true)}, {ctx.temp("dim")});
  set_attr(g, "axis", int64_t{0});
  return g->output(0);
}

std::string transpose_last_two(TranslateContext& ctx, const std::string& v, int64_t rank, const std::string& hint) {
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < rank - 2; ++i) perm.push_back(i);
  perm.push_back(rank - 1);
  perm.push_back(rank - 2);
  auto* node = ctx.emit("Transpose", {v}, {ctx.temp(hint)});
  set_attr(node, "perm", perm);
  return node->output(0);
}

std::string unsqueeze0(TranslateContext& ctx, const std::string& scalar) {
  return ctx.emit1("Unsqueeze", {scalar, ctx.graph.constant_i64({0})}, "unsqueeze");
}

std::string concat(TranslateContext& ctx, const std::vector<std::string>& parts, int64_t axis,
                   const std::string& hint) {
  const std::string out = ctx.temp(hint);
  set_attr(ctx.emit("Concat", parts, {out}), "axis", axis);
  return out;
}

std::string slice_shape(TranslateContext& ctx, const std::string& shape, int64_t begin, int64_t end) {
  return ctx.emit1("Slice", {shape, ctx.graph.constant_i64({begin}), ctx.graph.constant_i64({end})});
}

namespace {
int promotion_rank(DType t) {
  switch (t) {
    case DType::kBool:
      return 0;
    case DType::kUInt8:
    case DType::kInt8:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kInt64:
    case DType::kUInt16:
    case DType::kUInt32:
    case DType::kUInt64:
      return 1;
    default:
      return 2;
  }
}
}  // namespace

DType promote(TranslateContext& ctx, const std::string& a_name, const std::string& b_name) {
  const pt2::Argument& a = ctx.required(a_name);
  const pt2::Argument& b = ctx.required(b_name);
  const DType ta = ctx.dtype_of(a), tb = ctx.dtype_of(b);
  if (a.is_tensor() && b.is_tensor()) {
    const auto& ma = ctx.input_meta(a_name);
    const auto& mb = ctx.input_meta(b_name);
    // A 0-dim tensor yields to a dimensioned one of the same kind, as in torch.result_type.
    const bool za = ma.sizes.empty(), zb = mb.sizes.empty();
    if (za != zb && promotion_rank(ta) == promotion_rank(tb)) return za ? tb : ta;
    if (promotion_rank(ta) != promotion_rank(tb)) return promotion_rank(ta) > promotion_rank(tb) ? ta : tb;
    if (ta == tb) return ta;
    return dtype_size(ta) >= dtype_size(tb) ? ta : tb;
  }
  const bool a_tensor = a.is_tensor();
  const DType tensor_t = a_tensor ? ta : tb, scalar_t = a_tensor ? tb : ta;
  if (!a.is_tensor() && !b.is_tensor()) return promotion_rank(ta) >= promotion_rank(tb) ? ta : tb;
  if (promotion_rank(scalar_t) > promotion_rank(tensor_t))
    return scalar_t == DType::kFloat64 ? DType::kFloat32 : scalar_t;
  return tensor_t;
}

onnx::NodeProto* emit_reduce(TranslateContext& ctx, const std::string& op, const std::string& x,
                             const std::vector<int64_t>& axes, bool keepdims, const std::string& out) {
  std::vector<std::string> inputs = {x};
  if (!axes.empty()) inputs.push_back(ctx.graph.constant_i64(axes));
  auto* n = ctx.emit(op, inputs, {out});
  set_attr(n, "keepdims", int64_t{keepdims ? 1 : 0});
  return n;
}

std::string TranslateContext::cast_if_needed(const std::string& value, DType from, DType to) {
  if (from == to || to == DType::kUndefined) return value;
  const std::string out = temp("cast");
  set_attr(emit("Cast", {value}, {out}), "to", static_cast<int64_t>(to));
  return out;
}

}  // namespace parity::exporter
