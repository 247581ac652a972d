// Internal: the ATen -> ONNX translation registry and the context a translation works with.
// One function per ATen overload; registered by one PARITY_TRANSLATION line next to it.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "builder.h"
#include "parity/exporter/program.h"

namespace parity::exporter {

class TranslateContext {
 public:
  // `fx_graph` is the graph `node` belongs to: the program's root graph or a subgraph (a cond branch, a
  // loop or scan body), whose value metadata it carries.
  TranslateContext(const pt2::Program& program, const pt2::Graph& fx_graph, const pt2::Node& node, GraphBuilder& graph,
                   int opset, std::map<std::string, std::string>& values)
      : program(program), fx_graph(fx_graph), node(node), graph(graph), opset(opset), values_(values) {}
  TranslateContext(const pt2::Program& program, const pt2::Node& node, GraphBuilder& graph, int opset,
                   std::map<std::string, std::string>& values)
      : TranslateContext(program, program.graph, node, graph, opset, values) {}

  const pt2::Program& program;
  const pt2::Graph& fx_graph;
  const pt2::Node& node;
  GraphBuilder& graph;
  const int opset;

  // --- arguments (by schema name; absent = the schema default) ---
  const pt2::Argument* arg(const std::string& name) const { return node.input(name); }
  bool has(const std::string& name) const { return arg(name) && !arg(name)->is_none(); }
  // The i-th serialized input (operator.* and torch.sym_* nodes name theirs a, b, ...).
  const pt2::Argument& positional(size_t i) const;
  const pt2::Argument& required(const std::string& name) const;
  std::string tensor(const std::string& name) const;  // ONNX value of a tensor argument
  std::vector<std::string> tensors(const std::string& name) const;
  int64_t int_arg(const std::string& name, int64_t fallback) const;
  std::optional<int64_t> optional_int(const std::string& name) const;
  std::vector<int64_t> ints_arg(const std::string& name, std::vector<int64_t> fallback = {}) const;
  double float_arg(const std::string& name, double fallback) const;
  bool bool_arg(const std::string& name, bool fallback) const;
  std::string string_arg(const std::string& name, const std::string& fallback) const;
  // A `ScalarType? dtype` argument (as_scalar_type, torch numbering) as a Parity dtype.
  std::optional<DType> dtype_arg(const std::string& name) const;
  // Rank of a tensor argument and a dim argument normalised into [0, rank).
  int64_t rank(const std::string& tensor_arg) const;
  int64_t normalized_dim(int64_t dim, int64_t rank) const;
  // Any tensor / number / symbolic argument as an ONNX value of dtype `to` (scalars stay rank 0).
  std::string value(const pt2::Argument& a, DType to);
  std::string value(const std::string& name, DType to) { return value(required(name), to); }
  // The dtype a non-tensor argument has in ONNX: int64 for ints, float64 for floats, bool for bools.
  DType dtype_of(const pt2::Argument& a) const;
  // A scalar constant of any dtype (narrow dtypes through a Cast).
  std::string constant(double v, DType dtype);
  // Metadata of a tensor argument / of the node's i-th tensor output.
  const pt2::TensorMeta& input_meta(const std::string& name) const;
  const pt2::TensorMeta& output_meta(size_t i = 0) const;
  // A sym-int or int-list argument as an ONNX int64 value (scalar / 1-D), static parts as constants.
  std::string int_value(const std::string& name) const;
  // `minus_one_as`: what a literal -1 in the list becomes (expand's "keep this dim" is 1 for ONNX Expand).
  std::string int_list_value(const std::string& name, std::optional<int64_t> minus_one_as = std::nullopt) const;

  // --- outputs ---
  // The ONNX value name of the node's i-th output (= its FX name, so both sides align).
  std::string output(size_t i = 0);
  size_t output_count() const { return output_names().size(); }
  // The dtype the i-th output has in ONNX (tensor meta, or int64/float64/bool for sym outputs).
  DType output_dtype(size_t i = 0) const;
  // Binds the node's i-th output to an existing ONNX value (no node emitted, e.g. a no-op view).
  void alias_output(size_t i, const std::string& value);
  // After an in-place op: later reads of the mutated tensor argument see `value`.
  void rebind(const std::string& tensor_arg, const std::string& value);
  // Outputs get fresh ONNX names even when their FX name is already bound (a write-back node whose
  // output is the new value of an existing FX tensor).
  void replace_bound_outputs() { replace_bound_outputs_ = true; }
  std::map<std::string, std::string>& values() { return values_; }
  // A fresh intermediate value name derived from the node.
  std::string temp(const std::string& hint) { return graph.unique_name(node.name + "_" + hint); }

