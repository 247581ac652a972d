// parity matrix: capture every scenario x mode (Python, cached), verify each in its own process, report.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace parity::verify {

struct MatrixOptions {
  std::string out_dir = "out/matrix";
  std::string filter;  // regex on case names ("" = all)
  std::vector<std::string> modes = {"strict", "nonstrict", "decomposed"};
  double timeout_seconds = 600;  // per (case, mode)
  int opset = 0;                 // 0: the exporter's automatic choice (exporter::resolve_opset)
  int jobs = 0;                  // parallel children (capture workers, `parity verify`, peers); 0: default_jobs()
  bool force_capture = false;
  bool reverify = false;  // verify every unit again, even one whose inputs and binaries match its stored result
  bool peers = true;      // official exporter / ONNX Runtime columns
  bool official_every_mode = false;    // the official exporter on every mode, not one capture per case
  std::string baseline;                // an older report.json: regressions against it fail the run
  std::string known_failures;          // scenarios/known_failures.json ("" = none)
  std::vector<std::string> scenarios;  // user suites (FILE.py[:NAME] or folders) instead of the built-in cases
  bool with_builtin = false;           // with scenarios: the built-in cases as well
  std::string shard;                   // "K/N": only this share of the (case, mode) pairs ("" = all)
  bool ray = false;                    // the units as Ray tasks (executor_ray.cc) instead of local children
  std::string ray_address;             // "" = ray.init() on this machine
  int ray_retries = 2;                 // runs again of a unit whose worker died, before `error (worker lost)`
  std::string artifacts;   // cases/ and results/ here ("" = in out_dir; Ray: via its object store); or an fsspec URL
                           // (s3://..., not file://) the Ray units' archives travel through, the folders in out_dir
  std::string python;      // the venv's python (capture runs there)
  std::string source_dir;  // repository root (where the scenarios package lives)
  std::string self_exe;    // this parity binary (each case is verified by `parity verify` in a child)
};

// The CPUs this process may run on (its affinity mask, as a container or taskset limits it).
int usable_cpus();
// The matrix's default --jobs: one child per usable CPU, at most one per 3 GiB of available memory (a capture
// worker holds torch, transformers and a model; a verify child libtorch, refrt and the case), at least 1.
int default_jobs();

// Where a run's time went: one entry per phase, in order (capture, verify, peers, report).
struct MatrixPhase {
  std::string name;
  double seconds = 0;  // wall time of the phase
  std::string detail;  // what it consisted of (per mode, summed over processes, ...)
};

struct MatrixResult {
  nlohmann::json report;  // as written to OUT/report.json
  double seconds = 0;
  std::vector<MatrixPhase> phases;
  bool html = false;  // report.html written
  int exit_code = 0;  // 0 when no case failed unexpectedly and nothing regressed, 1 otherwise
};

// Captures, verifies and writes the report; prints progress lines as cases finish (the summary is the
// caller's). Throws parity::Error when the matrix cannot run at all (capture cannot start, bad filter,
// bad baseline).
MatrixResult run_matrix(const MatrixOptions& options);

// --artifacts is an fsspec URL (s3://, gs://, memory://, ...), not a folder (file:// URLs are folders).
bool artifacts_is_url(const std::string& artifacts);

// The scenario names (`python -m scenarios list`) matching the filter, sorted.
std::vector<std::string> list_cases(const MatrixOptions& options);

}  // namespace parity::verify
