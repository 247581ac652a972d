#include "parity/verify/matrix.h"

#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <iostream>

#include "parity/error.h"
#include "parity/fs.h"
#include "parity/verify/report.h"
#include "process.h"

namespace parity::verify {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

json empty_entry(const std::string& name, const std::string& mode, const std::string& status, const std::string& stage,
                 const std::string& error) {
  return {{"case", name}, {"mode", mode}, {"status", status}, {"stage", stage}, {"error", error},
          {"export", "skipped"}, {"run", "skipped"}, {"verify", "skipped"}, {"max_abs_error", nullptr},
          {"max_rel_error", nullptr}, {"input_sets", json::array()}};
}

// Verifies one captured case in a child `parity verify`, so that a crash or hang is a result.
json verify_in_child(const MatrixOptions& o, const std::string& name, const std::string& mode,
                     const std::string& case_dir) {
  const std::string out = (fs::path(o.out_dir) / "results" / name / mode).string();
  fs::remove(fs::path(out) / "report.json");
  const ProcessResult r = run_process({o.self_exe, "verify", case_dir, "--out", out, "--quiet", "--opset",
                                       std::to_string(o.opset)},
                                      o.timeout_seconds, nullptr);
  if (r.timed_out)
    return empty_entry(name, mode, "timeout", "verify", "no result within " + std::to_string(o.timeout_seconds) + " s");
  if (r.signal)
    return empty_entry(name, mode, "crashed", "verify",
                       std::string("killed by signal ") + strsignal(r.signal) + ": " + r.stderr_tail);
  try {
    const json report = json::parse(read_file((fs::path(out) / "report.json").string(), "matrix"));
    return report.at("cases").at(0);
  } catch (const std::exception& e) {
    return empty_entry(name, mode, "error", "verify",
                       "parity verify exited with code " + std::to_string(r.exit_code) + " and no report: " + r.stderr_tail);
  }
}

}  // namespace

int run_matrix(const MatrixOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  fs::create_directories(o.out_dir);
  const std::string cases_dir = (fs::path(o.out_dir) / "cases").string();

  // 1. Capture (cached by the scenarios package), one JSON line per (case, mode).
  std::vector<std::string> argv = {o.python, "-m", "scenarios.capture", "--out", cases_dir, "--modes", join(o.modes, ",")};
  if (!o.filter.empty()) argv.insert(argv.end(), {"--filter", o.filter});
  if (o.force_capture) argv.push_back("--force");
  std::cout << "capturing scenarios with torch.export into " << cases_dir << " ..." << std::endl;
  std::vector<json> captured;
  const ProcessResult capture = run_process(
      argv, 3600,
      [&](const std::string& line) {
        json j;
        try {
          j = json::parse(line);
        } catch (const json::exception&) {
          std::cout << "  " << line << std::endl;
          return;
        }
        std::cout << "  capture " << j.value("case", "?") << "/" << j.value("mode", "?") << ": " << j.value("status", "?")
                  << std::fixed << std::setprecision(1) << " (" << j.value("seconds", 0.0) << " s)" << std::endl;
        captured.push_back(j);
      },
      false, {{"PYTHONPATH", o.source_dir}});
  if (capture.timed_out || capture.signal || capture.exit_code != 0)
    throw Error({"matrix"}, "scenario capture failed (" + o.python + " -m scenarios.capture): " + capture.stderr_tail);

  // 2. Verify each (case, mode) in its own process.
  json cases = json::array();
  size_t index = 0;
  for (const auto& c : captured) {
    ++index;
    const std::string name = c.value("case", "?"), mode = c.value("mode", "?");
    json entry;
    if (c.value("status", "") == "capture_failed") {
      entry = empty_entry(name, mode, "capture_failed", "capture", c.value("error", json("")).is_string() ? c["error"].get<std::string>() : "");
    } else {
      const auto child_start = std::chrono::steady_clock::now();
      entry = verify_in_child(o, name, mode, c.value("dir", ""));
      // Wall time of the child process (libtorch start-up included), next to the verify time.
      entry["wall_seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - child_start).count();
    }
    std::cout << "[" << index << "/" << captured.size() << "] " << std::left << std::setw(32) << (name + "/" + mode)
              << std::setw(15) << entry.value("status", "?");
    if (entry.value("max_abs_error", json()).is_number())
      std::cout << " max_abs " << std::scientific << std::setprecision(2) << entry["max_abs_error"].get<double>();
    std::cout << std::fixed << std::setprecision(1) << "  (" << entry.value("wall_seconds", 0.0) << " s)" << std::endl;
    if (entry.value("status", "") != "pass" && entry.value("error", json()).is_string())
      std::cout << "    " << entry["error"].get<std::string>().substr(0, 300) << std::endl;
    cases.push_back(entry);
  }
  const json report = make_report("parity matrix", cases);
  write_report(o.out_dir, report);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const json& s = report["summary"];
  std::cout << s["pass"].get<int>() << "/" << s["total"].get<int>() << " passed in " << std::fixed
            << std::setprecision(1) << seconds << " s; report: " << (fs::path(o.out_dir) / "report.md").string()
            << std::endl;
  return report_passed(report) ? 0 : 1;
}

}  // namespace parity::verify
