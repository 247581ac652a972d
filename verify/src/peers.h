// The peers columns of a case: the official exporter (torch.onnx.export(ep, dynamo=True), run by
// scenarios/peers.py in the venv) on refrt and on ONNX Runtime, and ONNX Runtime on our ONNX.
// Peers only judge; they are never part of Parity's export path.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "parity/verify/report_types.h"
#include "parity/verify/verify_case.h"

namespace parity::verify {

// The ours/refrt cell of a verified case entry: "pass" when every refrt output matched eager, "fail"
// when one did not, "error" when refrt did not run.
std::string ours_refrt_verdict(const CaseEntry& entry);

// One case in its own Python process (parity verify --peers).
// Each cell of the result is "pass" | "fail" | "error" | "skipped" (the official export failed) |
// "not_run" (the matrix ran the official exporter on another mode), with details next to it. Never throws.
Peers run_peers(const std::string& case_dir, const std::string& our_onnx, const std::string& ours_refrt,
                const std::string& out_dir, const VerifyOptions& options);

// The peers entry from one line of scenarios.peers (and refrt on the official model). Never throws.
Peers peers_from_line(const nlohmann::json& line, const std::string& case_dir, const std::string& ours_refrt);

struct PeersJob {
  std::string case_dir, our_onnx, out_dir;
  bool official = true;  // false: ONNX Runtime on our model only, the official columns "not_run"
};
// Many cases in one Python process (the matrix): torch starts once. `on_result(index, peers entry)` is
// called as each case finishes; cases the process never reported get an "error" entry.
void run_peers_batch(const std::vector<PeersJob>& jobs, const std::vector<std::string>& ours_refrt,
                     const std::string& python, const std::string& source_dir, double timeout_seconds,
                     const std::function<void(size_t, Peers)>& on_result,
                     const std::vector<std::string>& extra_args = {});

}  // namespace parity::verify
