#include "peers.h"

#include <filesystem>

#include "parity/error.h"
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

}  // namespace

json run_peers(const std::string& case_dir, const std::string& our_onnx, const std::string& ours_refrt,
               const std::string& out_dir, const VerifyOptions& options) {
  const std::string peers_dir = (fs::path(out_dir) / "peers").string();
  json result = {{"ours", {{"refrt", ours_refrt == "skipped" ? "error" : ours_refrt}, {"ort", "error"}}},
                 {"official", {{"export", "error"}, {"refrt", "skipped"}, {"ort", "skipped"}}},
                 {"error", nullptr}};
  try {
    fs::create_directories(peers_dir);
    const ProcessResult r = run_process({options.python, "-m", "scenarios.peers", "--case-dir", case_dir, "--ours",
                                         our_onnx, "--out", peers_dir},
                                        900, nullptr, false, {{"PYTHONPATH", options.source_dir}}, true);
    json line;
    const auto last_nl = r.stdout_text.find_last_of('\n', r.stdout_text.size() >= 2 ? r.stdout_text.size() - 2 : 0);
    const std::string last = r.stdout_text.substr(last_nl == std::string::npos ? 0 : last_nl + 1);
    try {
      line = json::parse(last);
    } catch (const json::exception&) {
      result["error"] = "scenarios.peers gave no result (exit " + std::to_string(r.exit_code) + "): " + r.stderr_tail;
      return result;
    }
    result["ours"]["ort"] = line["ours"]["ort"].value("status", "error");
    result["ours"]["ort_detail"] = line["ours"]["ort"];
    const json& off = line["official"];
    result["official"]["export"] = off.value("export", "error");
    result["official"]["export_error"] = off.value("error", json());
    result["official"]["ort"] = off["ort"].value("status", "error");
    result["official"]["ort_detail"] = off["ort"];
    if (off.value("export", "") == "ok") {
      const json refrt = refrt_on(off["onnx"].get<std::string>(), case_dir);
      result["official"]["refrt"] = refrt["status"];
      result["official"]["refrt_detail"] = refrt;
      result["official"]["onnx"] = off["onnx"];
    }
  } catch (const std::exception& e) {
    result["error"] = e.what();
  }
  return result;
}

}  // namespace parity::verify
