// parity verify: one captured case (or a folder of them) against libtorch and eager PyTorch.
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <utility>

#include "command.h"
#include "parity/error.h"
#include "parity/verify/compare.h"
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

struct VerifyArgs {
  std::string dir, out, junit;
  verify::VerifyOptions options;
  bool quiet = false, no_html = false;
};

// A mismatch's NaN / Inf counts and worst elements, under its line.
void print_detail(const char* who, const verify::Comparison& c) {
  if (!c.passed && c.detail) std::cout << "      " << who << ": " << verify::mismatch_summary(*c.detail) << "\n";
}

// The per-output lines of one verified case (what `--quiet` leaves out).
void print_case_details(const verify::CaseEntry& c) {
  const std::string label = c.case_name + "/" + c.mode;
  for (const auto& set : c.input_sets)
    for (const auto& o : set.outputs) {
      const auto& cross = o.refrt_vs_libtorch;
      if (o.kind && !o.refrt_vs_eager) {  // mutated state without eager's record: libtorch is its oracle
        std::cout << "  " << label << " " << set.name << " " << o.name.value_or("") << ": refrt vs libtorch max_abs "
                  << cross.max_abs_error << (cross.passed ? " ok" : " MISMATCH") << "\n";
        print_detail("refrt vs libtorch", cross);
        continue;
      }
      const auto &ours = *o.refrt_vs_eager, &torch = *o.libtorch_vs_eager;
      const std::string what = o.kind ? o.name.value_or("") : "output " + std::to_string(o.index);
      std::cout << "  " << label << " " << set.name << " " << what << ": refrt max_abs " << ours.max_abs_error
                << (ours.passed ? " ok" : " MISMATCH") << (ours.ties ? " (" + std::to_string(ours.ties) + " ties)" : "")
                << ", libtorch max_abs " << torch.max_abs_error << (torch.passed ? " ok" : " MISMATCH") << "\n";
      print_detail("refrt vs eager", ours);
      print_detail("libtorch vs eager", torch);
      for (const auto& [who, cmp] : {std::pair{"refrt", &ours}, std::pair{"libtorch", &torch}})
        if (cmp->fp64_rule) std::cout << "      " << who << ": " << verify::fp64_rule_text(*cmp->fp64_rule) << "\n";
    }
  if (const auto& d = c.first_divergence) {
    std::cout << "  " << label << " first divergence: " << d->fx_node << " (" << d->op << ", ONNX node " << d->onnx_node
              << " " << d->onnx_op << ") at " << d->source << (d->input_set ? ", input set " + *d->input_set : "")
              << "\n";
    if (d->detail) std::cout << "      " << verify::mismatch_summary(d->detail->get<verify::MismatchDetail>()) << "\n";
  }
  for (const auto& f : c.fresh_sets.value_or(std::vector<verify::FreshSetEntry>{})) {
    bool ok = true;
    for (const auto& o : f.outputs) ok = ok && o.refrt_vs_libtorch.passed;
    std::cout << "  " << label << " " << f.name << " " << f.dims.dump() << ": " << (ok ? "ok" : "MISMATCH") << "\n";
  }
}

int run_verify(VerifyArgs& a) {
  need_argument(a.dir, "one CASE_DIR argument (a captured case folder)");
  if (!fs::is_directory(a.dir)) throw Error({"io", a.dir}, "is not a directory (expected a captured case folder)");
  const std::string out = a.out.empty() ? (fs::path(a.dir) / "verify").string() : a.out;
  verify::VerifyOptions& options = a.options;
  options.python = venv_python();
  options.source_dir = source_dir();
  if (!options.onnx_path.empty() && !fs::is_regular_file(options.onnx_path))
    throw Error({"io", options.onnx_path}, "no such ONNX file");
  const auto dirs = verify::find_case_dirs(a.dir);
  if (!options.onnx_path.empty() && dirs.size() != 1)
    throw Error({"cli"},
                "--onnx verifies one model against one case: give a <case>/<mode> folder, not " +
                    std::to_string(dirs.size()) + " cases",
                ErrorKind::kUsage);
  std::vector<verify::CaseEntry> cases;
  for (const auto& case_dir : dirs) {
    abort_if_requested(case_dir);
    const std::string case_out = dirs.size() == 1 ? out : (fs::path(out) / fs::path(case_dir).filename()).string();
    cases.push_back(verify::verify_case_dir(case_dir, case_out, options));
    if (!a.quiet) print_case_details(cases.back());
  }
  const auto report = verify::make_report("parity verify " + a.dir, cases);
  verify::write_report(out, report, !a.no_html);
  if (!a.junit.empty())
    verify::write_junit(a.junit, report, (fs::path(out) / (a.no_html ? "report.md" : "report.html")).string());
  if (!a.quiet) {
    for (const auto& c : cases) {
      std::cout << c.case_name << "/" << c.mode << ": " << c.status << (c.error ? " — " + *c.error : "");
      if (c.fp64_rule)  // refrt against eager needed the second rule: say by how much it passed or failed
        std::cout << " (" << verify::fp64_rule_text(*c.fp64_rule) << ", " << c.fp64_rule->input_set << " output "
                  << c.fp64_rule->output << ")";
      std::cout << "\n";
    }
    std::cout << "report: " << (fs::path(out) / "report.md").string() << "\n";
  }
  return verify::report_passed(report) ? kExitOk : kExitFailed;
}

std::function<int()> setup_verify(CLI::App& app) {
  auto a = std::make_shared<VerifyArgs>();
  CLI::App* cmd = app.add_subcommand(
      "verify", "compare refrt on our ONNX (or a given one) with libtorch and eager PyTorch for a captured case");
  cmd->add_option("CASE_DIR", a->dir, "a captured <case>/<mode> folder, or a folder of them");
  cmd->add_option("--out", a->out, "where report.json/md/html go (default CASE_DIR/verify)")->option_text("DIR");
  add_opset_option(cmd, a->options.opset);
  cmd->add_option("--onnx", a->options.onnx_path, "verify this model instead of exporting one")
      ->option_text("MODEL.onnx");
  cmd->add_flag("--intermediates", a->options.intermediates,
                "compare every FX value of every input set (a failing case is localised without it: its first failing "
                "set is re-run with intermediates)");
  cmd->add_option("--fresh", a->options.fresh, "extra input sets with new dynamic dim values")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str()
      ->option_text("K");
  cmd->add_flag("--peers", a->options.peers, "the official exporter and ONNX Runtime columns");
  cmd->add_option("--junit", a->junit, "also write the result as JUnit XML (one testcase per case and mode)")
      ->option_text("FILE");
  cmd->add_flag("--no-html", a->no_html, "write report.json and report.md only");
  cmd->add_flag("--quiet", a->quiet, "no per-output lines");
  return [a] { return run_verify(*a); };
}

}  // namespace

PARITY_SUBCOMMAND(30, setup_verify);

}  // namespace parity::cli
