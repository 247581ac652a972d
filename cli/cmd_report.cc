// parity report: render report.md and report.html from a report.json alone.
#include <filesystem>
#include <iostream>

#include "command.h"
#include "parity/error.h"
#include "parity/fs.h"
#include "parity/verify/report.h"

namespace fs = std::filesystem;

namespace parity::cli {
namespace {

int cmd_report(const std::vector<std::string>& argv) {
  Args args(argv, {"--out"}, {});
  need_positional(args, 1, "one report.json argument");
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
  write_file_atomic((out / "report.md").string(), verify::render_markdown(report), "report");
  const std::string plotly = verify::find_plotly_js(env_or("PARITY_PYTHON", PARITY_PYTHON));
  if (plotly.empty())
    throw Error({"report"}, "plotly is not installed in the venv (requirements.txt): cannot write report.html");
  write_file_atomic((out / "report.html").string(), verify::render_html(report, plotly), "report");
  std::cout << "wrote " << (out / "report.md").string() << " and " << (out / "report.html").string() << "\n";
  return kExitOk;
}

}  // namespace

PARITY_COMMAND("report", 50, "report REPORT.json [--out DIR]", "render report.md and report.html from a report.json",
               cmd_report);

}  // namespace parity::cli
