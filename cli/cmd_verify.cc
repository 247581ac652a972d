// parity verify: one captured case (or a folder of them) against libtorch and eager PyTorch.
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "command.h"
#include "parity/error.h"
#include "parity/verify/report.h"
#include "parity/verify/verify_case.h"

namespace fs = std::filesystem;

namespace parity::cli {
namespace {

// Test hook of the matrix's crash handling: PARITY_TEST_ABORT=<case>/<mode> makes this process abort
// when it verifies that case, as a real crash would. Unset in normal use.
void abort_if_requested(const std::string& case_dir) {
  const char* target = std::getenv("PARITY_TEST_ABORT");
  if (!target || !*target) return;
  const fs::path p = fs::path(case_dir).lexically_normal();
  const std::string label = p.parent_path().filename().string() + "/" + p.filename().string();
  if (label == target) std::abort();
}

// The per-output lines of one verified case (what `--quiet` leaves out).
void print_case_details(const verify::CaseEntry& c) {
  const std::string label = c.case_name + "/" + c.mode;
  for (const auto& set : c.input_sets)
    for (const auto& o : set.outputs) {
      const auto& cross = o.refrt_vs_libtorch;
      if (o.kind) {  // mutated state: libtorch is its oracle
        std::cout << "  " << label << " " << set.name << " " << o.name.value_or("") << ": refrt vs libtorch max_abs "
                  << cross.max_abs_error << (cross.passed ? " ok" : " MISMATCH") << "\n";
        continue;
      }
      const auto &ours = *o.refrt_vs_eager, &torch = *o.libtorch_vs_eager;
      std::cout << "  " << label << " " << set.name << " output " << o.index << ": refrt max_abs " << ours.max_abs_error
                << (ours.passed ? " ok" : " MISMATCH") << (ours.ties ? " (" + std::to_string(ours.ties) + " ties)" : "")
                << ", libtorch max_abs " << torch.max_abs_error << (torch.passed ? " ok" : " MISMATCH") << "\n";
    }
  if (const auto& d = c.first_divergence)
    std::cout << "  " << label << " first divergence: " << d->fx_node << " (" << d->op << ", ONNX node " << d->onnx_node
              << " " << d->onnx_op << ") at " << d->source << "\n";
  for (const auto& f : c.fresh_sets.value_or(std::vector<verify::FreshSetEntry>{})) {
    bool ok = true;
    for (const auto& o : f.outputs) ok = ok && o.refrt_vs_libtorch.passed;
    std::cout << "  " << label << " " << f.name << " " << f.dims.dump() << ": " << (ok ? "ok" : "MISMATCH") << "\n";
  }
}

int cmd_verify(const std::vector<std::string>& argv) {
  Args args(argv, {"--out", "--opset", "--onnx", "--fresh"}, {"--quiet", "--intermediates", "--peers", "--no-html"});
  need_positional(args, 1, "one CASE_DIR argument (a captured case folder)");
  const std::string dir = args.positional()[0];
  if (!fs::is_directory(dir)) throw Error({"io", dir}, "is not a directory (expected a captured case folder)");
  const std::string out = args.get("--out", (fs::path(dir) / "verify").string());
  verify::VerifyOptions options;
  options.opset = opset_option(args);
  const bool quiet = args.has("--quiet");
  options.intermediates = args.has("--intermediates");
  options.onnx_path = args.get("--onnx");
  options.fresh = args.get_int("--fresh", 0);
  if (options.fresh < 0 || options.fresh > 1000)
    throw Error({"cli"}, "--fresh takes a count between 0 and 1000", ErrorKind::kUsage);
  options.peers = args.has("--peers");
  options.python = env_or("PARITY_PYTHON", PARITY_PYTHON);
  options.source_dir = env_or("PARITY_SOURCE_DIR", PARITY_SOURCE_DIR);
  if (!options.onnx_path.empty() && !fs::is_regular_file(options.onnx_path))
    throw Error({"io", options.onnx_path}, "no such ONNX file");
  std::vector<verify::CaseEntry> cases;
  const auto dirs = verify::find_case_dirs(dir);
  if (!options.onnx_path.empty() && dirs.size() != 1)
    throw Error({"cli"}, "--onnx verifies one model against one case: give a <case>/<mode> folder, not " +
                             std::to_string(dirs.size()) + " cases", ErrorKind::kUsage);
  for (const auto& case_dir : dirs) {
    abort_if_requested(case_dir);
    const std::string case_out = dirs.size() == 1 ? out : (fs::path(out) / fs::path(case_dir).filename()).string();
    cases.push_back(verify::verify_case_dir(case_dir, case_out, options));
    if (!quiet) print_case_details(cases.back());
  }
  const auto report = verify::make_report("parity verify " + dir, cases);
  verify::write_report(out, report, args.has("--no-html") ? "" : verify::find_plotly_js(options.python));
  if (!quiet) {
    for (const auto& c : cases)
      std::cout << c.case_name << "/" << c.mode << ": " << c.status << (c.error ? " — " + *c.error : "") << "\n";
    std::cout << "report: " << (fs::path(out) / "report.md").string() << "\n";
  }
  return verify::report_passed(report) ? kExitOk : kExitFailed;
}

}  // namespace

PARITY_COMMAND("verify", 30,
               "verify CASE_DIR [--out DIR] [--opset N] [--onnx MODEL.onnx] [--intermediates] [--fresh K] [--peers] [--no-html] [--quiet]",
               "compare refrt on our ONNX (or a given one) with libtorch and eager PyTorch for a captured case",
               cmd_verify);

}  // namespace parity::cli
