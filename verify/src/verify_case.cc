#include "parity/verify/verify_case.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <optional>

#include "fresh_inputs.h"
#include "intermediates.h"
#include "onnx_graph.h"
#include "parity/error.h"
#include "parity/exporter/export.h"
#include "parity/fs.h"
#include "parity/refrt/session.h"
#include "parity/tensor_io.h"
#include "parity/verify/case_info.h"
#include "parity/verify/compare.h"
#include "parity/verify/reference.h"
#include "peers.h"
#include "ties.h"

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

// Per-op-type totals of one profiled refrt run, slowest first.
json profile_summary(const std::vector<refrt::NodeTiming>& timings, const std::string& set_name) {
  std::map<std::string, std::pair<int64_t, double>> by_op;
  double total = 0;
  for (const auto& t : timings) {
    auto& [count, ms] = by_op[t.op_type];
    ++count, ms += t.ms, total += t.ms;
  }
  json ops = json::array();
  for (const auto& [op, v] : by_op) ops.push_back({{"op_type", op}, {"count", v.first}, {"ms", v.second}});
  std::sort(ops.begin(), ops.end(), [](const json& a, const json& b) { return a["ms"].get<double>() > b["ms"].get<double>(); });
  return {{"input_set", set_name}, {"total_ms", total}, {"nodes", timings.size()}, {"ops", ops}};
}

