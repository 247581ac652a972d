// parity verify: export a captured case, run it on refrt and on the libtorch reference, compare with eager.
#pragma once
#include <string>
#include <vector>

#include "parity/verify/report_types.h"

namespace parity::verify {

struct VerifyOptions {
  int opset = 0;               // 0: the exporter's automatic choice (exporter::resolve_opset)
  bool intermediates = false;  // compare every FX value with the ONNX value of the same name
  std::string onnx_path;       // verify this ONNX model instead of exporting one
  int fresh = 0;               // extra input sets with new dynamic dim values (libtorch vs refrt)
  uint64_t fresh_seed = 0;     // 0 = derived from the case name
  bool peers = false;          // official torch.onnx exporter and ONNX Runtime columns (scenarios/peers.py)
  std::string python;          // the venv's python (peers)
  std::string source_dir;      // repository root (peers.py lives in scenarios/)
};

// Verifies one `<case>/<mode>` directory (holding case.json) and returns its report.json case entry
// (fields documented in the README). Prints nothing. Failures of the case are recorded in the entry, not thrown;
// only an unusable case directory throws parity::Error.
CaseEntry verify_case_dir(const std::string& case_dir, const std::string& out_dir, const VerifyOptions& options);

// The `<case>/<mode>` directories below `dir`: `dir` itself when it holds case.json, else its subdirectories.
std::vector<std::string> find_case_dirs(const std::string& dir);

}  // namespace parity::verify
