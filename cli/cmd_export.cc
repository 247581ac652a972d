// parity export: .pt2 → .onnx.
#include <filesystem>
#include <iostream>

#include "command.h"
#include "parity/error.h"
#include "parity/exporter/export.h"

namespace parity::cli {
namespace {

int cmd_export(const std::vector<std::string>& argv) {
  Args args(argv, {"-o", "--output", "--opset", "--input-names", "--output-names", "--plugin", "--external-data-file",
                   "--external-data-threshold"},
            {"--drop-mutations", "--report", "--no-optimize", "--external-data"});
  need_positional(args, 1, "one MODEL.pt2 argument");
  const std::string out = args.get("-o", args.get("--output"));
  if (out.empty()) throw Error({"cli"}, "missing -o MODEL.onnx", ErrorKind::kUsage);
  exporter::ExportOptions options;
  options.opset = opset_option(args);
  options.input_names = args.get_list("--input-names");
  options.output_names = args.get_list("--output-names");
  options.plugins = args.get_all("--plugin");  // repeatable, or a comma list
  options.keep_mutations = !args.has("--drop-mutations");
  options.optimize = !args.has("--no-optimize");
  // External data: on request, and always for a model over protobuf's 2 GiB limit.
  options.external_data = args.has("--external-data") || args.has("--external-data-file");
  options.external_data_file = args.get("--external-data-file");
  if (args.has("--external-data-threshold")) {
    const std::string text = args.get("--external-data-threshold");
    size_t used = 0;
    unsigned long long v = 0;
    try {
      v = std::stoull(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (text.empty() || used != text.size() || text[0] == '-')
      throw Error({"cli"}, "--external-data-threshold needs a byte count, got '" + text + "'", ErrorKind::kUsage);
    options.external_data_threshold = v;
  }
  bool external = false;
  if (args.has("--report")) {
    // The report is written whether the export succeeds or not; a failure still exits with its code.
    const std::string report = exporter::report_path_for(out);
    try {
      external = exporter::export_file(args.positional()[0], out, options);
    } catch (const Error& e) {
      exporter::write_export_report(args.positional()[0], options, &e, report);
      std::cerr << "parity: wrote the failure report " << report << "\n";
      throw;
    }
    exporter::write_export_report(args.positional()[0], options, nullptr, report);
    std::cout << "wrote " << report << "\n";
  } else {
    external = exporter::export_file(args.positional()[0], out, options);
  }
  std::cout << "wrote " << out << " (opset " << options.opset << ")\n";
  if (external)
    std::cout << "wrote the weights as external data: "
              << (options.external_data_file.empty()
                      ? out + ".data"
                      : (std::filesystem::path(out).parent_path() / options.external_data_file).string())
              << "\n";
  return kExitOk;
}

}  // namespace

PARITY_COMMAND("export", 10, "export MODEL.pt2 -o MODEL.onnx [--opset N] [--input-names a,b] [--output-names y] [--drop-mutations] [--report]\n"
               "       [--plugin LIB.so]... [--no-optimize] [--external-data] [--external-data-file NAME]\n"
               "       [--external-data-threshold BYTES]",
               "convert a torch.export program (.pt2) to ONNX", cmd_export);

}  // namespace parity::cli
