// The exporter's plugin API: translations for ops Parity does not know (a TORCH_LIBRARY custom op, or an
// ATen overload it lacks), compiled into your own shared library and loaded at export time with
// `parity export --plugin libmine.so` (ExportOptions::plugins; case.json "export_plugins" for verify).
//
//   #include "parity/exporter/plugin.h"
//   namespace px = parity::exporter;
//   void translate_scaled_tanh(px::PluginContext& ctx) {          // one FX node -> ONNX nodes
//     const std::string x = ctx.tensor("x");                        // inputs by schema argument name
//     const std::string alpha = ctx.constant(ctx.float_arg("alpha", 1.0), ctx.dtype("x"));
//     ctx.emit("Mul", {ctx.emit1("Tanh", {x}), alpha}, {ctx.output()});  // output() = the FX name
//   }
//   PARITY_PLUGIN_TRANSLATION("my_ns::scaled_tanh.default", translate_scaled_tanh, 18);  // key, fn, min opset
//
// The key is the op's "<namespace>::<op>.<overload>" (torch.ops.my_ns.scaled_tanh.default). The
// registration runs when the library is loaded (a static initialiser) and replaces any built-in
// translation of the key. This header is the whole surface: no protobuf, JSON or internal types, so a
// plugin needs only exporter/include and common/include and links libparity_exporter.so (the CMake target
// parity_exporter). See scenarios/custom_ops/parity_demo_translations.cc for a complete plugin.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "parity/dtype.h"

namespace parity::exporter {

class TranslateContext;  // internal

// An ONNX attribute of an emitted node.
struct Attribute {
  std::string name;
  std::variant<int64_t, float, std::string, std::vector<int64_t>, std::vector<float>> value;
};

// What a translation sees of one FX node, and how it adds ONNX nodes. Values are ONNX value names.
class PluginContext {
 public:
  explicit PluginContext(TranslateContext& ctx) : ctx_(ctx) {}

  // --- the node's arguments, by schema name (an absent or None argument takes the fallback) ---
  bool has(const std::string& name) const;
  std::string tensor(const std::string& name) const;
  std::vector<std::string> tensors(const std::string& name) const;
  int64_t int_arg(const std::string& name, int64_t fallback) const;
  std::vector<int64_t> ints_arg(const std::string& name, std::vector<int64_t> fallback = {}) const;
  double float_arg(const std::string& name, double fallback) const;
  bool bool_arg(const std::string& name, bool fallback) const;
  std::string string_arg(const std::string& name, const std::string& fallback) const;
  // Element type and shape of a tensor argument; a symbolic dim is nullopt.
  DType dtype(const std::string& tensor_arg) const;
  std::vector<std::optional<int64_t>> shape(const std::string& tensor_arg) const;
  int opset() const;  // the ONNX opset being exported

  // --- the node's outputs ---
  size_t output_count() const;
  std::string output(size_t i = 0);  // the ONNX name of output i (its FX name, so both sides align)
  DType output_dtype(size_t i = 0) const;

  // --- emission ---
  std::string constant(double v, DType dtype);               // a scalar constant
  std::string constant_ints(const std::vector<int64_t>& v);  // a 1-D int64 constant (shapes, axes)
  // Appends a node; `domain` empty = the ONNX domain (a custom domain is imported at version 1).
  void emit(const std::string& op_type, const std::vector<std::string>& inputs, const std::vector<std::string>& outputs,
            const std::vector<Attribute>& attributes = {}, const std::string& domain = "");
  // A node with one fresh output, whose name is returned.
  std::string emit1(const std::string& op_type, const std::vector<std::string>& inputs,
                    const std::vector<Attribute>& attributes = {}, const std::string& domain = "");
  // Stops the export with an error naming the node and its op.
  [[noreturn]] void fail(const std::string& message) const;

 private:
  TranslateContext& ctx_;
};

using PluginTranslateFn = void (*)(PluginContext&);
void register_plugin_translation(const char* key, PluginTranslateFn fn, int min_opset);

struct PluginTranslationRegistrar {
  PluginTranslationRegistrar(const char* key, PluginTranslateFn fn, int min_opset) {
    register_plugin_translation(key, fn, min_opset);
  }
};

}  // namespace parity::exporter

#define PARITY_PLUGIN_CONCAT_INNER(a, b) a##b
#define PARITY_PLUGIN_CONCAT(a, b) PARITY_PLUGIN_CONCAT_INNER(a, b)
#define PARITY_PLUGIN_TRANSLATION(key, fn, min_opset)                                                          \
  static const ::parity::exporter::PluginTranslationRegistrar PARITY_PLUGIN_CONCAT(parity_plugin_translation_, \
                                                                                   __LINE__)(key, fn, min_opset)
