#include "parity/verify/matrix.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <mutex>
#include <regex>
#include <sstream>
#include <thread>

#include "parity/error.h"
#include "parity/fs.h"
#include "parity/verify/capture.h"
#include "parity/verify/known_failures.h"
#include "parity/verify/merge.h"
#include "parity/verify/report.h"
#include "peers.h"
#include "parity/process.h"
#include "progress.h"
#include "executor.h"
#include "verify_cache.h"

namespace parity::verify {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// A unit's entry from how its child ended: its own report, or the crash, hang or lost worker that kept it from one.
CaseEntry entry_of(const MatrixOptions& o, const Unit& u, const UnitOutcome& outcome) {
  const ProcessResult& r = outcome.process;
  if (!outcome.lost.empty()) return failed_entry(u.name, u.mode, "error", "verify", "worker lost: " + outcome.lost);
  if (!outcome.error.empty()) return failed_entry(u.name, u.mode, "error", "verify", outcome.error);
  if (r.timed_out)
    return failed_entry(u.name, u.mode, "timeout", "verify",
                        "no result within " + std::to_string(o.timeout_seconds) + " s");
  if (r.signal)
    return failed_entry(u.name, u.mode, "crashed", "verify",
                        std::string("killed by signal ") + strsignal(r.signal) + ": " + r.stderr_tail);
  try {
    const json report = json::parse(read_file((fs::path(u.out_dir) / "report.json").string(), "matrix"));
    return report.at("cases").at(0).get<CaseEntry>();
  } catch (const std::exception& e) {
    return failed_entry(
        u.name, u.mode, "error", "verify",
        "parity verify exited with code " + std::to_string(r.exit_code) + " and no report: " + r.stderr_tail);
  }
}

std::string result_line(const CaseEntry& entry) {
  std::ostringstream s;
  s << std::left << std::setw(31) << (entry.case_name + "/" + entry.mode) << " " << std::setw(15) << entry.status;
  if (entry.max_abs_error.is_number())
    s << " max_abs " << std::scientific << std::setprecision(2) << entry.max_abs_error.get<double>();
  s << std::fixed << std::setprecision(1) << "  (" << entry.wall_seconds.value_or(0.0) << " s)";
  // Where refrt needed the second rule (or it was tried and failed), the numbers, on the case's line.
  if (entry.fp64_rule) s << "\n    " << fp64_rule_text(*entry.fp64_rule);
  if (is_unexpected(entry.status) && entry.error) s << "\n    " << entry.error->substr(0, 300);
  return s.str();
}

// Where the case folders and the verify results go: --artifacts DIR, else the output folder (also when
// --artifacts is a URL: the units' archives travel through it, the folders stay here).
fs::path artifacts_dir(const MatrixOptions& o) {
  return o.artifacts.empty() || artifacts_is_url(o.artifacts) ? o.out_dir : o.artifacts;
}
// With --ray: the URL the archives travel through ("" = Ray's object store or a shared folder).
std::string ray_store(const MatrixOptions& o) { return artifacts_is_url(o.artifacts) ? o.artifacts : ""; }

CaptureRequest capture_request(const MatrixOptions& o, const std::string& cases_dir) {
  CaptureRequest r;
  r.python = o.python, r.source_dir = o.source_dir, r.out_dir = cases_dir, r.modes = o.modes, r.filter = o.filter;
  r.scenarios = o.scenarios, r.with_builtin = o.with_builtin, r.shard = o.shard, r.force = o.force_capture;
  r.jobs = o.jobs;
  // The official exporter runs in the capture's worker, on the program it just captured (no second torch start,
  // no second load of the case's libraries) and is cached with the case folder; the peers phase reads its record.
  r.official = !o.peers ? "none" : o.official_every_mode ? "all" : "one";
  r.ray = o.ray, r.ray_address = o.ray_address, r.ray_retries = o.ray_retries;
  r.ray_shared = !o.artifacts.empty() && !artifacts_is_url(o.artifacts), r.ray_store = ray_store(o);
  return r;
}

std::vector<json> capture_all(const MatrixOptions& o, const std::string& cases_dir) {
  std::cout << "capturing scenarios with torch.export into " << cases_dir
            << (o.shard.empty() ? "" : " (shard " + o.shard + ")") << (o.ray ? " on Ray" : "") << " ..." << std::endl;
  return run_capture(capture_request(o, cases_dir), [](const json& j) {
    std::cout << "  capture " << j.value("case", "?") << "/" << j.value("mode", "?") << ": " << j.value("status", "?")
              << std::fixed << std::setprecision(1) << " (" << j.value("seconds", 0.0) << " s)";
    if (j.contains("official") && j["official"].is_string())
      std::cout << ", official exporter " << j["official"].get<std::string>() << " ("
                << j.value("official_seconds", 0.0) << " s)";
    std::cout << std::endl;
  });
}

// Hands every captured (case, mode) to the executor (local children or Ray); entries keep the capture order.
std::vector<CaseEntry> verify_all(const MatrixOptions& o, const std::vector<json>& captured) {
  std::vector<CaseEntry> entries(captured.size());
  Progress progress(captured.size(), isatty(STDOUT_FILENO) != 0);
  std::vector<Unit> units;
  for (size_t i = 0; i < captured.size(); ++i) {
    const json& c = captured[i];
    const std::string name = c.value("case", "?"), mode = c.value("mode", "?");
    if (c.value("status", "") == "capture_failed") {
      entries[i] =
          failed_entry(name, mode, "capture_failed", "capture",
                       c.value("error", json()).is_string() ? c["error"].get<std::string>() : "torch.export failed");
      progress.finished(name + "/" + mode, result_line(entries[i]));
      continue;
    }
    units.push_back({i, name, mode, c.value("dir", ""), (artifacts_dir(o) / "results" / name / mode).string()});
  }
  // A unit whose case folder, binaries, options and steering environment are those of its stored result is
  // not run again (verify_cache.h); --reverify runs every unit.
  const std::string shared_key = shared_verify_key(o);
  std::vector<std::string> keys(captured.size());
  std::vector<Unit> to_run;
  std::vector<CaseEntry> cached;
  for (const Unit& u : units) {
    keys[u.index] = unit_verify_key(shared_key, u);
    if (!o.reverify && verify_result_cached(u, keys[u.index])) {
      CaseEntry entry = entry_of(o, u, UnitOutcome{});
      entry.wall_seconds = 0.0;
      progress.finished(u.name + "/" + u.mode, result_line(entry) + "  (verified before: cached)");
      entries[u.index] = std::move(entry);
    } else {
      forget_verify_key(u);
      to_run.push_back(u);
    }
  }
  units = std::move(to_run);
  const UnitDone done = [&](const Unit& u, UnitOutcome outcome) {
    CaseEntry entry = entry_of(o, u, outcome);
    if (!outcome.process.timed_out && !outcome.process.signal && outcome.lost.empty() && outcome.error.empty())
      store_verify_key(u, keys[u.index], entry.status);
    // Wall time of the child process (libtorch start-up included), next to the verify time.
    entry.wall_seconds = outcome.wall_seconds;
    std::string where;
    if (!outcome.where.empty()) where = "  [node " + outcome.where + "]";
    if (outcome.attempts > 1) where += "  (attempt " + std::to_string(outcome.attempts) + ")";
    progress.finished(u.name + "/" + u.mode, result_line(entry) + where);
    entries[u.index] = std::move(entry);
  };
  if (o.ray)
    run_units_ray(o, units, progress, done);
  else
    run_units_local(o, units, progress, done);
  progress.finish();
  return entries;
}

// " (fp64 rule)" after a peer's verdict when some of its outputs passed by the fp64 rule alone.
const char* fp64_mark(const Absent<json>& detail) {
  return detail && detail->is_object() && detail->value("fp64_outputs", 0) > 0 ? " (fp64 rule)" : "";
}

std::string peers_line(const Peers& p) {
  const auto& refrt = p.official.refrt_detail;
  const std::string ours = "ours refrt " + p.ours.refrt + ", ours ORT " + p.ours.ort + fp64_mark(p.ours.ort_detail);
  if (p.official.export_status == "not_run") return ours + ", official not run on this mode";
  return ours + ", official export " + p.official.export_status + ", refrt " + p.official.refrt +
         (refrt && refrt->fp64_outputs.value_or(0) > 0 ? " (fp64 rule)" : "") + ", ORT " + p.official.ort +
         fp64_mark(p.official.ort_detail);
}

// The mode of each case whose capture the official exporter gets when it runs on one mode per case: the one
// torch.onnx.export(model, dynamo=True) would capture itself (non-strict, else strict), else any captured.
// On the default matrix its verdicts on strict and non-strict captures have not differed (docs/measurements.md).
std::map<std::string, std::string> official_modes(const std::vector<CaseEntry>& cases) {
  const auto rank = [](const std::string& mode) { return mode == "nonstrict" ? 0 : mode == "strict" ? 1 : 2; };
  std::map<std::string, std::string> chosen;
  for (const CaseEntry& c : cases) {
    if (c.status == "capture_failed") continue;
    auto [it, inserted] = chosen.emplace(c.case_name, c.mode);
    if (!inserted && rank(c.mode) < rank(it->second)) it->second = c.mode;
  }
  return chosen;
}

// The peers columns: the captured cases split over up to `jobs` Python processes (torch starts once in each),
// the official exports dealt out first so that each process gets its share of the slow jobs.
void add_peers(const MatrixOptions& o, std::vector<CaseEntry>& cases) {
  const auto official_mode = official_modes(cases);
  std::vector<size_t> index;
  std::vector<PeersJob> jobs;
  std::vector<std::string> ours_refrt;
  size_t official_jobs = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const CaseEntry& c = cases[i];
    if (c.status == "capture_failed") continue;
    index.push_back(i);
    const bool official = o.official_every_mode || official_mode.at(c.case_name) == c.mode;
    official_jobs += official ? 1 : 0;
    jobs.push_back({(artifacts_dir(o) / "cases" / c.case_name / c.mode).string(), c.onnx && *c.onnx ? **c.onnx : "",
                    (artifacts_dir(o) / "results" / c.case_name / c.mode / "peers").string(), official});
    ours_refrt.push_back(ours_refrt_verdict(c));
  }
  if (jobs.empty()) return;
  std::cout << "peers: ONNX Runtime on " << jobs.size() << " cases, the official exporter on " << official_jobs
            << (o.official_every_mode ? "" : " (one mode per case; --official all for every mode)") << " ..."
            << std::endl;
  std::mutex mu;
  size_t done = 0;
  // On Ray: one driver process hands every job to the cluster (python/parity/_ray_units.py).
  std::vector<std::string> ray_args;
  if (o.ray) {
    ray_args = {"--ray=" + o.ray_address, "--ray-retries", std::to_string(o.ray_retries)};
    if (!o.artifacts.empty() && !artifacts_is_url(o.artifacts)) ray_args.push_back("--ray-shared");
    if (!ray_store(o).empty()) ray_args.insert(ray_args.end(), {"--ray-store", ray_store(o)});
  }
  const size_t slices = o.ray ? 1 : std::min<size_t>(static_cast<size_t>(std::max(o.jobs, 1)), jobs.size());
  std::vector<std::vector<size_t>> dealt(slices);
  size_t next = 0;
  for (const bool official : {true, false})
    for (size_t k = 0; k < jobs.size(); ++k)
      if (jobs[k].official == official) dealt[next++ % slices].push_back(k);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < slices; ++t)
    threads.emplace_back([&, t]() {
      std::vector<PeersJob> mine;
      std::vector<std::string> mine_refrt;
      std::vector<size_t> mine_index;
      std::sort(dealt[t].begin(), dealt[t].end());  // in capture order, as the progress lines read best
      for (size_t k : dealt[t])
        mine.push_back(jobs[k]), mine_refrt.push_back(ours_refrt[k]), mine_index.push_back(index[k]);
      run_peers_batch(
          mine, mine_refrt, o.python, o.source_dir, o.timeout_seconds * static_cast<double>(mine.size()),
          [&](size_t k, Peers peers) {
            std::lock_guard<std::mutex> lock(mu);
            CaseEntry& c = cases[mine_index[k]];
            ++done;
            std::cout << "  peers [" << done << "/" << jobs.size() << "] " << c.case_name << "/" << c.mode << ": "
                      << peers_line(peers) << std::endl;
            c.peers = std::move(peers);
          },
          ray_args);
    });
  for (auto& t : threads) t.join();
}

