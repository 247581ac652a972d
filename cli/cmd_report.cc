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

void write_renderings(const nlohmann::json& report, const fs::path& out) {
  write_file_atomic((out / "report.md").string(), verify::render_markdown(report), "report");
  const std::string plotly = verify::find_plotly_js(env_or("PARITY_PYTHON", PARITY_PYTHON));
  if (plotly.empty())
    throw Error({"report"}, "plotly is not installed in the venv (requirements.txt): cannot write report.html");
  write_file_atomic((out / "report.html").string(), verify::render_html(report, plotly), "report");
}

// parity report --merge A/report.json B/report.json ... --out DIR: the shards of one matrix run as one report.
int merge(const Args& args) {
  if (!args.has("--out")) throw Error({"cli"}, "--merge needs --out DIR for the joined report", ErrorKind::kUsage);
  const fs::path out = args.get("--out");
  const nlohmann::json report = verify::merge_reports(args.positional());
  fs::create_directories(out);
  write_file_atomic((out / "report.json").string(), report.dump(2) + "\n", "report");
  write_renderings(report, out);
  const auto& s = report["summary"];
  std::cout << "merged " << args.positional().size() << " reports: " << s["pass"].get<int>() << "/"
            << s["total"].get<int>() << " passed";
  if (s.contains("regressions")) std::cout << ", " << s["regressions"].get<int>() << " regressions";
  std::cout << "\nwrote " << (out / "report.json").string() << ", report.md and report.html\n";
  return verify::report_passed(report) ? kExitOk : kExitFailed;
}

int cmd_report(const std::vector<std::string>& argv) {
  Args args(argv, {"--out"}, {"--merge"});
  if (args.has("--merge")) return merge(args);
  need_positional(args, 1, "one report.json argument (or --merge A/report.json B/report.json ... --out DIR)");
  const std::string path = args.positional()[0];
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
    throw Error({"report", path}, "schema_version " + std::to_string(version) + " is not one this parity reads (1.." +
                                      std::to_string(verify::kReportSchemaVersion) + ")", ErrorKind::kUnsupported);
  const fs::path out = args.get("--out", fs::path(path).parent_path().empty() ? "." : fs::path(path).parent_path().string());
  fs::create_directories(out);
  write_renderings(report, out);
  std::cout << "wrote " << (out / "report.md").string() << " and " << (out / "report.html").string() << "\n";
  return kExitOk;
}

}  // namespace

PARITY_COMMAND("report", 50, "report REPORT.json [--out DIR]\nreport --merge A/report.json B/report.json ... --out DIR",
               "render report.md and report.html from a report.json, or join the reports of matrix shards",
               cmd_report);

}  // namespace parity::cli
