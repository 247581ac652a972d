// parity report: render report.md and report.html from a report.json alone.
#include <filesystem>
#include <iostream>

#include "command.h"
#include "parity/error.h"
#include "parity/fs.h"
#include "parity/verify/merge.h"
#include "parity/verify/report.h"

namespace fs = std::filesystem;

namespace parity::cli {
namespace {

struct ReportArgs {
  std::vector<std::string> reports;
  std::string out, junit;
  bool merge = false;
};

void write_renderings(const nlohmann::json& report, const fs::path& out) {
  write_file_atomic((out / "report.md").string(), verify::render_markdown(report), "report");
  write_file_atomic((out / "report.html").string(), verify::render_html(report), "report");
}

// parity report --merge A/report.json B/report.json ... --out DIR: the shards of one matrix run as one report.
int merge(const ReportArgs& a) {
  if (a.out.empty()) throw Error({"cli"}, "--merge needs --out DIR for the joined report", ErrorKind::kUsage);
  const fs::path out = a.out;
  const nlohmann::json report = verify::merge_reports(a.reports);
  fs::create_directories(out);
  write_file_atomic((out / "report.json").string(), report.dump(2) + "\n", "report");
  write_renderings(report, out);
  if (!a.junit.empty()) verify::write_junit(a.junit, report, (out / "report.html").string());
  const auto& s = report["summary"];
  std::cout << "merged " << a.reports.size() << " reports: " << s["pass"].get<int>() << "/" << s["total"].get<int>()
            << " passed";
  if (s.contains("regressions")) std::cout << ", " << s["regressions"].get<int>() << " regressions";
  std::cout << "\nwrote " << (out / "report.json").string() << ", report.md and report.html\n";
  return verify::report_passed(report) ? kExitOk : kExitFailed;
}

int run_report(const ReportArgs& a) {
  if (a.merge) return merge(a);
  if (a.reports.size() != 1)
    throw Error({"cli"}, "expected one report.json argument (or --merge A/report.json B/report.json ... --out DIR)",
                ErrorKind::kUsage);
  const std::string path = a.reports[0];
  nlohmann::json report;
  try {
    report = nlohmann::json::parse(read_file(path, "report"));
  } catch (const nlohmann::json::exception& e) {
    throw Error({"report", path}, std::string("broken JSON: ") + e.what());
  }
  if (!report.is_object() || !report.contains("cases") || !report["cases"].is_array() || !report.contains("summary"))
    throw Error({"report", path}, "not a Parity report (needs \"summary\" and a \"cases\" list)");
  const int version = report.value("schema_version", 0);
  if (version < 1 || version > verify::kReportSchemaVersion)
    throw Error({"report", path},
                "schema_version " + std::to_string(version) + " is not one this parity reads (1.." +
                    std::to_string(verify::kReportSchemaVersion) + ")",
                ErrorKind::kUnsupported);
  const fs::path out = a.out.empty()
                           ? (fs::path(path).parent_path().empty() ? fs::path(".") : fs::path(path).parent_path())
                           : fs::path(a.out);
  fs::create_directories(out);
  write_renderings(report, out);
  if (!a.junit.empty()) verify::write_junit(a.junit, report, (out / "report.html").string());
  std::cout << "wrote " << (out / "report.md").string() << " and " << (out / "report.html").string() << "\n";
  return kExitOk;
}

std::function<int()> setup_report(CLI::App& app) {
  auto a = std::make_shared<ReportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "report", "render report.md and report.html from a report.json, or join the reports of matrix shards");
  cmd->add_option("REPORT.json", a->reports, "a report.json (with --merge: the report.json of every shard)");
  cmd->add_option("--out", a->out, "output folder (default: the report's folder; required with --merge)")
      ->option_text("DIR");
  cmd->add_option("--junit", a->junit, "also write the report as JUnit XML (one testcase per case and mode)")
      ->option_text("FILE");
  cmd->add_flag("--merge", a->merge, "join the reports of the shards of one matrix run");
  return [a] { return run_report(*a); };
}

}  // namespace

PARITY_SUBCOMMAND(50, setup_report);

}  // namespace parity::cli