  // --- emission ---
  onnx::NodeProto* emit(const std::string& op_type, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs) {
    return graph.add_node(op_type, inputs, outputs);
  }
  // Emits `op_type` with a single fresh output and returns its name.
  std::string emit1(const std::string& op_type, const std::vector<std::string>& inputs, const std::string& hint = "") {
    const std::string out = temp(hint.empty() ? op_type : hint);
    emit(op_type, inputs, {out});
    return out;
  }
  // Casts `value` (of dtype `from`) to `to` when they differ.
  std::string cast_if_needed(const std::string& value, DType from, DType to);

  [[noreturn]] void fail(const std::string& message) const;

 private:
  std::vector<std::pair<std::string, pt2::ArgKind>> output_names() const;  // (FX name or "", kind)
  std::string symbol_value(const std::string& symbol) const;  // the ONNX value bound to a SymInt/Float/Bool
  std::string sym_int_value(const pt2::schema::SymIntArgument& s) const;
  std::map<std::string, std::string>& values_;
  bool replace_bound_outputs_ = false;
};

// The value range of an integer dtype a quantization op can produce (int8, uint8, int16, uint16, int32);
// nullopt for any other (quantized.cc).
std::optional<std::pair<int64_t, int64_t>> quantized_dtype_range(DType t);

// Emission helpers shared by the op families.
std::string shape_of(TranslateContext& ctx, const std::string& v);
// One element of a 1-D int64 value as a rank-0 value.
std::string element(TranslateContext& ctx, const std::string& v, int64_t i);
std::string unsqueeze0(TranslateContext& ctx, const std::string& scalar);  // rank 0 -> [1]
// Concat of `parts` along `axis`; `hint` names the value.
std::string concat(TranslateContext& ctx, const std::vector<std::string>& parts, int64_t axis,
                   const std::string& hint = "concat");
// Elements [begin, end) of a 1-D value (a shape, a size list).
std::string slice_shape(TranslateContext& ctx, const std::string& shape, int64_t begin, int64_t end);
// v with its last two dimensions swapped (a Transpose; `rank` >= 2 is v's rank, `hint` names the value).
std::string transpose_last_two(TranslateContext& ctx, const std::string& v, int64_t rank, const std::string& hint);
// torch's type promotion of two operands (tensors win over scalars of the same kind).
DType promote(TranslateContext& ctx, const std::string& a, const std::string& b);
// query @ key^T * scale (`scale` argument or 1/sqrt(head dim)) for the unfused attention translations;
// `key` replaces the node's key (grouped-query heads repeated, repeat_kv_heads).
std::string attention_scores(TranslateContext& ctx, DType t, const std::string& key = "");
// enable_gqa's key / value [..., Hkv, S, E] with each head repeated Hq / Hkv times in place (torch's
// repeat_interleave on dim -3), Hq being query's dim -3: [..., Hq, S, E].
std::string repeat_kv_heads(TranslateContext& ctx, const std::string& kv);
// atan2(y, x) of two values of dtype `out` into `result` (torch's: 0 at (0, 0)).
void emit_atan2(TranslateContext& ctx, const std::string& y, const std::string& x, DType out,
                const std::string& result);
onnx::NodeProto* emit_reduce(TranslateContext& ctx, const std::string& op, const std::string& x,
                             const std::vector<int64_t>& axes, bool keepdims, const std::string& out);

using TranslateFn = void (*)(TranslateContext&);
class PluginContext;
using PluginTranslateFn = void (*)(PluginContext&);

struct Translation {
  TranslateFn fn = nullptr;
  PluginTranslateFn plugin_fn = nullptr;  // a plugin's translation (parity/exporter/plugin.h), run instead
  int min_opset = 0;
  // Derived by the in-place rule: `fn` is the functional form, the result is rebound to `self` after it.
  bool in_place = false;

