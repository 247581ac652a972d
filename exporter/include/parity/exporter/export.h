// parity export: PT2 program -> ONNX model bytes. No protobuf or libtorch types in this header.
//
// Threads: every function here may be called from several threads at once, for different or the same
// programs, including exports that load plugins (ExportOptions::plugins): the translation registry is
// written only by registrars (this library's static initialisers, a plugin's while it is dlopen()ed) under
// an exclusive lock and read under a shared one. A pt2::Program is read-only during an export.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "parity/error.h"
#include "parity/exporter/program.h"

namespace parity::exporter {

constexpr int kDefaultOpset = 18;
constexpr int kMinOpset = 18;
constexpr int kMaxOpset = 23;
// ExportOptions::opset when the user named none: resolve_opset picks it from the program.
constexpr int kAutoOpset = 0;

struct ExportOptions {
  int opset = kAutoOpset;
  std::vector<std::string> input_names;   // overrides of the user inputs' ONNX names, in order
  std::vector<std::string> output_names;  // overrides of the user outputs' ONNX names, in order
  // Translation plugins (shared libraries, see parity/exporter/plugin.h) dlopen()ed before the export;
  // a file that is missing or cannot load is a parity::Error (stage "export") naming it.
  std::vector<std::string> plugins;
  // Buffer, parameter and user-input mutations become extra outputs after the user's
  // ("mutated_buffer.<fqn>", "mutated_input.<name>"); false drops them.
  bool keep_mutations = true;
  // Graph passes before serialisation: dead code, constant folding, CSE, identity removal, shape-chain
  // simplification (FX value names, inputs and outputs are kept; see exporter/src/passes.h).
  bool optimize = true;
  // When set, filled by the passes: each program value name the ONNX model no longer has because its value
  // lives on under another name (an Identity alias removed, a duplicate merged) -> that name.
  std::map<std::string, std::string>* value_aliases = nullptr;
  // ONNX external data (export_file / export_program_to_file only): initializers of at least
  // `external_data_threshold` bytes are written to `external_data_file` next to the .onnx (default
  // "<onnx file name>.data"), offsets aligned (64 KiB from 1 MiB up, else 64 bytes). Used when
  // `external_data` is set, and always when the model would be larger than `external_data_auto_bytes`
  // (protobuf's 2 GiB limit).
  bool external_data = false;
  std::string external_data_file;
  uint64_t external_data_threshold = 1024;
  uint64_t external_data_auto_bytes = 2147483647;
};

// Serialized ONNX ModelProto, all data inline (a model over 2 GiB is an error: use export_program_to_file).
// Throws parity::Error (stage "export") naming node, ATen target and reason; unsupported ops are
// collected first and reported together.
// `requested`, or for kAutoOpset: kDefaultOpset, raised to 21 when the program calls torchao's affine
// quantization ops (their group-wise weights need opset 21's blocked DequantizeLinear and INT4 tensors), to 20
// when it calls aten.gelu (ONNX's Gelu, one node instead of the erf or tanh formula), and to 22 when it holds
// bfloat16 tensors (ONNX allows bfloat16 in Conv, pooling and most activations from 22).
int resolve_opset(const pt2::Program& program, int requested);

std::string export_program(const pt2::Program& program, const ExportOptions& options = {});
// Exports and writes `onnx_path` (+ its external data file, see ExportOptions) atomically: temporary files
// renamed into place, nothing left behind on failure. Weights are streamed from the program's memory-mapped
// archive into the file(s), never all in memory at once. Returns true when external data was written.
bool export_program_to_file(const pt2::Program& program, const std::string& onnx_path,
                            const ExportOptions& options = {});
// read_pt2(pt2_path) + export_program_to_file.
bool export_file(const std::string& pt2_path, const std::string& onnx_path, const ExportOptions& options = {});

// Where the exporter's warnings go (one message per call, no trailing newline; e.g. a custom op emitted as a
// custom-domain node, once per op per process). Default (and after an empty sink): "parity: warning: "
// + message on standard error. The sink is called under the exporter's diagnostics lock, from whichever
// thread exports.
using DiagnosticSink = std::function<void(const std::string& message)>;
void set_diagnostic_sink(DiagnosticSink sink);

// Every registered translation key ("aten::add.Tensor", "_operator::add", ...), sorted.
std::vector<std::string> registered_translations();

// True when `key` has a translation: registered, or an in-place overload ("aten::relu_.default") whose
// functional form is registered.
bool has_translation(const std::string& key);

// "torch.ops.aten.linear.default" -> "aten::linear.default"
std::string registry_key(const std::string& fx_target);

}  // namespace parity::exporter

namespace parity::exporter {

// `parity export --report`: a Markdown report next to the ONNX file (MODEL.onnx -> MODEL.report.md).
std::string report_path_for(const std::string& onnx_path);
// Writes the report (atomically): the stage that failed and why (`failure` null after a successful export),
// every ATen overload without a translation with its count and each node's stack trace, the failing node's
// stack trace, the op histogram, and the program's graph listing.
void write_export_report(const std::string& pt2_path, const ExportOptions& options, const Error* failure,
                         const std::string& report_path);

}  // namespace parity::exporter
