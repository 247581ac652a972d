// The Python capture (`python -m scenarios.capture`) run from C++: by `parity matrix` and `parity capture`.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace parity::verify {

// The scenario library as the Python children import it, with the PYTHONPATH that makes it importable. In a
// checkout source_dir is the repository root and the library its top-level package `scenarios`; an installed
// wheel passes the folder of the `parity` package as source_dir (parity/_paths.py), whose scenarios are the
// subpackage `parity.scenarios`: a top-level `scenarios` would be shadowed by a user's own folder of that
// name (`python -m` puts the working directory first on sys.path). Rule: source_dir is itself a package.
struct ScenariosPackage {
  std::string module;       // "scenarios" or "parity.scenarios": `python -m <module>.capture`
  std::string python_path;  // PYTHONPATH for the child (where that package and `parity` are importable)
};
ScenariosPackage scenarios_package(const std::string& source_dir);

struct CaptureRequest {
  std::string python;      // the venv's python
  std::string source_dir;  // the folder holding scenarios/ (scenarios_package)
  std::string out_dir;     // cases go to out_dir/<case>/<mode>/
  std::vector<std::string> modes = {"strict", "nonstrict", "decomposed"};
  std::string filter;                  // regex on case names ("" = all)
  std::vector<std::string> scenarios;  // user suites: FILE.py, FILE.py:NAME or a folder ("" = built-in only)
  bool with_builtin = false;           // with scenarios: the built-in cases as well
  std::string shard;                   // "K/N" or ""
  bool force = false;                  // capture again even when cached
  int jobs = 1;                        // cases captured in parallel processes
  // "one" / "all": the official exporter on one captured mode per case / on every mode, in the capture's own
  // process, its record kept in the case folder for the peers (scenarios/peers.py); "none": not at capture.
  std::string official = "none";
  // On Ray (`parity matrix --ray`): each case's capture a Ray task (python/parity/_ray_units.py).
  bool ray = false;
  std::string ray_address;  // "" = a Ray started on this machine
  bool ray_shared = false;  // every node sees out_dir at its path (--artifacts DIR)
  std::string ray_store;    // an fsspec URL the case folders travel through ("" = Ray's object store)
  int ray_retries = 2;
  double timeout_seconds = 3600;
};

// Captures and returns one JSON object per (case, mode) ({case, mode, status, dir, seconds, error, order}), in the
// run's order, calling `on_case` as each arrives (cases finish in any order). A suite that cannot load is a
// parity::Error (exit 3) with Python's message; a bad filter or no matching case a usage error.
std::vector<nlohmann::json> run_capture(const CaptureRequest& request,
                                        const std::function<void(const nlohmann::json&)>& on_case);

// The JSON object a Python child printed as one stdout line, read from the first '{' that starts one (bytes another
// writer left on the pipe without a newline do not cost the result); a discarded (null) value when there is none.
nlohmann::json json_line(const std::string& line);

// The `python -m scenarios list` names of the request's cases (built-in and/or suites).
std::vector<std::string> list_scenarios(const CaptureRequest& request);

}  // namespace parity::verify
