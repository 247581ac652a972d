// The peers columns of a case: the official exporter (torch.onnx.export(ep, dynamo=True), run by
// scenarios/peers.py in the venv) on refrt and on ONNX Runtime, and ONNX Runtime on our ONNX.
// Peers only judge; they are never part of Parity's export path.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "parity/verify/verify_case.h"

namespace parity::verify {

// Returns {"ours": {"refrt": ..., "ort": ...}, "official": {"export": ..., "refrt": ..., "ort": ...}, ...};
// each cell is "pass" | "fail" | "error" | "skipped", with details next to it. Never throws.
nlohmann::json run_peers(const std::string& case_dir, const std::string& our_onnx, const std::string& ours_refrt,
                         const std::string& out_dir, const VerifyOptions& options);

}  // namespace parity::verify
