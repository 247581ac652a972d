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

struct CaptureArgs {
  std::string spec;
  verify::CaptureRequest request;
};

int run_capture_command(CaptureArgs& a) {
  need_argument(a.spec, "one FILE.py or FILE.py:NAME argument (a suite file defining cases)");
  const size_t colon = a.spec.rfind(':');
  const std::string file = fs::exists(a.spec) || colon == std::string::npos ? a.spec : a.spec.substr(0, colon);
  if (!fs::exists(file)) throw Error({"io", file}, "no such suite file or folder");
  verify::CaptureRequest& r = a.request;
  r.python = venv_python();
  r.source_dir = source_dir();
  r.scenarios = {a.spec};
  size_t failed = 0;
  verify::run_capture(r, [&](const nlohmann::json& j) {
    const std::string status = j.value("status", "?");
    std::cout << j.value("case", "?") << "/" << j.value("mode", "?") << ": " << status << "  " << j.value("dir", "")
              << "\n";
    if (status == "capture_failed") {
      ++failed;
      std::cout << "  " << (j.value("error", nlohmann::json()).is_string() ? j["error"].get<std::string>() : "")
                << "\n";
    }
  });
  std::cout << "verify with: parity verify " << r.out_dir << "/<case>/<mode>\n";
  return failed ? kExitFailed : kExitOk;
}

std::function<int()> setup_capture(CLI::App& app) {
  auto a = std::make_shared<CaptureArgs>();
  a->request.out_dir = "out/cases";
  CLI::App* cmd = app.add_subcommand(
      "capture", "capture the cases a Python suite file defines (Case API, or a function NAME) into case folders");
  cmd->add_option("FILE.py[:NAME]", a->spec, "a suite file (or folder) defining cases");
  cmd->add_option("--out", a->request.out_dir, "cases go to DIR/<case>/<mode>/")
      ->capture_default_str()
      ->option_text("DIR");
  add_modes_option(cmd, a->request.modes);
  cmd->add_option("--filter", a->request.filter, "regular expression on case names")->option_text("REGEX");
  cmd->add_flag("--force", a->request.force, "capture again even when cached");
  return [a] { return run_capture_command(*a); };
}

}  // namespace

PARITY_SUBCOMMAND(25, setup_capture);

}  // namespace parity::cli
