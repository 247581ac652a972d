// The Python capture (`python -m scenarios.capture`) run from C++: by `parity matrix` and `parity capture`.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace parity::verify {

struct CaptureRequest {
  std::string python;      // the venv's python
  std::string source_dir;  // repository root (scenarios/ and python/ live there)
  std::string out_dir;     // cases go to out_dir/<case>/<mode>/
  std::vector<std::string> modes = {"strict", "nonstrict", "decomposed"};
  std::string filter;                  // regex on case names ("" = all)
  std::vector<std::string> scenarios;  // user suites: FILE.py, FILE.py:NAME or a folder ("" = built-in only)
  bool with_builtin = false;           // with scenarios: the built-in cases as well
  std::string shard;                   // "K/N" or ""
  bool force = false;                  // capture again even when cached
  int jobs = 1;                        // cases captured in parallel processes
  double timeout_seconds = 3600;
};

// Captures and returns one JSON object per (case, mode) ({case, mode, status, dir, seconds, error}),
// calling `on_case` as each arrives. A suite that cannot load is a parity::Error (exit 3) with Python's
// message; a bad filter or no matching case a usage error.
std::vector<nlohmann::json> run_capture(const CaptureRequest& request,
                                        const std::function<void(const nlohmann::json&)>& on_case);

// The `python -m scenarios list` names of the request's cases (built-in and/or suites).
std::vector<std::string> list_scenarios(const CaptureRequest& request);

}  // namespace parity::verify
