// parity verify: one captured case (or a folder of them) against libtorch and eager PyTorch.
#include <filesystem>
#include <iostream>

#include "command.h"
#include "parity/error.h"
#include "parity/verify/report.h"
#include "parity/verify/verify_case.h"

namespace fs = std::filesystem;

namespace parity::cli {
namespace {

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

}  // namespace

PARITY_COMMAND("verify", 30, "verify CASE_DIR [--out DIR] [--opset N] [--quiet]",
               "compare refrt on our ONNX with libtorch and eager PyTorch for a captured case", cmd_verify);

}  // namespace parity::cli
