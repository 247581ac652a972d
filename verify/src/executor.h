// How the matrix runs its (case, mode) units. A unit is one `parity verify CASE_DIR --out DIR` child (export,
// refrt, the libtorch reference, eager, the comparison): on this machine in up to --jobs child processes at once
// (executor_local.cc, the default, no dependency), or as tasks on a Ray cluster (executor_ray.cc, `--ray`).
// Either calls `done` once per unit, as each finishes, in any order and possibly from several threads.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "parity/process.h"
#include "parity/verify/matrix.h"
#include "progress.h"

namespace parity::verify {

struct Unit {
  size_t index = 0;  // in the capture order (the report's)
  std::string name, mode, case_dir, out_dir;
};

struct UnitOutcome {
  ProcessResult process;    // how the verify child ended
  std::string lost;         // not empty: no child result, the worker running it was lost (retries spent)
  std::string error;        // not empty: no child result for another reason (the Ray driver failed)
  double wall_seconds = 0;  // the child's wall time, libtorch start-up included
  std::string where;        // the Ray node that ran it ("" locally)
  int attempts = 1;
};

using UnitDone = std::function<void(const Unit&, UnitOutcome)>;

// The child's arguments after `parity verify`: CASE_DIR --out DIR --quiet --no-html [--opset N].
std::vector<std::string> verify_arguments(const MatrixOptions& o, const std::string& case_dir,
                                          const std::string& out_dir);

void run_units_local(const MatrixOptions& o, const std::vector<Unit>& units, Progress& progress, const UnitDone& done);

// Checks, before any capture, that the venv's Python can import Ray (a usage error naming `parity[ray]` if not).
void check_ray(const MatrixOptions& o);
void run_units_ray(const MatrixOptions& o, const std::vector<Unit>& units, Progress& progress, const UnitDone& done);

}  // namespace parity::verify
