// parity export: .pt2 → .onnx.
#include <filesystem>
#include <iostream>

#include "command.h"
#include "parity/error.h"
#include "parity/exporter/export.h"

namespace parity::cli {
namespace {

struct ExportArgs {
  std::string model, out;
  exporter::ExportOptions options;
  std::vector<std::string> input_names, output_names, plugins;
  bool drop_mutations = false, report = false, no_optimize = false;
};

int run_export(ExportArgs& a) {
  need_argument(a.model, "one MODEL.pt2 argument");
  if (a.out.empty()) throw Error({"cli"}, "missing -o MODEL.onnx", ErrorKind::kUsage);
  exporter::ExportOptions& options = a.options;
  options.input_names = a.input_names;
  options.output_names = a.output_names;
  options.plugins = a.plugins;
  options.keep_mutations = !a.drop_mutations;
  options.optimize = !a.no_optimize;
  // External data: on request, and always for a model over protobuf's 2 GiB limit.
  options.external_data = options.external_data || !options.external_data_file.empty();
  bool external = false;
  // The program is read once here so that the opset the export resolves (auto: 18, or 21 for torchao's
  // quantization) is the one printed and reported.
  auto export_now = [&] {
    const pt2::Program program = pt2::read_pt2(a.model);
    options.opset = exporter::resolve_opset(program, options.opset);
    return exporter::export_program_to_file(program, a.out, options);
  };
  if (a.report) {
    // The report is written whether the export succeeds or not; a failure still exits with its code.
    const std::string report = exporter::report_path_for(a.out);
    try {
      external = export_now();
    } catch (const Error& e) {
      exporter::write_export_report(a.model, options, &e, report);
      std::cerr << "parity: wrote the failure report " << report << "\n";
      throw;
    }
    exporter::write_export_report(a.model, options, nullptr, report);
    std::cout << "wrote " << report << "\n";
  } else {
    external = export_now();
  }
  std::cout << "wrote " << a.out << " (opset " << options.opset << ")\n";
  if (external)
    std::cout << "wrote the weights as external data: "
              << (options.external_data_file.empty()
                      ? a.out + ".data"
                      : (std::filesystem::path(a.out).parent_path() / options.external_data_file).string())
              << "\n";
  return kExitOk;
}

std::function<int()> setup_export(CLI::App& app) {
  auto a = std::make_shared<ExportArgs>();
  CLI::App* cmd = app.add_subcommand("export", "convert a torch.export program (.pt2) to ONNX");
  cmd->add_option("MODEL.pt2", a->model, "the program, saved by torch.export.save");
  cmd->add_option("-o,--output", a->out, "the ONNX file to write (atomically)")->option_text("MODEL.onnx");
  add_opset_option(cmd, a->options.opset);
  cmd->add_option("--input-names", a->input_names, "ONNX input names, in order")
      ->delimiter(',')
      ->allow_extra_args(false);
  cmd->add_option("--output-names", a->output_names, "ONNX output names, in order")
      ->delimiter(',')
      ->allow_extra_args(false);
  cmd->add_option("--plugin", a->plugins, "exporter plugin library (repeatable, or a comma list)")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->option_text("LIB.so");
  cmd->add_flag("--drop-mutations", a->drop_mutations, "leave out the mutated buffers/inputs outputs");
  cmd->add_flag("--report", a->report, "write MODEL.report.md next to the output (also on failure)");
  cmd->add_flag("--no-optimize", a->no_optimize, "skip the exporter's graph passes");
  cmd->add_flag("--external-data", a->options.external_data,
                "write the weights to MODEL.onnx.data (always done for a model over 2 GiB)");
  cmd->add_option("--external-data-file", a->options.external_data_file,
                  "name of the external data file, next to the .onnx (implies --external-data)")
      ->option_text("NAME");
  cmd->add_option("--external-data-threshold", a->options.external_data_threshold,
                  "initializers of at least this many bytes go to the external data file")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str()
      ->option_text("BYTES");
  return [a] { return run_export(*a); };
}

}  // namespace

PARITY_SUBCOMMAND(10, setup_export);

}  // namespace parity::cli
