// report.json (the versioned contract other tools read) and its Markdown rendering.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace parity::verify {

constexpr int kReportSchemaVersion = 1;

// Wraps case entries into a report: schema_version, tool info, summary counts, cases.
nlohmann::json make_report(const std::string& command, nlohmann::json cases);
std::string render_markdown(const nlohmann::json& report);
// Writes report.json and report.md into `out_dir`, each atomically (temp file + rename).
void write_report(const std::string& out_dir, const nlohmann::json& report);
// Whether every case passed (the exit status of verify and matrix).
bool report_passed(const nlohmann::json& report);

}  // namespace parity::verify
