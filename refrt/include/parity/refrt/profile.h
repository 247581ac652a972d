// Per-op CPU profiles of refrt runs: `parity profile`.
//
// The trace follows ONNX Runtime's profiler schema (a Chrome-trace JSON array; "Session" events for
// loading and each model_run, one "Node" event "<node>_kernel_time" per kernel call with args
// op_name, provider, node_index, input_type_shape, output_type_shape), so Perfetto, chrome://tracing
// and ORT's own tools read it and it joins with an ORT profile node by node.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "parity/refrt/session.h"

namespace parity::refrt {

struct ProfileOptions {
  int runs = 10;   // measured runs
  int warmup = 2;  // runs before measuring (not in the profile)
};

struct Profile {
  std::string model;
  int warmup = 0;
  double load_ms = 0;
  std::vector<double> run_start_ms;            // of each measured run, from the first one
  std::vector<double> run_ms;                  // wall time of each measured run
  std::vector<std::vector<NodeTiming>> nodes;  // per measured run
};

Profile profile_session(const Session& session, const std::vector<Tensor>& inputs, const ProfileOptions& options,
                        const std::string& model, double load_ms);

nlohmann::json chrome_trace(const Profile& profile);

// {"model","runs","warmup","load_ms","mean_run_ms","machine":{...},"by_op_type":[...],"by_node":[...]}: each
// row has calls, total_ms, share (% of kernel time), mean_us, gflops_per_s / gb_per_s (null when the
// kernel declares no FLOPs) and impl (what ran it: "onednn brg:avx512_core", "refrt", or several with
// their share of the time). Rows sorted by total time, largest first. "machine" is machine_json().
// The trace's Node events carry the same impl in args.
nlohmann::json summarize_profile(const Profile& profile);

// Adds ORT's per-op-type mean ms per run (op type → ms) as "ort_ms_per_run" and "ratio" (refrt / ORT)
// to the by_op_type rows, and the ORT run time as "ort_mean_run_ms".
void add_ort_comparison(nlohmann::json& summary, const nlohmann::json& ort);

// cpu_facts() (cpu_isa.h) as JSON: cpu, family, model, refrt_isa, onednn, onednn_isa, openblas,
// openblas_core, openblas_generic; and as one line for people.
nlohmann::json machine_json();
std::string machine_line(const nlohmann::json& machine);

std::string profile_markdown(const nlohmann::json& summary, size_t top_nodes = 20);
std::string profile_text(const nlohmann::json& summary, size_t top_nodes = 10);

}  // namespace parity::refrt