  void run(TranslateContext& ctx) const;
};

// The translation of a registry key at an export opset: of the versions registered for the key, the one
// with the highest min_opset <= opset; when every version needs a newer opset, the oldest (its min_opset
// says which opset is needed). nullopt when the key has no translation. Besides the registered keys, one
// rule covers every in-place overload: "aten::relu_.default" is "aten::relu.default" plus the rebinding
// of `self`.
std::optional<Translation> find_translation(const std::string& key, int opset);

// When `view_fx` was produced by a view op (slice, select, view, unsqueeze, ...), its new value is written
// back into the view's base, and so on up the chain: `x[:2, :3] = 1` is fill_ on slice(slice(x)).
void write_back_to_base(TranslateContext& ctx, const std::string& view_fx);

// After the functional form of an in-place op ran: the mutated `self` is rebound to the result and
// written back into the tensor it is a view of.
void rebind_in_place_result(TranslateContext& ctx);

// An in-place overload registered explicitly (its functional form has another key, e.g. fill_.Scalar).
template <TranslateFn functional>
void in_place(TranslateContext& ctx) {
  functional(ctx);
  rebind_in_place_result(ctx);
}

// The registries are filled by registrars (static initialisers of this library and of plugins) and read by
// find_translation / registered_translations, all under one reader-writer lock (translate.cc): use them
// through those functions, never directly, once more than one thread runs.
// Registry keyed by "aten::<op>.<overload>": the versions of a key by min_opset (one registrar object per
// translation; a key may have one version per opset where ONNX gained a better operator).
std::map<std::string, std::map<int, Translation>>& translation_registry();
struct TranslationRegistrar {
  TranslationRegistrar(const char* key, TranslateFn fn, int min_opset);
};
// A plugin's registration replaces every built-in version of the key.
void register_plugin_translation(const char* key, PluginTranslateFn fn, int min_opset);
// Runs a plugin translation on the node `ctx` translates (src/plugin_context.cc).
void run_plugin_translation(PluginTranslateFn fn, TranslateContext& ctx);

// Complex values (torch complex64 / complex128) are carried as float32 / float64 with one more, trailing
// dim of 2 (real, imaginary): the layout of ONNX's DFT. A node that reads or writes a complex tensor runs
// the key's complex translation (PARITY_COMPLEX_TRANSLATION), or its real one when that is registered as
// correct on the pair layout (PARITY_COMPLEX_TRANSPARENT: ops that move whole elements along dims counted
// from the tensor meta, such as slice or cat); any other op on a complex value is refused, never translated
// as if the value were real.
bool is_complex(const pt2::TensorMeta& meta);
// The dtype of the real and imaginary parts of a complex meta (kUndefined for a real one).
DType complex_part_dtype(const pt2::TensorMeta& meta);
bool node_touches_complex(const pt2::Graph& fx_graph, const pt2::Node& node);
std::optional<Translation> find_complex_translation(const std::string& key, int opset);
std::map<std::string, std::map<int, Translation>>& complex_translation_registry();
struct ComplexTranslationRegistrar {
  ComplexTranslationRegistrar(const char* key, TranslateFn fn, int min_opset);
  explicit ComplexTranslationRegistrar(const char* transparent_key);
};

// Aliases: keys whose computation and argument names are those of another key (aten::__and__.Tensor is
// aten::bitwise_and.Tensor), resolved at lookup so that registration order across files does not matter.
std::map<std::string, std::string>& alias_registry();
struct AliasRegistrar {
  AliasRegistrar(const char* key, const char* target);
};

#define PARITY_CONCAT_INNER(a, b) a##b
#define PARITY_CONCAT(a, b) PARITY_CONCAT_INNER(a, b)
#define PARITY_TRANSLATION(key, fn, min_opset) \
  static const ::parity::exporter::TranslationRegistrar PARITY_CONCAT(parity_translation_, __LINE__)(key, fn, min_opset)

#define PARITY_COMPLEX_TRANSLATION(key, fn, min_opset)                                                           \
  static const ::parity::exporter::ComplexTranslationRegistrar PARITY_CONCAT(parity_complex_, __LINE__)(key, fn, \
                                                                                                        min_opset)
#define PARITY_COMPLEX_TRANSPARENT(key) \
  static const ::parity::exporter::ComplexTranslationRegistrar PARITY_CONCAT(parity_complex_, __LINE__)(key)

}  // namespace parity::exporter

#define PARITY_ALIAS(key, target) \
  static const ::parity::exporter::AliasRegistrar PARITY_CONCAT(parity_alias_, __LINE__)(key, target)
