// The `parity` command line: export, run, verify, matrix. Errors become one line and an exit code.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>

#include "args.h"
#include "parity/error.h"
#include "parity/exporter/export.h"
#include "parity/refrt/session.h"
#include "parity/tensor_io.h"
#include "parity/verify/compare.h"
#include "parity/verify/matrix.h"
#include "parity/verify/report.h"
#include "parity/verify/verify_case.h"

namespace fs = std::filesystem;

namespace parity::cli {
namespace {

constexpr const char* kUsage = R"(parity — export PyTorch programs to ONNX and prove that both compute the same numbers

usage:
  parity export MODEL.pt2 -o MODEL.onnx [--opset N] [--input-names a,b] [--output-names y]
  parity run MODEL.onnx --inputs DIR [--outputs DIR]
  parity verify CASE_DIR [--out DIR] [--opset N] [--quiet]
  parity matrix [--out DIR] [--filter REGEX] [--modes strict,nonstrict,decomposed] [--timeout SECONDS] [--force-capture]

exit codes: 0 ok, 1 verification failed, 2 usage, 3 bad input, 4 unsupported
)";

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

int opset_option(const Args& args) {
  const int opset = args.get_int("--opset", exporter::kDefaultOpset);
  if (opset < exporter::kMinOpset || opset > exporter::kMaxOpset)
    throw Error({"cli"}, "--opset must be between " + std::to_string(exporter::kMinOpset) + " and " +
                             std::to_string(exporter::kMaxOpset), ErrorKind::kUsage);
  return opset;
}

void need_positional(const Args& args, size_t n, const std::string& what) {
  if (args.positional().size() != n) throw Error({"cli"}, "expected " + what, ErrorKind::kUsage);
}

int cmd_export(const std::vector<std::string>& argv) {
  Args args(argv, {"-o", "--output", "--opset", "--input-names", "--output-names"}, {});
  need_positional(args, 1, "one MODEL.pt2 argument");
  const std::string out = args.get("-o", args.get("--output"));
  if (out.empty()) throw Error({"cli"}, "missing -o MODEL.onnx", ErrorKind::kUsage);
  exporter::ExportOptions options;
  options.opset = opset_option(args);
  options.input_names = args.get_list("--input-names");
  options.output_names = args.get_list("--output-names");
  exporter::export_file(args.positional()[0], out, options);
  std::cout << "wrote " << out << " (opset " << options.opset << ")\n";
  return kExitOk;
}

void print_tensor_summary(const std::string& name, const Tensor& t) {
  std::cout << name << ": " << dtype_name(t.dtype()) << " " << shape_str(t.shape());
  const int64_t n = std::min<int64_t>(t.numel(), 6);
  if (n > 0) {
    std::cout << " [";
    for (int64_t i = 0; i < n; ++i) std::cout << (i ? ", " : "") << verify::element_as_double(t, i);
    std::cout << (t.numel() > n ? ", ...]" : "]");
  }
  std::cout << "\n";
}

int cmd_run(const std::vector<std::string>& argv) {
  Args args(argv, {"--inputs", "--outputs"}, {});
  need_positional(args, 1, "one MODEL.onnx argument");
  if (!args.has("--inputs")) throw Error({"cli"}, "missing --inputs DIR (a folder of input_<i>.pb files)", ErrorKind::kUsage);
  const std::string in_dir = args.get("--inputs");
  if (!fs::is_directory(in_dir)) throw Error({"io", in_dir}, "is not a directory (expected a folder of input_<i>.pb files)");
  auto session = refrt::Session::load_file(args.positional()[0]);
  std::vector<Tensor> inputs;
  for (auto& named : read_tensor_dir(in_dir, "input")) inputs.push_back(named.tensor);
  const auto result = session->run(inputs);
  for (size_t i = 0; i < result.outputs.size(); ++i) print_tensor_summary(session->outputs()[i].name, result.outputs[i]);
  if (args.has("--outputs")) {
    for (size_t i = 0; i < result.outputs.size(); ++i)
      write_tensor_file((fs::path(args.get("--outputs")) / ("output_" + std::to_string(i) + ".pb")).string(),
                        result.outputs[i], session->outputs()[i].name);
    std::cout << "wrote " << result.outputs.size() << " outputs to " << args.get("--outputs") << "\n";
  }
  return kExitOk;
}

int cmd_verify(const std::vector<std::string>& argv) {
  Args args(argv, {"--out", "--opset"}, {"--quiet"});
  need_positional(args, 1, "one CASE_DIR argument (a captured case folder)");
  const std::string dir = args.positional()[0];
  if (!fs::is_directory(dir)) throw Error({"io", dir}, "is not a directory (expected a captured case folder)");
  const std::string out = args.get("--out", (fs::path(dir) / "verify").string());
  verify::VerifyOptions options;
  options.opset = opset_option(args);
  options.quiet = args.has("--quiet");
  nlohmann::json cases = nlohmann::json::array();
  const auto dirs = verify::find_case_dirs(dir);
  for (const auto& case_dir : dirs) {
    const std::string case_out = dirs.size() == 1 ? out : (fs::path(out) / fs::path(case_dir).filename()).string();
    cases.push_back(verify::verify_case_dir(case_dir, case_out, options));
  }
  const auto report = verify::make_report("parity verify " + dir, cases);
  verify::write_report(out, report);
  if (!options.quiet) {
    for (const auto& c : cases)
      std::cout << c["case"].get<std::string>() << "/" << c["mode"].get<std::string>() << ": "
                << c["status"].get<std::string>()
                << (c["error"].is_string() ? " — " + c["error"].get<std::string>() : "") << "\n";
    std::cout << "report: " << (fs::path(out) / "report.md").string() << "\n";
  }
  return verify::report_passed(report) ? kExitOk : kExitFailed;
}

int cmd_matrix(const std::vector<std::string>& argv) {
  Args args(argv, {"--out", "--filter", "--modes", "--timeout", "--opset"}, {"--force-capture"});
  if (!args.positional().empty()) throw Error({"cli"}, "matrix takes no positional arguments", ErrorKind::kUsage);
  verify::MatrixOptions o;
  o.out_dir = args.get("--out", o.out_dir);
  o.filter = args.get("--filter");
  if (args.has("--modes")) o.modes = args.get_list("--modes");
  o.timeout_seconds = args.get_double("--timeout", o.timeout_seconds);
  o.opset = opset_option(args);
  o.force_capture = args.has("--force-capture");
  o.source_dir = env_or("PARITY_SOURCE_DIR", PARITY_SOURCE_DIR);
  o.python = env_or("PARITY_PYTHON", PARITY_PYTHON);
  o.self_exe = fs::read_symlink("/proc/self/exe").string();
  return verify::run_matrix(o);
}

int exit_code_for(const Error& e) {
  switch (e.kind()) {
    case ErrorKind::kUsage: return kExitUsage;
    case ErrorKind::kUnsupported: return kExitUnsupported;
    default: return kExitInputError;
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> rest(argv + std::min(argc, 2), argv + argc);
  const std::string command = argc > 1 ? argv[1] : "";
  try {
    if (command == "export") return cmd_export(rest);
    if (command == "run") return cmd_run(rest);
    if (command == "verify") return cmd_verify(rest);
    if (command == "matrix") return cmd_matrix(rest);
    if (command == "--version") {
      std::cout << "parity 0.1.0\n";
      return kExitOk;
    }
    if (command == "-h" || command == "--help" || command == "help") {
      std::cout << kUsage;
      return kExitOk;
    }
    std::cerr << "parity: error: " << (command.empty() ? "no command given" : "unknown command '" + command + "'")
              << "\n\n" << kUsage;
    return kExitUsage;
  } catch (const Error& e) {
    std::cerr << "parity: error: " << e.what() << "\n";
    if (e.kind() == ErrorKind::kUsage) std::cerr << "run 'parity --help' for usage\n";
    return exit_code_for(e);
  } catch (const std::exception& e) {
    std::cerr << "parity: error: " << e.what() << "\n";
    return kExitInputError;
  }
}

}  // namespace parity::cli

int main(int argc, char** argv) { return parity::cli::main(argc, argv); }