std::string seconds_text(double s) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(1) << s << " s";
  return out.str();
}

// The capture phase: the seconds capture.py measures per (case, mode) (building the model, torch.export, the eager
// outputs, the files), summed per mode over its processes; what the phase's wall time has beyond them is mostly
// starting Python and importing torch and the case libraries. And how many came from the cache.
std::string capture_detail(const MatrixOptions& o, const std::vector<json>& captured) {
  std::map<std::string, double> by_mode;
  size_t cached = 0, official = 0, official_cached = 0;
  double official_seconds = 0;
  for (const json& c : captured) {
    by_mode[c.value("mode", "?")] += c.value("seconds", 0.0);
    cached += c.value("status", "") == "cached" ? 1 : 0;
    if (!c.contains("official") || !c["official"].is_string()) continue;
    ++official;
    official_cached += c["official"].get<std::string>().rfind("cached", 0) == 0 ? 1 : 0;
    official_seconds += c.value("official_seconds", 0.0);
  }
  std::string text;
  for (const auto& mode : o.modes)
    if (by_mode.count(mode)) text += (text.empty() ? "" : ", ") + mode + " " + seconds_text(by_mode[mode]);
  if (official > 0)
    text += "; the official exporter on " + std::to_string(official) + " (" + std::to_string(official_cached) +
            " cached) " + seconds_text(official_seconds);
  return std::to_string(captured.size()) + " pairs, " + std::to_string(cached) + " cached; per mode " +
         (text.empty() ? "0 s" : text) + " summed over " + std::to_string(std::max(o.jobs, 1)) + " processes";
}

