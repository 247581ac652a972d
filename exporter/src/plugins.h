// Internal: exporter plugins (shared libraries that register translations, see
// include/parity/exporter/plugin.h) and the fallback for custom ops nobody translates.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "translate.h"

namespace parity::exporter {

// dlopen()s each library (RTLD_NOW); its static initialisers register its translations. Libraries stay
// loaded (the registry holds their function pointers); loading one twice is harmless. Throws
// parity::Error (stage "export", the file, dlerror()'s text) when a file is missing or cannot load.
void load_translation_plugins(const std::vector<std::string>& paths);

// (domain, op) of an op of a custom namespace ("torch.ops.parity_demo.scaled_tanh.default" ->
// ("parity_demo", "scaled_tanh")); nullopt for aten, prims, higher_order, _operator, math, torch/sym
// targets and anything that is not a torch.ops target.
std::optional<std::pair<std::string, std::string>> custom_op_of(const std::string& fx_target);

// Emits the FX node as one `domain::op_type` node: tensor arguments become inputs in schema order
// (a tensor list contributes each element, a None in an optional-tensor list an empty input), symbolic
// scalars become rank-0 inputs at their place, static scalars and lists become attributes named after the
// schema argument (bool -> int, dtype -> ONNX TensorProto type), None arguments are omitted.
void emit_custom_domain_node(TranslateContext& ctx, const std::string& domain, const std::string& op_type);

}  // namespace parity::exporter
