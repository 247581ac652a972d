#include "parity/verify/report.h"

#include <chrono>
#include <ctime>
#include <filesystem>
#include <iomanip>
#include <sstream>

#include "parity/fs.h"
#include "parity/verify/reference.h"

namespace parity::verify {

using json = nlohmann::json;

namespace {

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::ostringstream ss;
  ss << std::put_time(&tm, "%Y-%m-%dT%H:%M:%SZ");
  return ss.str();
}

std::string error_cell(const json& v) {
  if (v.is_number()) {
    std::ostringstream ss;
    ss << std::setprecision(3) << std::scientific << v.get<double>();
    return ss.str();
  }
  return v.is_string() ? v.get<std::string>() : "";
}

// Markdown table cells must not contain pipes or newlines.
std::string cell(std::string s) {
  for (auto& c : s)
    if (c == '\n' || c == '|') c = ' ';
  if (s.size() > 160) s = s.substr(0, 157) + "...";
  return s;
}

std::string text(const json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

}  // namespace

json make_report(const std::string& command, json cases) {
  json summary = {{"total", cases.size()}};
  for (const char* s : {"pass", "fail", "error", "capture_failed", "crashed", "timeout"}) summary[s] = 0;
  for (const auto& c : cases) summary[c.value("status", "error")] = summary.value(c.value("status", "error"), 0) + 1;
  return {{"schema_version", kReportSchemaVersion},
          {"tool", "parity"},
          {"command", command},
          {"created", utc_now()},
          {"torch_version", libtorch_version()},
          {"summary", summary},
          {"cases", std::move(cases)}};
}

bool report_passed(const json& report) {
  for (const auto& c : report.at("cases"))
    if (c.value("status", "") != "pass") return false;
  return !report.at("cases").empty();
}

std::string render_markdown(const json& report) {
  std::ostringstream md;
  const json& s = report.at("summary");
  md << "# Parity report\n\n"
     << "`" << text(report, "command") << "` — " << text(report, "created") << ", torch " << text(report, "torch_version")
     << "\n\n**" << s.value("pass", 0) << " / " << s.value("total", 0) << " passed**";
  for (const char* k : {"fail", "error", "capture_failed", "crashed", "timeout"})
    if (s.value(k, 0) > 0) md << ", " << s.value(k, 0) << " " << k;
  md << "\n\n| case | mode | status | export | run | verify | max abs error | max rel error |\n"
     << "|---|---|---|---|---|---|---|---|\n";
  for (const auto& c : report.at("cases"))
    md << "| " << text(c, "case") << " | " << text(c, "mode") << " | " << text(c, "status") << " | "
       << text(c, "export") << " | " << text(c, "run") << " | " << text(c, "verify") << " | "
       << error_cell(c.value("max_abs_error", json())) << " | " << error_cell(c.value("max_rel_error", json())) << " |\n";
  bool any_error = false;
  for (const auto& c : report.at("cases")) {
    if (!c.value("error", json()).is_string()) continue;
    if (!any_error) md << "\n## Problems\n\n";
    any_error = true;
    md << "- **" << text(c, "case") << " / " << text(c, "mode") << "** (" << text(c, "status") << ", stage "
       << text(c, "stage") << "): " << cell(text(c, "error")) << "\n";
  }
  return md.str();
}

void write_report(const std::string& out_dir, const json& report) {
  std::filesystem::create_directories(out_dir);
  write_file_atomic((std::filesystem::path(out_dir) / "report.json").string(), report.dump(2) + "\n", "report");
  write_file_atomic((std::filesystem::path(out_dir) / "report.md").string(), render_markdown(report), "report");
}

}  // namespace parity::verify
