#include "peers.h"

#include <filesystem>

#include "parity/error.h"
#include "parity/fs.h"
#include "parity/refrt/session.h"
#include "parity/tensor_io.h"
#include "parity/verify/compare.h"
#include "process.h"

namespace parity::verify {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// refrt on the official exporter's model, every set against the stored eager outputs.
json refrt_on(const std::string& onnx_path, const std::string& case_dir) {
  try {
    const auto session = refrt::Session::load_file(onnx_path);
    int64_t mismatches = 0;
    double max_abs = 0;
    for (const auto& set_dir : list_test_data_sets(case_dir)) {
      std::vector<Tensor> inputs;
      for (auto& n : read_tensor_dir(set_dir, "input")) inputs.push_back(n.tensor);
      const auto expected = read_tensor_dir(set_dir, "output");
      const auto got = session->run(inputs).outputs;
      if (got.size() != expected.size())
        throw Error({"peers"}, "the model returns " + std::to_string(got.size()) + " outputs, eager " +
                                   std::to_string(expected.size()));
      for (size_t i = 0; i < got.size(); ++i) {
        const Comparison c = compare_tensors(expected[i].tensor, got[i]);
        mismatches += c.problem.empty() ? c.mismatches : std::max<int64_t>(c.numel, 1);
        max_abs = std::max(max_abs, c.problem.empty() ? c.max_abs_error : INFINITY);
      }
    }
    return {{"status", mismatches == 0 ? "pass" : "fail"},
            {"max_abs_error", std::isfinite(max_abs) ? json(max_abs) : json("Infinity")},
            {"mismatches", mismatches}, {"error", nullptr}};
  } catch (const std::exception& e) {
    return {{"status", "error"}, {"max_abs_error", nullptr}, {"mismatches", nullptr}, {"error", e.what()}};
  }
}

json empty_peers(const std::string& ours_refrt) {
  return {{"ours", {{"refrt", ours_refrt}, {"ort", "error"}}},
          {"official", {{"export", "error"}, {"refrt", "skipped"}, {"ort", "skipped"}}},
          {"error", nullptr}};
}

}  // namespace

std::string ours_refrt_verdict(const json& entry) {
  if (entry.value("run", "") != "ok") return "error";
  bool any = false;
  for (const auto& set : entry.value("input_sets", json::array()))
    for (const auto& out : set.value("outputs", json::array())) {
      any = true;
      const char* oracle = out.value("kind", "") == "mutation" ? "refrt_vs_libtorch" : "refrt_vs_eager";
      if (!out.value(oracle, json::object()).value("passed", false)) return "fail";
    }
  return any ? "pass" : "error";
}

json peers_from_line(const json& line, const std::string& case_dir, const std::string& ours_refrt) {
  json result = empty_peers(ours_refrt);
  try {
    result["ours"]["ort"] = line.at("ours").at("ort").value("status", "error");
    result["ours"]["ort_detail"] = line["ours"]["ort"];
    const json& off = line.at("official");
    result["official"]["export"] = off.value("export", "error");
    result["official"]["export_error"] = off.value("error", json());
    result["official"]["ort"] = off.at("ort").value("status", "error");
    result["official"]["ort_detail"] = off["ort"];
    if (off.value("export", "") == "ok") {
      const json refrt = refrt_on(off.at("onnx").get<std::string>(), case_dir);
      result["official"]["refrt"] = refrt["status"];
      result["official"]["refrt_detail"] = refrt;
      result["official"]["onnx"] = off["onnx"];
    }
  } catch (const std::exception& e) {
    result["error"] = std::string("unexpected scenarios.peers output: ") + e.what();
  }
  return result;
}

json run_peers(const std::string& case_dir, const std::string& our_onnx, const std::string& ours_refrt,
               const std::string& out_dir, const VerifyOptions& options) {
  json result = empty_peers(ours_refrt);
  run_peers_batch({{case_dir, our_onnx, (fs::path(out_dir) / "peers").string()}}, {ours_refrt}, options.python,
                  options.source_dir, 900, [&](size_t, json r) { result = std::move(r); });
  return result;
}

void run_peers_batch(const std::vector<PeersJob>& jobs, const std::vector<std::string>& ours_refrt,
                     const std::string& python, const std::string& source_dir, double timeout_seconds,
                     const std::function<void(size_t, json)>& on_result) {
  if (jobs.empty()) return;
  std::vector<bool> reported(jobs.size(), false);
  std::string problem;
  try {
    json list = json::array();
    for (const auto& j : jobs) list.push_back({{"case_dir", j.case_dir}, {"ours", j.our_onnx}, {"out", j.out_dir}});
    fs::create_directories(jobs[0].out_dir);
    const std::string jobs_file = (fs::path(jobs[0].out_dir) / "peers_jobs.json").string();
    write_file_atomic(jobs_file, list.dump(), "peers");
    const ProcessResult r = run_process(
        {python, "-m", "scenarios.peers", "--jobs", jobs_file}, timeout_seconds,
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
        false, {{"PYTHONPATH", source_dir}});
    if (r.timed_out) problem = "scenarios.peers gave no result within " + std::to_string(timeout_seconds) + " s";
    else problem = "scenarios.peers ended (exit " + std::to_string(r.exit_code) + ", signal " + std::to_string(r.signal) +
                   ") before this case: " + r.stderr_tail;
  } catch (const std::exception& e) {
    problem = e.what();
  }
  for (size_t i = 0; i < jobs.size(); ++i)
    if (!reported[i]) {
      json result = empty_peers(ours_refrt[i]);
      result["error"] = problem;
      on_result(i, result);
    }
}

}  // namespace parity::verify
