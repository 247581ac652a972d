// The Ray executor: the units go to the Python driver python/parity/_ray_executor.py (Ray's API is Python's),
// which runs each as a Ray task and writes one JSON line per event; results are handed on as they arrive.
#include <filesystem>
#include <iostream>
#include <map>

#include "executor.h"
#include "parity/error.h"
#include "parity/fs.h"
#include "parity/verify/capture.h"

namespace parity::verify {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr const char* kDriver = "parity._ray_executor";

std::vector<std::pair<std::string, std::string>> driver_env(const MatrixOptions& o) {
  return {{"PYTHONPATH", scenarios_package(o.source_dir).python_path}};
}

std::string absolute(const std::string& path) { return fs::absolute(path).lexically_normal().string(); }

}  // namespace

void check_ray(const MatrixOptions& o) {
  std::vector<std::string> argv = {o.python, "-m", kDriver, "--check"};
  if (artifacts_is_url(o.artifacts)) argv.insert(argv.end(), {"--store", o.artifacts});
  const ProcessResult p = run_process(argv, 300, nullptr, false, driver_env(o));
  if (p.ok()) return;
  const size_t at = p.stderr_tail.rfind("error: ");
  throw Error({"matrix", "--ray"}, at == std::string::npos ? p.stderr_tail : p.stderr_tail.substr(at + 7),
              p.exit_code == 2 ? ErrorKind::kUsage : ErrorKind::kInput);
}

namespace {

// The driver's units file: how to run a unit, and every unit with absolute paths (a Ray worker does not run in our
// working directory).
json units_spec(const MatrixOptions& o, const std::vector<Unit>& units) {
  json spec = {{"parity", o.self_exe},
               {"timeout", o.timeout_seconds},
               {"retries", o.ray_retries},
               {"artifacts", o.artifacts.empty() || artifacts_is_url(o.artifacts) ? "" : absolute(o.artifacts)},
               {"verify_args", json::array()},
               {"units", json::array()}};
  if (artifacts_is_url(o.artifacts)) spec["store"] = o.artifacts;  // the archives travel through this URL
  // The verify options after CASE_DIR --out DIR (the driver names its own folders in object-store mode).
  const std::vector<std::string> args = verify_arguments(o, "", "");
  for (size_t k = 5; k < args.size(); ++k) spec["verify_args"].push_back(args[k]);
  for (const Unit& u : units)
    spec["units"].push_back({{"index", u.index},
                             {"case", u.name},
                             {"mode", u.mode},
                             {"case_dir", absolute(u.case_dir)},
                             {"out", absolute(u.out_dir)}});
  return spec;
}

}  // namespace

void run_units_ray(const MatrixOptions& o, const std::vector<Unit>& units, Progress& progress, const UnitDone& done) {
  (void)progress;  // Ray does not say when a queued task starts: the progress lines come as units finish
  std::map<size_t, const Unit*> by_index;
  for (const Unit& u : units) by_index[u.index] = &u;
  fs::create_directories(o.out_dir);
  const std::string units_file = (fs::path(o.out_dir) / "ray_units.json").string();
  write_file_atomic(units_file, units_spec(o, units).dump(1) + "\n", "matrix");

  std::vector<std::string> argv = {o.python, "-m", kDriver, "--units", units_file};
  if (!o.ray_address.empty()) argv.insert(argv.end(), {"--address", o.ray_address});
  std::cout << "ray: " << units.size() << " units to "
            << (o.ray_address.empty() ? "a Ray instance on this machine" : "the cluster at " + o.ray_address) << ", "
            << (o.artifacts.empty()             ? "case folders through Ray's object store"
                : artifacts_is_url(o.artifacts) ? "case folders through " + o.artifacts
                                                : "artifacts in " + o.artifacts)
            << std::endl;
  std::map<size_t, bool> reported;
  const ProcessResult p = run_process(
      argv, o.timeout_seconds * static_cast<double>(units.size() + 1),
      [&](const std::string& line) {
        const json e = json_line(line);
        if (!e.is_object()) return;  // the driver prints only JSON lines on stdout; anything else is not an event
        const std::string event = e.value("event", "");
        if (event == "cluster") {
          std::cout << "ray: " << e.value("nodes", 0) << " nodes, " << e.value("cpus", 0.0) << " CPUs" << std::endl;
          return;
        }
        const size_t index = e.value("index", size_t{0});
        const auto it = by_index.find(index);
        if (it == by_index.end()) return;
        const Unit& u = *it->second;
        if (event == "retry") {
          std::cout << "  retry " << u.name << "/" << u.mode << " (attempt " << e.value("attempt", 0)
                    << "): " << e.value("reason", "") << std::endl;
          return;
        }
        if (event != "done" || reported[index]) return;  // a unit counts once
        reported[index] = true;
        UnitOutcome out;
        out.attempts = e.value("attempts", 1);
        out.where = e.value("node", "");
        out.lost = e.value("lost", "");
        out.wall_seconds = e.value("wall_seconds", 0.0);
        out.process.exit_code = e.value("exit_code", -1);
        out.process.signal = e.value("signal", 0);
        out.process.timed_out = e.value("timed_out", false);
        out.process.stderr_tail = e.value("stderr_tail", "");
        done(u, std::move(out));
      },
      false, driver_env(o));
  // Never a unit without a result: what the driver did not report is an error of this run, named.
  for (const Unit& u : units)
    if (!reported[u.index]) {
      UnitOutcome out;
      out.error = "the Ray driver (" + std::string(kDriver) + ") ended without this unit's result" +
                  (p.timed_out ? " (timed out)" : ", exit code " + std::to_string(p.exit_code)) + ": " + p.stderr_tail;
      done(u, std::move(out));
    }
}

}  // namespace parity::verify
