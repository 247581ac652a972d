#include "parity/verify/capture.h"

#include <algorithm>
#include <filesystem>

#include "parity/error.h"
#include "parity/process.h"

namespace parity::verify {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

// A suite path is resolved here: the child runs in our working directory, but messages should name
// the file as the user wrote it, so only existence is checked (FILE.py:NAME keeps its pick).
std::vector<std::string> suite_args(const CaptureRequest& r) {
  std::vector<std::string> argv;
  for (const auto& s : r.scenarios) argv.insert(argv.end(), {"--scenarios", s});
  if (r.with_builtin) argv.push_back("--with-builtin");
  return argv;
}

// The suite's helpers and `from parity import Case` resolve to this repository's (or installation's) packages.
std::vector<std::pair<std::string, std::string>> python_env(const CaptureRequest& r) {
  return {{"PYTHONPATH", scenarios_package(r.source_dir).python_path}};
}

// The child's own "error: ..." line (suite.py and capture.py print one), else the tail of its stderr.
std::string python_error(const ProcessResult& p) {
  const size_t at = p.stderr_tail.rfind("error: ");
  std::string message = at == std::string::npos ? p.stderr_tail : p.stderr_tail.substr(at + 7);
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  return message;
}

void check_exit(const ProcessResult& p, const std::string& what) {
  if (p.timed_out || p.signal) throw Error({"capture"}, what + " did not finish: " + p.stderr_tail);
  if (p.exit_code == 2) throw Error({"capture"}, python_error(p), ErrorKind::kUsage);
  if (p.exit_code != 0) throw Error({"capture"}, python_error(p));
}

}  // namespace

ScenariosPackage scenarios_package(const std::string& source_dir) {
  const fs::path dir(source_dir);
  std::error_code ec;
  if (fs::is_regular_file(dir / "__init__.py", ec)) {
    fs::path package = dir.filename().empty() ? dir.parent_path() : dir;  // "site-packages/parity/" too
    return {package.filename().string() + ".scenarios", package.parent_path().string()};
  }
  return {"scenarios", source_dir + ":" + (dir / "python").string()};
}

json json_line(const std::string& line) {
  for (size_t start = line.find('{'); start != std::string::npos; start = line.find('{', start + 1)) {
    json j = json::parse(line.begin() + static_cast<std::ptrdiff_t>(start), line.end(), nullptr, false);
    if (j.is_object()) return j;
  }
  return json::value_t::discarded;
}

std::vector<json> run_capture(const CaptureRequest& r, const std::function<void(const json&)>& on_case) {
  const std::string module = scenarios_package(r.source_dir).module + ".capture";
  std::vector<std::string> argv = {r.python, "-m", module, "--out", r.out_dir, "--modes", join(r.modes, ",")};
  if (!r.filter.empty()) argv.insert(argv.end(), {"--filter", r.filter});
  if (r.force) argv.push_back("--force");
  argv.insert(argv.end(), {"--jobs", std::to_string(std::max(r.jobs, 1))});
  if (!r.shard.empty()) argv.insert(argv.end(), {"--shard", r.shard});
  if (r.official != "none") argv.insert(argv.end(), {"--official", r.official});
  if (r.ray) {
    argv.insert(argv.end(), {"--ray=" + r.ray_address, "--ray-retries", std::to_string(r.ray_retries)});
    if (r.ray_shared) argv.push_back("--ray-shared");
    if (!r.ray_store.empty()) argv.insert(argv.end(), {"--ray-store", r.ray_store});
  }
  const auto suites = suite_args(r);
  argv.insert(argv.end(), suites.begin(), suites.end());
  std::vector<json> captured;
  const ProcessResult p = run_process(
      argv, r.timeout_seconds,
      [&](const std::string& line) {
        const json j = json_line(line);
        if (!j.is_object()) return;  // capture prints only JSON lines on stdout; anything else is not a result
        captured.push_back(j);
        if (on_case) on_case(j);
      },
      false, python_env(r));
  check_exit(p, r.python + " -m " + module);
  // Lines arrive as cases finish; the run's order (the suite's, modes in the requested order) is their "order".
  std::stable_sort(captured.begin(), captured.end(), [](const json& a, const json& b) {
    return a.value("order", size_t{0}) < b.value("order", size_t{0});
  });
  return captured;
}

std::vector<std::string> list_scenarios(const CaptureRequest& r) {
  const std::string module = scenarios_package(r.source_dir).module;
  std::vector<std::string> argv = {r.python, "-m", module, "list"};
  const auto suites = suite_args(r);
  argv.insert(argv.end(), suites.begin(), suites.end());
  std::vector<std::string> names;
  const ProcessResult p = run_process(
      argv, 600,
      [&](const std::string& line) {
        if (!line.empty()) names.push_back(line);
      },
      false, python_env(r));
  check_exit(p, "python -m " + module + " list");
  return names;
}

}  // namespace parity::verify
