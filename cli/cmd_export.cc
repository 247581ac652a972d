// parity export: .pt2 → .onnx.
#include <iostream>

#include "command.h"
#include "parity/error.h"
#include "parity/exporter/export.h"

namespace parity::cli {
namespace {

int cmd_export(const std::vector<std::string>& argv) {
  Args args(argv, {"-o", "--output", "--opset", "--input-names", "--output-names", "--plugin"},
            {"--drop-mutations", "--report", "--no-optimize"});
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
  if (args.has("--report")) {
    // The report is written whether the export succeeds or not; a failure still exits with its code.
    const std::string report = exporter::report_path_for(out);
    try {
      exporter::export_file(args.positional()[0], out, options);
    } catch (const Error& e) {
      exporter::write_export_report(args.positional()[0], options, &e, report);
      std::cerr << "parity: wrote the failure report " << report << "\n";
      throw;
    }
    exporter::write_export_report(args.positional()[0], options, nullptr, report);
    std::cout << "wrote " << report << "\n";
  } else {
    exporter::export_file(args.positional()[0], out, options);
  }
  std::cout << "wrote " << out << " (opset " << options.opset << ")\n";
  return kExitOk;
}

}  // namespace

PARITY_COMMAND("export", 10, "export MODEL.pt2 -o MODEL.onnx [--opset N] [--input-names a,b] [--output-names y] [--drop-mutations] [--report]\n"
               "       [--plugin LIB.so]... [--no-optimize]",
               "convert a torch.export program (.pt2) to ONNX", cmd_export);

}  // namespace parity::cli
