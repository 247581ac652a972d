#include "parity/verify/verify_case.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>

#include "parity/error.h"
#include "parity/exporter/export.h"
#include "parity/fs.h"
#include "parity/refrt/session.h"
#include "parity/tensor_io.h"
#include "parity/verify/compare.h"
#include "parity/verify/reference.h"

namespace parity::verify {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

json number_or_string(double v) { return std::isfinite(v) ? json(v) : json(std::isnan(v) ? "NaN" : "Infinity"); }

void fail_entry(json& entry, const std::string& status, const std::string& stage, const std::string& error) {
  entry["status"] = status;
  entry["stage"] = stage;
  entry["error"] = error;
}

std::vector<Tensor> tensors_of(const std::vector<NamedTensor>& named) {
  std::vector<Tensor> out;
  for (const auto& n : named) out.push_back(n.tensor);
  return out;
}

}  // namespace

std::vector<std::string> find_case_dirs(const std::string& dir) {
  if (fs::exists(fs::path(dir) / "case.json")) return {dir};
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_directory() && fs::exists(e.path() / "case.json")) out.push_back(e.path().string());
  if (ec) throw Error({"verify", dir}, "cannot read directory: " + ec.message());
  if (out.empty()) throw Error({"verify", dir}, "no case.json here or in its subdirectories; capture the case first");
  std::sort(out.begin(), out.end());
  return out;
}

json verify_case_dir(const std::string& case_dir, const std::string& out_dir, const VerifyOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const std::string case_json_path = (fs::path(case_dir) / "case.json").string();
  json info;
  try {
    info = json::parse(read_file(case_json_path, "verify"));
  } catch (const json::exception& e) {
    throw Error({"verify", case_json_path}, std::string("broken JSON: ") + e.what());
  }
  json entry = {{"case", info.value("name", fs::path(case_dir).parent_path().filename().string())},
                {"mode", info.value("mode", fs::path(case_dir).filename().string())},
                {"status", "pass"}, {"stage", nullptr}, {"error", nullptr},
                {"export", "skipped"}, {"run", "skipped"}, {"verify", "skipped"},
                {"max_abs_error", nullptr}, {"max_rel_error", nullptr}, {"onnx", nullptr},
                {"input_sets", json::array()}};
  auto finish = [&]() -> json {
    entry["seconds"] = seconds_since(start);
    return entry;
  };
  if (info.value("status", "") != "captured") {
    fail_entry(entry, "capture_failed", "capture", info.value("error", json("capture did not finish")).is_string()
                                                       ? info["error"].get<std::string>() : "capture did not finish");
    return finish();
  }

  // Export.
  pt2::Program program;
  const std::string onnx_path = (fs::path(out_dir) / "model.onnx").string();
  try {
    program = pt2::read_pt2((fs::path(case_dir) / "model.pt2").string());
    exporter::ExportOptions eo;
    eo.opset = options.opset;
    write_file_atomic(onnx_path, exporter::export_program(program, eo), "export");
    entry["export"] = "ok";
    entry["onnx"] = onnx_path;
  } catch (const Error& e) {
    entry["export"] = "error";
    fail_entry(entry, "error", e.context().stage.empty() ? "export" : e.context().stage, e.what());
    return finish();
  }

  // Run on refrt and on the libtorch reference, every input set, both against eager.
  std::unique_ptr<refrt::Session> session;
  try {
    session = refrt::Session::load_file(onnx_path);
  } catch (const Error& e) {
    entry["run"] = "error";
    fail_entry(entry, "error", "refrt", e.what());
    return finish();
  }
  double max_abs = 0, max_rel = 0;
  bool all_passed = true;
  const auto sets = list_test_data_sets(case_dir);
  if (sets.empty()) {
    fail_entry(entry, "error", "verify", "no test_data_set_* directories in " + case_dir);
    return finish();
  }
  for (const auto& set_dir : sets) {
    json set = {{"name", fs::path(set_dir).filename().string()}, {"outputs", json::array()}};
    std::vector<Tensor> inputs;
    std::vector<NamedTensor> expected;
    try {
      inputs = tensors_of(read_tensor_dir(set_dir, "input"));
      expected = read_tensor_dir(set_dir, "output");
    } catch (const Error& e) {
      fail_entry(entry, "error", "inputs", e.what());
      return finish();
    }
    std::vector<Tensor> ours, reference;
    try {
      ours = session->run(inputs).outputs;
      entry["run"] = "ok";
    } catch (const Error& e) {
      entry["run"] = "error";
      fail_entry(entry, "error", "refrt", e.what());
      return finish();
    }
    try {
      reference = run_reference(program, inputs).outputs;
    } catch (const Error& e) {
      fail_entry(entry, "error", "reference", e.what());
      return finish();
    }
    if (ours.size() != expected.size() || reference.size() != expected.size()) {
      fail_entry(entry, "fail", "verify", "output count differs: eager " + std::to_string(expected.size()) +
                                              ", refrt " + std::to_string(ours.size()) + ", libtorch " +
                                              std::to_string(reference.size()));
      entry["verify"] = "fail";
      return finish();
    }
    for (size_t i = 0; i < expected.size(); ++i) {
      const Comparison refrt_cmp = compare_tensors(expected[i].tensor, ours[i]);
      const Comparison torch_cmp = compare_tensors(expected[i].tensor, reference[i]);
      const Comparison cross = compare_tensors(reference[i], ours[i]);
      all_passed = all_passed && refrt_cmp.passed && torch_cmp.passed;
      max_abs = std::max(max_abs, refrt_cmp.problem.empty() ? refrt_cmp.max_abs_error : INFINITY);
      max_rel = std::max(max_rel, refrt_cmp.max_rel_error);
      set["outputs"].push_back({{"index", i},
                                {"name", session->outputs().size() > i ? session->outputs()[i].name : ""},
                                {"dtype", dtype_name(expected[i].tensor.dtype())},
                                {"shape", expected[i].tensor.shape()},
                                {"refrt_vs_eager", refrt_cmp.to_json()},
                                {"libtorch_vs_eager", torch_cmp.to_json()},
                                {"refrt_vs_libtorch", cross.to_json()}});
      if (!options.quiet)
        std::cout << "  " << entry["case"].get<std::string>() << "/" << entry["mode"].get<std::string>() << " "
                  << set["name"].get<std::string>() << " output " << i << ": refrt max_abs "
                  << refrt_cmp.max_abs_error << (refrt_cmp.passed ? " ok" : " MISMATCH") << ", libtorch max_abs "
                  << torch_cmp.max_abs_error << (torch_cmp.passed ? " ok" : " MISMATCH") << "\n";
    }
    entry["input_sets"].push_back(set);
  }
  entry["max_abs_error"] = number_or_string(max_abs);
  entry["max_rel_error"] = number_or_string(max_rel);
  entry["verify"] = all_passed ? "pass" : "fail";
  if (!all_passed) fail_entry(entry, "fail", "verify", "outputs differ from eager beyond tolerance");
  return finish();
}

}  // namespace parity::verify
