// parity capture FILE.py[:NAME]: a user's own cases (the Case API, or a function returning model, input
// sets and dynamic shapes) captured into case folders, as the matrix captures its scenarios.
#include <filesystem>
#include <iostream>

#include "command.h"
#include "parity/error.h"
#include "parity/verify/capture.h"

namespace fs = std::filesystem;

namespace parity::cli {
namespace {

int cmd_capture(const std::vector<std::string>& argv) {
  Args args(argv, {"--out", "--modes", "--filter"}, {"--force"});
  need_positional(args, 1, "one FILE.py or FILE.py:NAME argument (a suite file defining cases)");
  const std::string spec = args.positional()[0];
  const size_t colon = spec.rfind(':');
  const std::string file = fs::exists(spec) || colon == std::string::npos ? spec : spec.substr(0, colon);
  if (!fs::exists(file)) throw Error({"io", file}, "no such suite file or folder");
  verify::CaptureRequest r;
  r.python = env_or("PARITY_PYTHON", PARITY_PYTHON);
  r.source_dir = env_or("PARITY_SOURCE_DIR", PARITY_SOURCE_DIR);
  r.out_dir = args.get("--out", "out/cases");
  if (args.has("--modes")) r.modes = args.get_list("--modes");
  r.filter = args.get("--filter");
  r.scenarios = {spec};
  r.force = args.has("--force");
  size_t failed = 0;
  verify::run_capture(r, [&](const nlohmann::json& j) {
    const std::string status = j.value("status", "?");
    std::cout << j.value("case", "?") << "/" << j.value("mode", "?") << ": " << status << "  " << j.value("dir", "")
              << "\n";
    if (status == "capture_failed") {
      ++failed;
      std::cout << "  " << (j.value("error", nlohmann::json()).is_string() ? j["error"].get<std::string>() : "") << "\n";
    }
  });
  std::cout << "verify with: parity verify " << r.out_dir << "/<case>/<mode>\n";
  return failed ? kExitFailed : kExitOk;
}

}  // namespace

PARITY_COMMAND("capture", 25,
               "capture FILE.py[:NAME] [--out DIR] [--modes strict,nonstrict,decomposed] [--filter REGEX] [--force]",
               "capture the cases a Python suite file defines (Case API, or a function NAME) into case folders",
               cmd_capture);

}  // namespace parity::cli
