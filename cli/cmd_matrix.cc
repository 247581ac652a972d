// parity matrix: capture every scenario and verify each (case, mode) in its own process.
#include <filesystem>

#include "command.h"
#include "parity/error.h"
#include "parity/verify/matrix.h"

namespace fs = std::filesystem;

namespace parity::cli {
namespace {

int cmd_matrix(const std::vector<std::string>& argv) {
  Args args(argv, {"--out", "--filter", "--modes", "--timeout", "--opset"}, {"--force-capture"});
  if (!args.positional().empty()) throw Error({"cli"}, "matrix takes no positional arguments", ErrorKind::kUsage);
  verify::MatrixOptions o;
  o.out_dir = args.get("--out", o.out_dir);
  o.filter = args.get("--filter");
  if (args.has("--modes")) o.modes = args.get_list("--modes");
  o.timeout_seconds = args.get_double("--timeout", o.timeout_seconds);
  o.opset = opset_option(args);
  o.force_capture = args.has("--force-capture");
  o.source_dir = env_or("PARITY_SOURCE_DIR", PARITY_SOURCE_DIR);
  o.python = env_or("PARITY_PYTHON", PARITY_PYTHON);
  o.self_exe = fs::read_symlink("/proc/self/exe").string();
  return verify::run_matrix(o);
}

}  // namespace

PARITY_COMMAND("matrix", 40,
               "matrix [--out DIR] [--filter REGEX] [--modes strict,nonstrict,decomposed] [--timeout SECONDS] [--force-capture]",
               "capture all scenarios and verify every (case, mode); writes report.json/md", cmd_matrix);

}  // namespace parity::cli
