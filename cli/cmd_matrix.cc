// parity matrix: capture every scenario and verify each (case, mode) in its own process.
#include <filesystem>
#include <iostream>

#include "command.h"
#include "parity/error.h"
#include "parity/verify/matrix.h"
#include "parity/verify/merge.h"

namespace fs = std::filesystem;

namespace parity::cli {
namespace {

int cmd_matrix(const std::vector<std::string>& argv) {
  Args args(argv, {"--out", "--filter", "--modes", "--timeout", "--opset", "-j", "--jobs", "--baseline", "--known-failures",
                   "--scenarios", "--shard"},
            {"--force-capture", "--list", "--no-peers", "--with-builtin"});
  if (!args.positional().empty()) throw Error({"cli"}, "matrix takes no positional arguments", ErrorKind::kUsage);
  verify::MatrixOptions o;
  o.out_dir = args.get("--out", o.out_dir);
  o.filter = args.get("--filter");
  if (args.has("--modes")) o.modes = args.get_list("--modes");
  o.timeout_seconds = args.get_double("--timeout", o.timeout_seconds);
  o.opset = opset_option(args);
  o.jobs = args.get_int("-j", args.get_int("--jobs", 1));
  if (o.jobs < 1 || o.jobs > 64) throw Error({"cli"}, "-j takes a number of jobs between 1 and 64", ErrorKind::kUsage);
  o.force_capture = args.has("--force-capture");
  o.scenarios = args.get_all("--scenarios");
  for (const auto& suite : o.scenarios)
    if (!fs::exists(suite) && !fs::exists(suite.substr(0, suite.rfind(':'))))
      throw Error({"io", suite}, "no such scenario file or folder (--scenarios takes FILE.py, FILE.py:NAME or a folder)");
  o.with_builtin = args.has("--with-builtin");
  if (o.with_builtin && o.scenarios.empty())
    throw Error({"cli"}, "--with-builtin adds the built-in cases to --scenarios suites: give --scenarios", ErrorKind::kUsage);
  o.shard = args.get("--shard");
  if (!o.shard.empty()) verify::parse_shard(o.shard);  // a usage error before any work
  o.peers = !args.has("--no-peers");
  o.source_dir = env_or("PARITY_SOURCE_DIR", PARITY_SOURCE_DIR);
  o.python = env_or("PARITY_PYTHON", PARITY_PYTHON);
  o.self_exe = fs::read_symlink("/proc/self/exe").string();
  o.baseline = args.get("--baseline");
  if (!o.baseline.empty() && !fs::is_regular_file(o.baseline)) throw Error({"io", o.baseline}, "no such baseline report");
  o.known_failures = args.get("--known-failures", (fs::path(o.source_dir) / "scenarios" / "known_failures.json").string());
  if (args.has("--list")) {
    for (const auto& name : verify::list_cases(o)) std::cout << name << "\n";
    return kExitOk;
  }
  return verify::run_matrix(o);
}

}  // namespace

PARITY_COMMAND("matrix", 40,
               "matrix [--out DIR] [--filter REGEX] [--modes strict,nonstrict,decomposed] [-j N] [--timeout SECONDS]\n"
               "       [--baseline OLD/report.json] [--known-failures FILE] [--no-peers] [--force-capture] [--list]\n"
               "       [--scenarios FILE.py[:NAME]|DIR]... [--with-builtin] [--shard K/N]",
               "capture all scenarios and verify every (case, mode) in parallel children; writes report.json/md/html",
               cmd_matrix);

}  // namespace parity::cli