// The verify phase: the units' child wall times summed, and the part spent in verify itself (export, refrt,
// reference, comparison); the rest is process start and loading libtorch.
std::string verify_detail(const MatrixOptions& o, const std::vector<CaseEntry>& entries) {
  double wall = 0, inside = 0;
  size_t units = 0, cached = 0;
  for (const CaseEntry& e : entries) {
    if (e.status == "capture_failed") continue;
    ++units;
    if (e.wall_seconds.value_or(0.0) == 0.0) {  // a stored result (verify_all gives those no child time)
      ++cached;
      continue;
    }
    wall += e.wall_seconds.value_or(0.0);
    inside += e.seconds.value_or(0.0);
  }
  return std::to_string(units) + " units, " + std::to_string(cached) + " of them cached (verified before: --reverify " +
         "runs them), the rest on " + (o.ray ? "Ray" : std::to_string(std::max(o.jobs, 1)) + " children") +
         "; child wall " + seconds_text(wall) + " summed, of which verify " + seconds_text(inside) +
         " (the rest: process start, libtorch)";
}

}  // namespace

bool artifacts_is_url(const std::string& artifacts) {
  return artifacts.find("://") != std::string::npos && artifacts.rfind("file://", 0) != 0;
}

std::vector<std::string> list_cases(const MatrixOptions& o) {
  std::regex pattern;
  try {
    pattern = std::regex(o.filter);
  } catch (const std::regex_error& e) {
    throw Error({"matrix"}, "--filter '" + o.filter + "' is not a regular expression: " + e.what(), ErrorKind::kUsage);
  }
  std::vector<std::string> names;
  for (const auto& name : list_scenarios(capture_request(o, "")))
    if (std::regex_search(name, pattern)) names.push_back(name);
  return names;
}

