#include "peers.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>

#include "parity/error.h"
#include "parity/fs.h"
#include "parity/refrt/session.h"
#include "parity/tensor_io.h"
#include "parity/verify/capture.h"
#include "parity/verify/compare.h"
#include "parity/process.h"

namespace parity::verify {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// A peer run's outputs so far: the fixed rule's mismatches and largest error, the outputs that failed both
// rules, and the fp64 rule's verdict nearest to failing.
struct PeerTally {
  int64_t mismatches = 0, failed = 0, fp64_outputs = 0;
  double max_abs = 0;
  std::optional<Fp64Rule> fp64;

  void add(const Comparison& c, const std::string& set_name, size_t i) {
    mismatches += c.problem.empty() ? c.mismatches : std::max<int64_t>(c.numel, 1);
    max_abs = std::max(max_abs, c.problem.empty() ? c.max_abs_error : INFINITY);
    failed += c.passed ? 0 : 1;
    if (!c.fp64_rule) return;
    Fp64Rule here = *c.fp64_rule;
    here.input_set = set_name, here.output = static_cast<int64_t>(i);
    fp64 = fp64 ? closer_to_failing(*fp64, here) : here;
    fp64_outputs += here.passed ? 1 : 0;
  }
  PeerRun run() const {
    PeerRun r{failed == 0 ? "pass" : "fail",
              std::isfinite(max_abs) ? json(max_abs) : json("Infinity"),
              mismatches,
              {},
              {},
              {}};
    if (fp64) r.fp64_rule = *fp64, r.fp64_outputs = fp64_outputs;
    return r;
  }
};

// refrt on the official exporter's model, every set against the stored eager outputs (and the fp64 rule
// where capture saved eager's float64 outputs, as for our model).
PeerRun refrt_on(const std::string& onnx_path, const std::string& case_dir) {
  try {
    const auto session = refrt::Session::load_file(onnx_path);
    PeerTally tally;
    for (const auto& set_dir : list_test_data_sets(case_dir)) {
      std::vector<Tensor> inputs;
      for (auto& n : read_tensor_dir(set_dir, "input")) inputs.push_back(n.tensor);
      const auto expected = read_tensor_dir(set_dir, "output");
      const auto fp64 = read_fp64_outputs(set_dir, expected.size());
      const auto got = session->run(inputs).outputs;
      if (got.size() != expected.size())
        throw Error({"peers"}, "the model returns " + std::to_string(got.size()) + " outputs, eager " +
                                   std::to_string(expected.size()));
      for (size_t i = 0; i < got.size(); ++i)
        tally.add(compare_with_eager(expected[i].tensor, got[i], fp64[i]), fs::path(set_dir).filename().string(), i);
    }
    return tally.run();
  } catch (const std::exception& e) {
    return {"error", nullptr, {}, std::string(e.what()), {}, {}};
  }
}

// A side's "nodes" (its ONNX file's node count); absent when scenarios.peers gave none (no file, or null).
Absent<int64_t> node_count(const json& side) {
  Absent<int64_t> n;
  if (side.contains("nodes") && side["nodes"].is_number_integer()) n = side["nodes"].get<int64_t>();
  return n;
}

Peers empty_peers(const std::string& ours_refrt) {
  Peers p;
  p.ours.refrt = ours_refrt, p.ours.ort = "error";
  return p;
}

}  // namespace

std::string ours_refrt_verdict(const CaseEntry& entry) {
  if (entry.run != "ok") return "error";
  bool any = false;
  for (const auto& set : entry.input_sets)
    for (const auto& out : set.outputs) {
      any = true;
      // Mutated state from case folders without eager's record (case.json eager_state): libtorch is its oracle.
      const bool mutation = out.kind && *out.kind == "mutation";
      const bool passed = out.refrt_vs_eager ? out.refrt_vs_eager->passed && (!mutation || out.refrt_vs_libtorch.passed)
                          : mutation         ? out.refrt_vs_libtorch.passed
                                             : false;
      if (!passed) return "fail";
    }
  return any ? "pass" : "error";
}

