// PluginContext: the narrow face of TranslateContext that plugins see (parity/exporter/plugin.h).
#include "parity/exporter/plugin.h"

#include "translate.h"

namespace parity::exporter {

bool PluginContext::has(const std::string& name) const { return ctx_.has(name); }
std::string PluginContext::tensor(const std::string& name) const { return ctx_.tensor(name); }
std::vector<std::string> PluginContext::tensors(const std::string& name) const { return ctx_.tensors(name); }
int64_t PluginContext::int_arg(const std::string& name, int64_t fallback) const { return ctx_.int_arg(name, fallback); }
std::vector<int64_t> PluginContext::ints_arg(const std::string& name, std::vector<int64_t> fallback) const {
  return ctx_.ints_arg(name, std::move(fallback));
}
double PluginContext::float_arg(const std::string& name, double fallback) const {
  return ctx_.float_arg(name, fallback);
}
bool PluginContext::bool_arg(const std::string& name, bool fallback) const { return ctx_.bool_arg(name, fallback); }
std::string PluginContext::string_arg(const std::string& name, const std::string& fallback) const {
  return ctx_.string_arg(name, fallback);
}
DType PluginContext::dtype(const std::string& tensor_arg) const { return ctx_.input_meta(tensor_arg).dtype; }

std::vector<std::optional<int64_t>> PluginContext::shape(const std::string& tensor_arg) const {
  std::vector<std::optional<int64_t>> out;
  for (const auto& d : ctx_.input_meta(tensor_arg).sizes) out.push_back(d.value);
  return out;
}

int PluginContext::opset() const { return ctx_.opset; }
size_t PluginContext::output_count() const { return ctx_.output_count(); }
std::string PluginContext::output(size_t i) { return ctx_.output(i); }
DType PluginContext::output_dtype(size_t i) const { return ctx_.output_dtype(i); }
std::string PluginContext::constant(double v, DType dtype) { return ctx_.constant(v, dtype); }
std::string PluginContext::constant_ints(const std::vector<int64_t>& v) { return ctx_.graph.constant_i64(v); }

void PluginContext::emit(const std::string& op_type, const std::vector<std::string>& inputs,
                         const std::vector<std::string>& outputs, const std::vector<Attribute>& attributes,
                         const std::string& domain) {
  onnx::NodeProto* n = ctx_.emit(op_type, inputs, outputs);
  if (!domain.empty()) n->set_domain(domain);
  for (const auto& a : attributes) {
    if (const auto* i = std::get_if<int64_t>(&a.value))
      set_attr(n, a.name, *i);
    else if (const auto* f = std::get_if<float>(&a.value))
      set_attr(n, a.name, *f);
    else if (const auto* s = std::get_if<std::string>(&a.value))
      set_attr(n, a.name, *s);
    else if (const auto* is = std::get_if<std::vector<int64_t>>(&a.value))
      set_attr(n, a.name, *is);
    else {
      auto* attr = n->add_attribute();
      attr->set_name(a.name);
      attr->set_type(onnx::AttributeProto::FLOATS);
      for (const float x : std::get<std::vector<float>>(a.value)) attr->add_floats(x);
    }
  }
}

std::string PluginContext::emit1(const std::string& op_type, const std::vector<std::string>& inputs,
                                 const std::vector<Attribute>& attributes, const std::string& domain) {
  const std::string out = ctx_.temp(op_type);
  emit(op_type, inputs, {out}, attributes, domain);
  return out;
}

void PluginContext::fail(const std::string& message) const { ctx_.fail(message); }

void run_plugin_translation(PluginTranslateFn fn, TranslateContext& ctx) {
  PluginContext plugin(ctx);
  fn(plugin);
}

}  // namespace parity::exporter