int usable_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

int default_jobs() {
  constexpr double kBytesPerChild = 3.0 * (1ull << 30);
  double available = 0;
  std::ifstream meminfo("/proc/meminfo");
  for (std::string key; meminfo >> key;) {
    double kib = 0;
    meminfo >> kib;
    if (key == "MemAvailable:") available = kib * 1024;
    meminfo.ignore(256, '\n');
  }
  const int by_memory = available > 0 ? std::max(1, static_cast<int>(available / kBytesPerChild)) : 1;
  return std::max(1, std::min(usable_cpus(), by_memory));
}

namespace {

// Children share the CPUs: each gets its share of intra-op threads (libtorch, OpenMP, OpenBLAS read
// OMP_NUM_THREADS at start) instead of one per CPU each, which oversubscribes the machine as soon as two children
// compute at once. A value the user set is kept.
void share_threads_between_children(int jobs) {
  if (jobs <= 1) return;
  setenv("OMP_NUM_THREADS", std::to_string(std::max(1, usable_cpus() / jobs)).c_str(), 0);
}

}  // namespace

MatrixResult run_matrix(const MatrixOptions& options) {
  MatrixOptions o = options;
  if (o.jobs <= 0) o.jobs = default_jobs();
  share_threads_between_children(o.jobs);
  if (!o.ray) {
    const char* threads = std::getenv("OMP_NUM_THREADS");
    std::cout << "matrix: " << o.jobs << (o.jobs == 1 ? " child" : " children") << " at a time"
              << (threads ? std::string(", OMP_NUM_THREADS=") + threads : std::string()) << std::endl;
  }
  const auto start = std::chrono::steady_clock::now();
  // Inputs that can be wrong are checked before minutes of work.
  const auto known = o.known_failures.empty() ? std::vector<KnownFailure>{} : load_known_failures(o.known_failures);
  json baseline;
  if (!o.baseline.empty()) {
    try {
      baseline = json::parse(read_file(o.baseline, "matrix"));
    } catch (const json::exception& e) {
      throw Error({"matrix", o.baseline}, std::string("broken JSON: ") + e.what());
    }
    if (!baseline.contains("cases") || !baseline["cases"].is_array())
      throw Error({"matrix", o.baseline}, "not a Parity report (no \"cases\" list)");
  }
  fs::create_directories(o.out_dir);
  if (o.ray) check_ray(o);  // before minutes of capture
  const std::string cases_dir = (artifacts_dir(o) / "cases").string();

  MatrixResult result;
  auto lap = [last = std::chrono::steady_clock::now()]() mutable {
    const auto now = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(now - last).count();
    last = now;
    return seconds;
  };
  const std::vector<json> captured = capture_all(o, cases_dir);
  result.phases.push_back({"capture", lap(), capture_detail(o, captured)});
  std::vector<CaseEntry> entries = verify_all(o, captured);
  result.phases.push_back({"verify", lap(), verify_detail(o, entries)});
  if (o.peers) {
    add_peers(o, entries);
    result.phases.push_back(
        {"peers", lap(),
         "ONNX Runtime on ours, the official exporter where the capture did not run it, " +
             (o.ray ? std::string("on Ray") : std::to_string(std::max(o.jobs, 1)) + " Python processes")});
  }
  json cases = entries;
  apply_known_failures(cases, known);

  json report = make_report("parity matrix", cases);
  // The run's mode order (capture takes decomposed last, after the program it decomposes), which
  // `parity report --merge` restores.
  std::vector<std::string> modes = o.modes;
  std::stable_partition(modes.begin(), modes.end(), [](const std::string& m) { return m != "decomposed"; });
  report["modes"] = modes;
  if (!o.scenarios.empty()) report["scenarios"] = {{"suites", o.scenarios}, {"with_builtin", o.with_builtin}};
  if (!o.shard.empty()) {
    const Shard shard = parse_shard(o.shard);
    report["shard"] = {{"index", shard.index}, {"count", shard.count}};
  }
  if (!o.baseline.empty()) {
    report["baseline"] = o.baseline;
    report["regressions"] = find_regressions(baseline, report["cases"]);
    update_summary(report);
  }
  write_report(o.out_dir, report);
  result.phases.push_back({"report", lap(), "report.json, report.md, report.html"});

  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.html = true;
  // A shard may hold no pair at all (more shards than pairs): nothing failed there.
  result.exit_code = (!o.shard.empty() && report["cases"].empty()) || report_passed(report) ? 0 : 1;
  result.report = std::move(report);
  return result;
}

}  // namespace parity::verify
