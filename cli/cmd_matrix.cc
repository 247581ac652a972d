// parity matrix: capture every scenario and verify each (case, mode) in its own process.
#include <filesystem>
#include <iomanip>
#include <iostream>

#include "command.h"
#include "parity/error.h"
#include "parity/verify/matrix.h"
#include "parity/verify/merge.h"
#include "parity/verify/report.h"

namespace fs = std::filesystem;

namespace parity::cli {
namespace {

struct MatrixArgs {
  verify::MatrixOptions o;
  std::string known_failures;
  std::string official = "one";
  std::string junit;  // --junit FILE
  bool no_peers = false, list = false;
};

void print_summary(const verify::MatrixResult& result, const std::string& out_dir) {
  const nlohmann::json& report = result.report;
  const nlohmann::json& s = report["summary"];
  std::cout << s["pass"].get<int>() << "/" << s["total"].get<int>() << " passed";
  for (const char* k : {"fail", "error", "capture_failed", "crashed", "timeout", "xfail", "xpass"})
    if (s.value(k, 0) > 0) std::cout << ", " << s[k].get<int>() << " " << k;
  std::cout << " in " << std::fixed << std::setprecision(1) << result.seconds << " s" << std::endl;
  // Where the time went, phase by phase (README line 1's time is mostly here).
  for (const auto& phase : result.phases)
    std::cout << "  phase " << std::left << std::setw(8) << phase.name << std::right << std::setw(8)
              << std::setprecision(1) << phase.seconds << " s  " << phase.detail << std::endl;
  for (const auto& c : report["cases"])
    if (c.value("status", "") == "xpass")
      std::cout << "  xpass: " << c.value("case", "") << "/" << c.value("mode", "")
                << " passes: remove it from the known failures" << std::endl;
  for (const auto& r : report.value("regressions", nlohmann::json::array()))
    std::cout << "  REGRESSION " << r.value("case", "") << "/" << r.value("mode", "") << ": " << r.value("what", "")
              << std::endl;
  std::cout << "report: " << (fs::path(out_dir) / "report.md").string() << ", "
            << (fs::path(out_dir) / "report.html").string() << std::endl;
}

int run_matrix_command(MatrixArgs& a) {
  verify::MatrixOptions& o = a.o;
  for (const auto& suite : o.scenarios)
    if (!fs::exists(suite) && !fs::exists(suite.substr(0, suite.rfind(':'))))
      throw Error({"io", suite},
                  "no such scenario file or folder (--scenarios takes FILE.py, FILE.py:NAME or a folder)");
  if (o.with_builtin && o.scenarios.empty())
    throw Error({"cli"}, "--with-builtin adds the built-in cases to --scenarios suites: give --scenarios",
                ErrorKind::kUsage);
  if (!o.shard.empty()) verify::parse_shard(o.shard);                             // a usage error before any work
  if (o.artifacts.rfind("file://", 0) == 0) o.artifacts = o.artifacts.substr(7);  // a folder
  if (verify::artifacts_is_url(o.artifacts) && !o.ray)
    throw Error({"cli", "--artifacts"},
                "an fsspec URL as --artifacts carries the Ray units' folders: give --ray too (or a folder)",
                ErrorKind::kUsage);
  o.peers = !a.no_peers;
  o.official_every_mode = a.official == "all";
  o.source_dir = source_dir();
  o.python = venv_python();
  o.self_exe = fs::read_symlink("/proc/self/exe").string();
  if (!o.baseline.empty() && !fs::is_regular_file(o.baseline))
    throw Error({"io", o.baseline}, "no such baseline report");
  o.known_failures = a.known_failures.empty() ? (fs::path(o.source_dir) / "scenarios" / "known_failures.json").string()
                                              : a.known_failures;
  if (a.list) {
    for (const auto& name : verify::list_cases(o)) std::cout << name << "\n";
    return kExitOk;
  }
  const verify::MatrixResult result = verify::run_matrix(o);
  if (!a.junit.empty()) verify::write_junit(a.junit, result.report, (fs::path(o.out_dir) / "report.html").string());
  print_summary(result, o.out_dir);
  if (!a.junit.empty()) std::cout << "junit: " << a.junit << std::endl;
  return result.exit_code;
}

std::function<int()> setup_matrix(CLI::App& app) {
  auto a = std::make_shared<MatrixArgs>();
  verify::MatrixOptions& o = a->o;
  CLI::App* cmd = app.add_subcommand(
      "matrix", "capture all scenarios and verify every (case, mode) in parallel children; writes report.json/md/html");
  cmd->add_option("--out", o.out_dir, "output folder (cases/, results/, report.*)")
      ->capture_default_str()
      ->option_text("DIR");
  cmd->add_option("--filter", o.filter, "regular expression on case names")->option_text("REGEX");
  add_modes_option(cmd, o.modes);
  cmd->add_option("-j,--jobs", o.jobs,
                  "parallel children (default: one per CPU this process may use, at most one per 3 GiB of "
                  "available memory)")
      ->check(CLI::Range(1, 64))
      ->option_text("N");
  cmd->add_option("--timeout", o.timeout_seconds, "time limit of one (case, mode)")
      ->capture_default_str()
      ->option_text("SECONDS");
  add_opset_option(cmd, o.opset);
  cmd->add_option("--baseline", o.baseline, "an older report.json: regressions against it fail the run")
      ->option_text("OLD/report.json");
  cmd->add_option("--known-failures", a->known_failures, "known failures (default scenarios/known_failures.json)")
      ->option_text("FILE");
  cmd->add_flag("--no-peers", a->no_peers, "without the official exporter / ONNX Runtime columns");
  cmd->add_option("--official", a->official,
                  "the official exporter on one capture per case (non-strict, else strict) or on every mode")
      ->check(CLI::IsMember({"one", "all"}))
      ->capture_default_str()
      ->option_text("one|all");
  cmd->add_flag("--force-capture", o.force_capture, "capture again even when cached");
  cmd->add_flag("--reverify", o.reverify,
                "verify every (case, mode) again, even where the case folder, the binaries and the options are "
                "those of its stored result");
  cmd->add_flag("--list", a->list, "print the matching scenario names and stop");
  cmd->add_option("--scenarios", o.scenarios, "a user's suite instead of the built-in cases (repeatable)")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->option_text("FILE.py[:NAME]|DIR");
  cmd->add_flag("--with-builtin", o.with_builtin, "with --scenarios: the built-in cases as well");
  cmd->add_option("--junit", a->junit, "also write the results as JUnit XML (one testcase per case and mode)")
      ->option_text("FILE");
  cmd->add_option("--shard", o.shard, "run the K-th of N shares of the (case, mode) pairs")->option_text("K/N");
  CLI::Option* ray =
      cmd->add_option("--ray", o.ray_address,
                      "run the (case, mode) units as Ray tasks: on the cluster at ADDRESS, else on a Ray started here")
          ->expected(0, 1)
          ->option_text("[ADDRESS]");
  cmd->add_option("--ray-retries", o.ray_retries, "with --ray: runs again of a unit whose worker or node died")
      ->check(CLI::Range(0, 100))
      ->capture_default_str()
      ->option_text("N");
  cmd->add_option("--artifacts", o.artifacts,
                  "cases/ and results/ in DIR (with --ray: a folder every node sees at the same path; without it, "
                  "case folders travel through Ray's object store); with --ray also an fsspec URL (s3://bucket/run, "
                  "gs://..., needs fsspec) the units' archives travel through")
      ->option_text("DIR|URL");
  return [a, ray] {
    a->o.ray = ray->count() > 0;
    return run_matrix_command(*a);
  };
}

}  // namespace

PARITY_SUBCOMMAND(40, setup_matrix);

}  // namespace parity::cli
