#include "plugins.h"

#include <dlfcn.h>

#include <filesystem>
#include <set>

#include "parity/error.h"

namespace parity::exporter {

void load_translation_plugins(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  for (const auto& given : paths) {
    // An absolute path: dlopen() would search the library path for a bare name, not the working directory.
    std::error_code ec;
    const std::string path = fs::absolute(given, ec).string();
    if (ec || !fs::is_regular_file(path, ec)) throw Error({"export", given}, "cannot load export plugin: no such file");
    if (!dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      const char* why = dlerror();
      throw Error({"export", given}, std::string("cannot load export plugin: ") + (why ? why : "dlopen failed"));
    }
  }
}

std::optional<std::pair<std::string, std::string>> custom_op_of(const std::string& fx_target) {
  // Besides torch's own namespaces: the quantization libraries whose ops Parity translates to standard ONNX.
  // An op of theirs without a translation is a scheme ONNX cannot hold, refused with an error, never emitted
  // as a custom-domain node no runtime can run.
  static const std::set<std::string> builtin = {
      "aten",     "prims",    "higher_order", "_operator",           "math", "torch", "sym",
      "builtins", "operator", "torchao",      "quantized_decomposed"};
  const pt2::OpTarget t = pt2::OpTarget::parse(fx_target);
  if (!t.torch_ops || t.ns.empty() || t.op.empty() || builtin.count(t.ns)) return std::nullopt;
  return std::make_pair(t.ns, t.op);
}

namespace {

bool is_symbolic(const pt2::Argument& a) {
  if (a.is(pt2::ArgKind::as_sym_ints)) {
    for (const auto& s : a.typed().as_sym_ints())
      if (s.kind() == pt2::schema::SymIntArgument::Kind::as_name) return true;
    return false;
  }
  return a.is_symbolic_scalar();
}

}  // namespace

void emit_custom_domain_node(TranslateContext& ctx, const std::string& domain, const std::string& op_type) {
  std::vector<std::string> inputs;
  std::vector<std::pair<std::string, const pt2::Argument*>> attributes;
  for (const auto& in : ctx.node.inputs) {
    const pt2::Argument& a = in.arg;
    if (a.is_none()) continue;
    if (a.is_tensor())
      inputs.push_back(ctx.tensor(in.name));
    else if (a.is(pt2::ArgKind::as_tensors))
      for (const auto& t : ctx.tensors(in.name)) inputs.push_back(t);
    else if (a.is(pt2::ArgKind::as_optional_tensors))
      for (const auto& t : a.optional_tensor_names()) {
        if (t && !ctx.values().count(*t)) ctx.fail("argument '" + in.name + "' refers to unknown value '" + *t + "'");
        inputs.push_back(t ? ctx.values().at(*t) : "");
      }
    else if (is_symbolic(a) && a.is(pt2::ArgKind::as_sym_ints))
      inputs.push_back(ctx.int_list_value(in.name));
    else if (is_symbolic(a))
      inputs.push_back(ctx.value(a, ctx.dtype_of(a)));
    else
      attributes.emplace_back(in.name, &a);
  }
  std::vector<std::string> outputs;
  for (size_t i = 0; i < ctx.output_count(); ++i) outputs.push_back(ctx.output(i));
  onnx::NodeProto* n = ctx.emit(op_type, inputs, outputs);
  n->set_domain(domain);
  for (const auto& [name, a] : attributes) {
    // Static symbolic scalars (a SymInt holding a value) are attributes like plain ones.
    using K = pt2::ArgKind;
    const K k = a->kind();
    if (k == K::as_int || k == K::as_sym_int)
      set_attr(n, name, a->as_int());
    else if (k == K::as_float || k == K::as_sym_float)
      set_attr(n, name, static_cast<float>(a->as_float()));
    else if (k == K::as_bool || k == K::as_sym_bool)
      set_attr(n, name, int64_t{a->as_bool() ? 1 : 0});
    else if (k == K::as_string)
      set_attr(n, name, a->as_string());
    else if (k == K::as_ints || k == K::as_sym_ints)
      set_attr(n, name, a->as_ints());
    else if (k == K::as_bools) {
      std::vector<int64_t> v;
      for (const bool b : a->typed().as_bools()) v.push_back(b ? 1 : 0);
      set_attr(n, name, v);
    } else if (k == K::as_floats) {
      auto* attr = n->add_attribute();
      attr->set_name(name);
      attr->set_type(onnx::AttributeProto::FLOATS);
      for (const double x : a->as_floats()) attr->add_floats(static_cast<float>(x));
    } else if (k == K::as_scalar_type) {
      set_attr(n, name, static_cast<int64_t>(*ctx.dtype_arg(name)));
    } else if (k == K::as_device) {
      set_attr(n, name, a->typed().as_device().type);
    } else {
      ctx.fail("argument '" + name + "' of kind " + a->kind_name() + " cannot be an attribute of a custom-domain node");
    }
  }
}

}  // namespace parity::exporter
