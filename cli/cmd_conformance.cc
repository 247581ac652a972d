// parity conformance: the ONNX backend node tests on refrt, with the checked-in exclusion list.
#include <iomanip>
#include <iostream>
#include <map>

#include "command.h"
#include "parity/error.h"
#include "parity/refrt/conformance.h"
#include "parity/refrt/cpu_isa.h"

namespace parity::cli {
namespace {

struct ConformanceArgs {
  refrt::ConformanceOptions o;
  bool verbose = false;
};

int run_conformance_command(ConformanceArgs& a) {
  refrt::ConformanceOptions& o = a.o;
  if (o.data_dir.empty()) o.data_dir = env_or("PARITY_CONFORMANCE_DIR", PARITY_CONFORMANCE_DIR);
  if (o.exclusions_file.empty()) o.exclusions_file = source_dir() + "/refrt/conformance/exclusions.txt";
  const bool verbose = a.verbose;
  // A cap above this CPU's level would run the lower path and look green: report it as not tested.
  std::cout << "ISA level: " << refrt::isa_summary() << "\n";
  if (const auto& isa = refrt::isa_info(); isa.error.empty() && isa.cap && *isa.cap > isa.cpu) {
    std::cout << "NOT TESTED: " << isa.note << "\n";
    return kExitNotTested;
  }
  refrt::isa_level();  // a misspelt cap is a usage error
  using Status = refrt::ConformanceResult::Status;
  int passed = 0, failed = 0, skipped = 0, unexpected = 0, excluded_passing = 0;
  std::map<std::string, int> skip_reasons;
  refrt::run_conformance(o, [&](const refrt::ConformanceResult& r) {
    if (r.status == Status::kPass) {
      ++passed;
      if (!r.excluded_reason.empty()) {
        ++excluded_passing;
        std::cout << "XPASS " << r.name << " (listed as excluded: " << r.excluded_reason << "; remove it)\n";
      } else if (verbose) {
        std::cout << "PASS  " << r.name << "\n";
      }
    } else if (r.status == Status::kFail) {
      ++failed;
      if (r.excluded_reason.empty()) {
        ++unexpected;
        std::cout << "FAIL  " << r.name << ": " << r.detail << "\n";
      } else if (verbose) {
        std::cout << "XFAIL " << r.name << ": " << r.detail << " [excluded: " << r.excluded_reason << "]\n";
      }
    } else {
      ++skipped;
      // Group "op not implemented: X Y" by its ops, other reasons by their text up to the first quote.
      skip_reasons[r.detail.substr(0, r.detail.find('\''))]++;
      if (verbose) std::cout << "SKIP  " << r.name << ": " << r.detail << "\n";
    }
    std::cout.flush();
  });
  if (verbose && !skip_reasons.empty()) {
    std::cout << "skipped, by reason:\n";
    for (const auto& [reason, n] : skip_reasons) std::cout << std::setw(6) << n << "  " << reason << "\n";
  }
  const int in_scope = passed + failed;
  std::cout << "in scope (ops refrt implements): " << in_scope << ", pass rate "
            << std::fixed << std::setprecision(1) << (in_scope ? 100.0 * passed / in_scope : 0.0) << "%; "
            << failed - unexpected << " failures listed in " << o.exclusions_file << ", " << unexpected
            << " not listed" << (excluded_passing ? ", " + std::to_string(excluded_passing) + " listed tests now pass" : "")
            << "\n";
  std::cout << passed << " passed, " << failed << " failed, " << skipped << " skipped\n";
  // A green run must not hide a regression: an unlisted failure, a listed test that passes now (the
  // list must shrink, or it would hide the next regression of that test), or no test at all (a missing
  // or empty test tree, a filter that matches nothing) each fail the run.
  if (passed + failed + skipped == 0)
    std::cout << "FAILED: no conformance test ran (" << o.data_dir << (o.filter.empty() ? "" : ", filter " + o.filter)
              << ")\n";
  if (excluded_passing)
    std::cout << "FAILED: " << excluded_passing << " tests listed in " << o.exclusions_file
              << " pass now: remove them from the list\n";
  return unexpected || excluded_passing || passed + failed + skipped == 0 ? kExitFailed : kExitOk;
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