uint64_t name_seed(const std::string& s) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a: a stable seed per case, the same on every run
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
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
  const CaseInfo info = load_case_info(case_dir);
  json entry = {{"case", info.name},
                {"mode", info.mode},
                {"status", "pass"}, {"stage", nullptr}, {"error", nullptr},
                {"export", "skipped"}, {"run", "skipped"}, {"verify", "skipped"},
                {"max_abs_error", nullptr}, {"max_rel_error", nullptr}, {"onnx", nullptr},
                {"onnx_given", !options.onnx_path.empty()}, {"first_divergence", nullptr},
                {"input_sets", json::array()}};
  auto finish = [&]() -> json {
    entry["seconds"] = seconds_since(start);
    return entry;
  };
  if (info.status != "captured") {
    fail_entry(entry, "capture_failed", "capture", info.error.empty() ? "capture did not finish" : info.error);
    return finish();
  }
  const std::string label = info.name + "/" + info.mode;

  // A case with custom ops lists its TORCH_LIBRARY libraries (the libtorch reference dispatches their
  // ops) and the exporter plugins that translate them: case.json "torch_libraries", "export_plugins".
  try {
    for (const auto& library : info.torch_libraries) load_torch_library(library);
  } catch (const Error& e) {
    fail_entry(entry, "error", "reference", e.what());
    return finish();
  }

  // Export, or take the model we were given.
  pt2::Program program;
  std::string onnx_path = options.onnx_path;
  try {
    program = pt2::read_pt2((fs::path(case_dir) / "model.pt2").string());
    if (onnx_path.empty()) {
      onnx_path = (fs::path(out_dir) / "model.onnx").string();
      exporter::ExportOptions eo;
      eo.opset = options.opset;
      eo.plugins = info.export_plugins;
      fs::create_directories(out_dir);
      write_file_atomic(onnx_path, exporter::export_program(program, eo), "export");
      entry["export"] = "ok";
    }
    entry["onnx"] = onnx_path;
  } catch (const Error& e) {
    entry["export"] = "error";
    fail_entry(entry, "error", e.context().stage.empty() ? "export" : e.context().stage, e.what());
    return finish();
  }

  // Run on refrt and on the libtorch reference, every input set, both against eager.
  std::unique_ptr<refrt::Session> session;
  std::map<std::string, OnnxProducer> producers;
  try {
    session = refrt::Session::load_file(onnx_path);
    if (options.intermediates) producers = onnx_producers(onnx_path);
  } catch (const Error& e) {
    entry["run"] = "error";
    fail_entry(entry, "error", "refrt", e.what());
    return finish();
  }
  double max_abs = 0, max_rel = 0;
  bool all_passed = true;
  int64_t first_index = -1;
  const auto sets = list_test_data_sets(case_dir);
  if (sets.empty()) {
    fail_entry(entry, "error", "verify", "no test_data_set_* directories in " + case_dir);
    return finish();
  }
  std::vector<std::vector<Tensor>> captured_inputs;
  const std::vector<std::string> user_outputs = program.user_output_names();
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
    captured_inputs.push_back(inputs);
    refrt::RunResult ours;
    ReferenceResult reference;
    try {
      refrt::RunOptions ro;
      ro.keep_intermediates = options.intermediates;
      ro.profile = !entry.contains("profile");  // one profiled run per case (the first set)
      ours = session->run(inputs, ro);
      if (ro.profile) entry["profile"] = profile_summary(ours.timings, set["name"]);
      entry["run"] = "ok";
    } catch (const Error& e) {
      entry["run"] = "error";
      fail_entry(entry, "error", "refrt", e.what());
      return finish();
    }
    try {
      reference = run_reference(program, inputs, options.intermediates);
    } catch (const Error& e) {
      fail_entry(entry, "error", "reference", e.what());
      return finish();
    }
    // Our ONNX may carry the mutated state after the user's outputs; a given model (--onnx) may not.
    const size_t n_user = expected.size(), n_mutated = reference.mutations.size();
    const bool with_mutations = n_mutated > 0 && ours.outputs.size() == n_user + n_mutated;
    if ((ours.outputs.size() != n_user && !with_mutations) || reference.outputs.size() != n_user) {
      fail_entry(entry, "fail", "verify", "output count differs: eager " + std::to_string(expected.size()) +
                                              ", refrt " + std::to_string(ours.outputs.size()) + ", libtorch " +
                                              std::to_string(reference.outputs.size()));
      entry["verify"] = "fail";
      return finish();
    }
    // Index outputs with ties: the input the indices select from, from libtorch's run of this set
    // (repeated with every value kept only when an index output differs).
    std::optional<std::map<std::string, Tensor>> kept;
    auto settle = [&](Comparison& cmp, size_t i, const Tensor& want, const Tensor& got) {
      if (cmp.passed || i >= user_outputs.size()) return;
      const auto source = index_source(program, user_outputs[i]);
      if (!source) return;
      if (!kept) kept = options.intermediates ? reference.intermediates : run_reference(program, inputs, true).intermediates;
      const auto input = kept->find(source->input_value);
      if (input != kept->end()) settle_ties(cmp, *source, input->second, want, got);
    };
    for (size_t i = 0; i < expected.size(); ++i) {
      Comparison refrt_cmp = compare_tensors(expected[i].tensor, ours.outputs[i]);
      Comparison torch_cmp = compare_tensors(expected[i].tensor, reference.outputs[i]);
      Comparison cross = compare_tensors(reference.outputs[i], ours.outputs[i]);
      settle(refrt_cmp, i, expected[i].tensor, ours.outputs[i]);
      settle(torch_cmp, i, expected[i].tensor, reference.outputs[i]);
      settle(cross, i, reference.outputs[i], ours.outputs[i]);
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
        std::cout << "  " << label << " " << set["name"].get<std::string>() << " output " << i << ": refrt max_abs "
                  << refrt_cmp.max_abs_error << (refrt_cmp.passed ? " ok" : " MISMATCH")
                  << (refrt_cmp.ties ? " (" + std::to_string(refrt_cmp.ties) + " ties)" : "") << ", libtorch max_abs "
                  << torch_cmp.max_abs_error << (torch_cmp.passed ? " ok" : " MISMATCH") << "\n";
    }
    // Mutated state has no eager record: libtorch's run of the same program is its oracle.
    for (size_t i = 0; with_mutations && i < n_mutated; ++i) {
      const Comparison cross = compare_tensors(reference.mutations[i], ours.outputs[n_user + i]);
      all_passed = all_passed && cross.passed;
      set["outputs"].push_back({{"index", n_user + i},
                                {"name", session->outputs()[n_user + i].name},
                                {"kind", "mutation"},
                                {"dtype", dtype_name(reference.mutations[i].dtype())},
                                {"shape", reference.mutations[i].shape()},
                                {"refrt_vs_libtorch", cross.to_json()}});
      if (!options.quiet)
        std::cout << "  " << label << " " << set["name"].get<std::string>() << " "
                  << session->outputs()[n_user + i].name << ": refrt vs libtorch max_abs " << cross.max_abs_error
                  << (cross.passed ? " ok" : " MISMATCH") << "\n";
    }
    if (options.intermediates) {
      const IntermediateScan scan = compare_intermediates(program, producers, reference.intermediates, ours.intermediates);
      set["intermediates"] = {{"compared", scan.values.size()}, {"unmatched", scan.unmatched}, {"values", scan.values}};
      if (scan.first_index >= 0 && (first_index < 0 || scan.first_index < first_index)) {
        first_index = scan.first_index;
        entry["first_divergence"] = scan.first_divergence;
        entry["first_divergence"]["input_set"] = set["name"];
      }
    }
    entry["input_sets"].push_back(set);
  }
  entry["max_abs_error"] = number_or_string(max_abs);
  entry["max_rel_error"] = number_or_string(max_rel);
  entry["verify"] = all_passed ? "pass" : "fail";
  if (!all_passed) fail_entry(entry, "fail", "verify", "outputs differ from eager beyond tolerance");
  if (!options.quiet && entry["first_divergence"].is_object()) {
    const json& d = entry["first_divergence"];
    std::cout << "  " << label << " first divergence: " << d["fx_node"].get<std::string>() << " ("
              << d["op"].get<std::string>() << ", ONNX node " << d["onnx_node"].get<std::string>() << " "
              << d["onnx_op"].get<std::string>() << ") at " << d["source"].get<std::string>() << "\n";
  }

  // Fresh dynamic dims: libtorch and refrt must agree on shapes never seen at capture.
  if (options.fresh > 0) {
    entry["fresh_sets"] = json::array();
    try {
      const uint64_t seed = options.fresh_seed ? options.fresh_seed : name_seed(label);
      bool fresh_passed = true;
      for (const auto& fresh : make_fresh_sets(program, captured_inputs, options.fresh, seed)) {
        json dims = json::object();
        for (const auto& [sym, v] : fresh.dims)
          dims[program.dim_names.count(sym) ? program.dim_names.at(sym) : sym] = v;
        json set = {{"name", fresh.name}, {"dims", dims}, {"outputs", json::array()}};
        const auto ours = session->run(fresh.inputs).outputs;
        const ReferenceResult result = run_reference(program, fresh.inputs);
        std::vector<Tensor> reference = result.outputs;
        if (ours.size() == reference.size() + result.mutations.size())
          reference.insert(reference.end(), result.mutations.begin(), result.mutations.end());
        if (ours.size() != reference.size())
          throw Error({"fresh"}, "refrt returned " + std::to_string(ours.size()) + " outputs, libtorch " +
                                     std::to_string(reference.size()));
        for (size_t i = 0; i < ours.size(); ++i) {
          const Comparison cmp = compare_tensors(reference[i], ours[i]);
          fresh_passed = fresh_passed && cmp.passed;
          set["outputs"].push_back({{"index", i}, {"dtype", dtype_name(reference[i].dtype())},
                                    {"shape", reference[i].shape()}, {"refrt_vs_libtorch", cmp.to_json()}});
        }
        if (!options.quiet)
          std::cout << "  " << label << " " << fresh.name << " " << dims.dump() << ": "
                    << (set["outputs"].empty() || fresh_passed ? "ok" : "MISMATCH") << "\n";
        entry["fresh_sets"].push_back(set);
      }
      if (!fresh_passed && entry["status"] == "pass") {
        entry["verify"] = "fail";
        fail_entry(entry, "fail", "fresh", "refrt differs from libtorch on fresh dynamic dims");
      }
    } catch (const Error& e) {
      if (entry["status"] == "pass") fail_entry(entry, "error", "fresh", e.what());
    }
  }

  if (options.peers) entry["peers"] = run_peers(case_dir, onnx_path, ours_refrt_verdict(entry), out_dir, options);
  return finish();
}

}  // namespace parity::verify
