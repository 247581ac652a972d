// An exporter plugin (`parity export --plugin libparity_demo_translations.so`): the ONNX translation of
// the demo custom op parity_demo::scaled_tanh(x, alpha) = alpha * tanh(x). No libtorch here: a plugin
// includes parity/exporter/plugin.h only and links libparity_exporter.so.
#include "parity/exporter/plugin.h"

namespace {

namespace px = parity::exporter;

void translate_scaled_tanh(px::PluginContext& ctx) {
  const std::string x = ctx.tensor("x");
  const std::string alpha = ctx.constant(ctx.float_arg("alpha", 1.0), ctx.dtype("x"));
  const std::string tanh = ctx.emit1("Tanh", {x});
  ctx.emit("Mul", {tanh, alpha}, {ctx.output()});
}

PARITY_PLUGIN_TRANSLATION("parity_demo::scaled_tanh.default", translate_scaled_tanh, 18);

}  // namespace