Peers peers_from_line(const json& line, const std::string& case_dir, const std::string& ours_refrt) {
  Peers result = empty_peers(ours_refrt);
  if (!line.contains("ours") && line.contains("error") && line["error"].is_string()) {
    result.error = line["error"].get<std::string>();  // no run at all (a Ray unit whose worker was lost)
    return result;
  }
  try {
    result.ours.ort = line.at("ours").at("ort").value("status", "error");
    result.ours.ort_detail.emplace(line["ours"]["ort"]);
    result.ours.nodes = node_count(line["ours"]);
    const json& off = line.at("official");
    result.official.export_status = off.value("export", "error");
    result.official.export_error.emplace(off.value("error", json()));
    result.official.ort = off.at("ort").value("status", "error");
    result.official.ort_detail.emplace(off["ort"]);
    result.official.nodes = node_count(off);
    if (result.official.export_status == "not_run") result.official.refrt = "not_run";
    if (off.value("export", "") == "ok") {
      PeerRun refrt = refrt_on(off.at("onnx").get<std::string>(), case_dir);
      result.official.refrt = refrt.status;
      result.official.refrt_detail = std::move(refrt);
      result.official.onnx.emplace(off["onnx"]);
    }
  } catch (const std::exception& e) {
    result.error = std::string("unexpected scenarios.peers output: ") + e.what();
  }
  return result;
}

Peers run_peers(const std::string& case_dir, const std::string& our_onnx, const std::string& ours_refrt,
                const std::string& out_dir, const VerifyOptions& options) {
  Peers result = empty_peers(ours_refrt);
  run_peers_batch({{case_dir, our_onnx, (fs::path(out_dir) / "peers").string()}}, {ours_refrt}, options.python,
                  options.source_dir, 900, [&](size_t, Peers r) { result = std::move(r); });
  return result;
}

void run_peers_batch(const std::vector<PeersJob>& jobs, const std::vector<std::string>& ours_refrt,
                     const std::string& python, const std::string& source_dir, double timeout_seconds,
                     const std::function<void(size_t, Peers)>& on_result, const std::vector<std::string>& extra_args) {
  if (jobs.empty()) return;
  std::vector<bool> reported(jobs.size(), false);
  std::string problem;
  try {
    json list = json::array();
    for (const auto& j : jobs)
      list.push_back({{"case_dir", j.case_dir}, {"ours", j.our_onnx}, {"out", j.out_dir}, {"official", j.official}});
    fs::create_directories(jobs[0].out_dir);
    const std::string jobs_file = (fs::path(jobs[0].out_dir) / "peers_jobs.json").string();
    write_file_atomic(jobs_file, list.dump(), "peers");
    const ScenariosPackage scenarios = scenarios_package(source_dir);
    std::vector<std::string> argv = {python, "-m", scenarios.module + ".peers", "--jobs", jobs_file};
    argv.insert(argv.end(), extra_args.begin(), extra_args.end());
    const ProcessResult r = run_process(argv, timeout_seconds,
                                        [&](const std::string& text) {
                                          json line;
                                          try {
                                            line = json::parse(text);
                                          } catch (const json::exception&) {
                                            return;  // not ours (a stray print)
                                          }
                                          for (size_t i = 0; i < jobs.size(); ++i)
                                            if (!reported[i] && line.value("case_dir", "") == jobs[i].case_dir) {
                                              reported[i] = true;
                                              on_result(i, peers_from_line(line, jobs[i].case_dir, ours_refrt[i]));
                                              break;
                                            }
                                        },
                                        false, {{"PYTHONPATH", scenarios.python_path}});
    if (r.timed_out)
      problem = "scenarios.peers gave no result within " + std::to_string(timeout_seconds) + " s";
    else
      problem = "scenarios.peers ended (exit " + std::to_string(r.exit_code) + ", signal " + std::to_string(r.signal) +
                ") before this case: " + r.stderr_tail;
  } catch (const std::exception& e) {
    problem = e.what();
  }
  for (size_t i = 0; i < jobs.size(); ++i)
    if (!reported[i]) {
      Peers result = empty_peers(ours_refrt[i]);
      result.error = problem;
      on_result(i, result);
    }
}

}  // namespace parity::verify
