// parity conformance: the ONNX backend node tests on refrt, with the checked-in exclusion list, and two
// gates that keep the suite from shrinking quietly (on a full run): every op `parity ops` lists has a
// passing backend test (or is listed in refrt/conformance/untested_ops.txt with the reason), and the
// passed count is at least the floor in refrt/conformance/passed_floor.txt (one number, raised by hand
// when more tests pass, so that a drop is deliberate).
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>

#include "command.h"
#include "parity/error.h"
#include "parity/refrt/conformance.h"
#include "parity/refrt/cpu_isa.h"
#include "parity/refrt/session.h"

namespace parity::cli {
namespace {

struct ConformanceArgs {
  refrt::ConformanceOptions o;
  bool verbose = false;
};

struct Tally {
  int passed = 0, failed = 0, skipped = 0, unexpected = 0, excluded_passing = 0;
  std::map<std::string, int> skip_reasons;
  std::set<std::string> covered;  // "domain::Op" of the passing tests' nodes
};

void count_result(const refrt::ConformanceResult& r, bool verbose, Tally& t) {
  using Status = refrt::ConformanceResult::Status;
  if (r.status == Status::kPass) {
    ++t.passed;
    t.covered.insert(r.ops.begin(), r.ops.end());
    if (!r.excluded_reason.empty()) {
      ++t.excluded_passing;
      std::cout << "XPASS " << r.name << " (listed as excluded: " << r.excluded_reason << "; remove it)\n";
    } else if (verbose) {
      std::cout << "PASS  " << r.name << "\n";
    }
  } else if (r.status == Status::kFail) {
    ++t.failed;
    if (r.excluded_reason.empty()) {
      ++t.unexpected;
      std::cout << "FAIL  " << r.name << ": " << r.detail << "\n";
    } else if (verbose) {
      std::cout << "XFAIL " << r.name << ": " << r.detail << " [excluded: " << r.excluded_reason << "]\n";
    }
  } else {
    ++t.skipped;
    // Group "op not implemented: X Y" by its ops, other reasons by their text up to the first quote.
    t.skip_reasons[r.detail.substr(0, r.detail.find('\''))]++;
    if (verbose) std::cout << "SKIP  " << r.name << ": " << r.detail << "\n";
  }
  std::cout.flush();
}

// The recorded floor: the first line that is not a comment, an integer.
int read_floor(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error({"conformance", path}, "cannot read the passed-count floor");
  for (std::string line; std::getline(in, line);) {
    const auto start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    try {
      return std::stoi(line.substr(start));
    } catch (const std::exception&) {
      throw Error({"conformance", path}, "expected the floor as an integer, got '" + line + "'");
    }
  }
  throw Error({"conformance", path}, "no floor in the file (one integer line expected)");
}

// Registered ops ("domain::Op", "" = ai.onnx) without a passing test and not listed with a reason, and
// listed ops that have one now (the list must shrink with them).
int check_op_coverage(const Tally& t, const std::string& untested_file) {
  const auto listed = refrt::read_exclusions(untested_file);  // same format: pattern (or prefix*) + reason
  auto listing = [&](const std::string& key) -> std::string {
    for (const auto& [pattern, reason] : listed)
      if (pattern == key ||
          (pattern.back() == '*' && key.compare(0, pattern.size() - 1, pattern, 0, pattern.size() - 1) == 0))
        return pattern;
    return "";
  };
  std::set<std::string> ops;
  for (const auto& k : refrt::registered_kernels())
    ops.insert((k.domain == "ai.onnx" ? "" : k.domain) + "::" + k.op_type);
  int problems = 0;
  for (const auto& op : ops) {
    const std::string pattern = listing(op);
    if (t.covered.count(op) && !pattern.empty() && pattern.back() != '*') {
      ++problems;
      std::cout << "FAILED: " << op << " passes a backend test now: remove it from " << untested_file << "\n";
    } else if (!t.covered.count(op) && pattern.empty()) {
      ++problems;
      std::cout << "FAILED: " << op << " is implemented by refrt (parity ops) but no backend test of it passes: "
                << "fix or add one, or list it in " << untested_file << " with the reason\n";
    }
  }
  return problems;
}

int check_floor(const Tally& t, const std::string& floor_file) {
  const int floor = read_floor(floor_file);
  if (t.passed < floor) {
    std::cout << "FAILED: " << t.passed << " tests passed, below the recorded floor " << floor << " (" << floor_file
              << "): a test that passed before no longer does\n";
    return 1;
  }
  if (t.passed > floor)
    std::cout << t.passed << " passed, above the recorded floor " << floor << ": raise it to " << t.passed << " in "
              << floor_file << "\n";
  return 0;
}

void print_totals(const Tally& t, const refrt::ConformanceOptions& o, bool verbose) {
  if (verbose && !t.skip_reasons.empty()) {
    std::cout << "skipped, by reason:\n";
    for (const auto& [reason, n] : t.skip_reasons) std::cout << std::setw(6) << n << "  " << reason << "\n";
  }
  const int in_scope = t.passed + t.failed;
  std::cout << "in scope (ops refrt implements): " << in_scope << ", pass rate " << std::fixed << std::setprecision(1)
            << (in_scope ? 100.0 * t.passed / in_scope : 0.0) << "%; " << t.failed - t.unexpected
            << " failures listed in " << o.exclusions_file << ", " << t.unexpected << " not listed"
            << (t.excluded_passing ? ", " + std::to_string(t.excluded_passing) + " listed tests now pass" : "") << "\n";
  std::cout << t.passed << " passed, " << t.failed << " failed, " << t.skipped << " skipped\n";
}

// The gates judge the whole suite: a full run of the build's tests, or a run whose exclusion list was
// given and has the gate files next to it (tests use small data folders that way).
struct Gates {
  std::string floor_file, untested_file;  // "" = that gate is off
};

Gates gates_for(const refrt::ConformanceOptions& o, bool full_run, bool exclusions_given) {
  const std::filesystem::path dir = std::filesystem::path(o.exclusions_file).parent_path();
  const std::string floor = (dir / "passed_floor.txt").string(), untested = (dir / "untested_ops.txt").string();
  if (full_run) return {floor, untested};
  if (!exclusions_given) return {};
  return {std::filesystem::exists(floor) ? floor : "", std::filesystem::exists(untested) ? untested : ""};
}

int run_conformance_command(ConformanceArgs& a) {
  refrt::ConformanceOptions& o = a.o;
  const bool full_run = o.data_dir.empty() && o.filter.empty(), exclusions_given = !o.exclusions_file.empty();
  if (o.data_dir.empty()) o.data_dir = conformance_dir();
  if (o.exclusions_file.empty()) o.exclusions_file = source_dir() + "/refrt/conformance/exclusions.txt";
  const Gates gates = gates_for(o, full_run, exclusions_given);
  // A cap above this CPU's level would run the lower path and look green: report it as not tested.
  std::cout << "ISA level: " << refrt::isa_summary() << "\n";
  if (const auto& isa = refrt::isa_info(); isa.error.empty() && isa.cap && *isa.cap > isa.cpu) {
    std::cout << "NOT TESTED: " << isa.note << "\n";
    return kExitNotTested;
  }
  refrt::isa_level();  // a misspelt cap is a usage error
  Tally t;
  refrt::run_conformance(o, [&](const refrt::ConformanceResult& r) { count_result(r, a.verbose, t); });
  print_totals(t, o, a.verbose);
  // A green run must not hide a regression: an unlisted failure, a listed test that passes now (the
  // list must shrink, or it would hide the next regression of that test), or no test at all (a missing
  // or empty test tree, a filter that matches nothing) each fail the run.
  const int total = t.passed + t.failed + t.skipped;
  if (total == 0)
    std::cout << "FAILED: no conformance test ran (" << o.data_dir << (o.filter.empty() ? "" : ", filter " + o.filter)
              << ")\n";
  if (t.excluded_passing)
    std::cout << "FAILED: " << t.excluded_passing << " tests listed in " << o.exclusions_file
              << " pass now: remove them from the list\n";
  int failed_gates = 0;
  if (!gates.floor_file.empty() && total > 0) failed_gates += check_floor(t, gates.floor_file);
  if (!gates.untested_file.empty() && total > 0) failed_gates += check_op_coverage(t, gates.untested_file);
  return t.unexpected || t.excluded_passing || total == 0 || failed_gates ? kExitFailed : kExitOk;
}

std::function<int()> setup_conformance(CLI::App& app) {
  auto a = std::make_shared<ConformanceArgs>();
  CLI::App* cmd = app.add_subcommand("conformance", "run the ONNX backend node tests on refrt (N passed, M failed)");
  cmd->add_option("--filter", a->o.filter, "regular expression on test names")->option_text("REGEX");
  cmd->add_flag("--verbose", a->verbose, "a line for every test, and the skip reasons");
  cmd->add_option("--data", a->o.data_dir, "the generated node tests (default: the build's)")->option_text("DIR");
  cmd->add_option("--exclusions", a->o.exclusions_file, "expected failures (default refrt/conformance/exclusions.txt)")
      ->option_text("FILE");
  return [a] { return run_conformance_command(*a); };
}

}  // namespace

PARITY_SUBCOMMAND(60, setup_conformance);

}  // namespace parity::cli
