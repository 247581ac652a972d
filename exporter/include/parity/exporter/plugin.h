// The exporter's plugin API: translations for ops Parity does not know (a TORCH_LIBRARY custom op, or an
// ATen overload it lacks), compiled into your own shared library and loaded at export time with
// `parity export --plugin libmine.so` (ExportOptions::plugins; case.json "export_plugins" for verify).
//
//   #include "parity/exporter/plugin.h"
//   namespace px = parity::exporter;
//   void translate_scaled_tanh(px::TranslateContext& ctx) {        // one FX node -> ONNX nodes
//     const std::string x = ctx.tensor("x");                        // inputs by schema argument name
//     const std::string alpha = ctx.constant(ctx.float_arg("alpha", 1.0), ctx.input_meta("x").dtype);
//     ctx.emit("Mul", {ctx.emit1("Tanh", {x}), alpha}, {ctx.output()});  // output() = the FX name
//   }
//   PARITY_TRANSLATION("my_ns::scaled_tanh.default", translate_scaled_tanh, 18);  // key, fn, min opset
//
// The key is the op's "<namespace>::<op>.<overload>" (torch.ops.my_ns.scaled_tanh.default). The
// registration runs when the library is loaded (a static initialiser); a plugin key that is already
// registered replaces the built-in translation. See exporter/src/translate.h for every TranslateContext
// helper and scenarios/custom_ops/parity_demo_translations.cc for a complete plugin.
//
// Unlike export.h this header exposes protobuf types (TranslateContext::emit returns the appended
// onnx::NodeProto, for attributes through set_attr): build the plugin against the same generated
// onnx-ml.pb.h as libparity_exporter.so (link the CMake target parity_exporter, or add <build>/gen,
// exporter/include, exporter/src and common/include to the include path and link libparity_exporter.so),
// and keep libtorch headers out of the plugin's translation units (they carry their own protobuf).
#pragma once
#include "../../../src/translate.h"
