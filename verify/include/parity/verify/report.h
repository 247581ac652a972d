// report.json (the versioned contract other tools read) and its Markdown and HTML renderings.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "parity/verify/report_types.h"

namespace parity::verify {

// 2: statuses xfail/xpass, first_divergence, fresh_sets, profile, peers, regressions, histograms.
constexpr int kReportSchemaVersion = 2;

// Wraps case entries into a report: schema_version, tool info, summary counts, cases.
nlohmann::json make_report(const std::string& command, nlohmann::json cases);
nlohmann::json make_report(const std::string& command, const std::vector<CaseEntry>& cases);
// Recomputes report["summary"] from report["cases"] (and report["regressions"] when present).
void update_summary(nlohmann::json& report);
std::string render_markdown(const nlohmann::json& report);
// A self-contained page (no network, no library): the summary first, each case drawn when opened,
// charts as inline SVG (html_report.cc).
std::string render_html(const nlohmann::json& report);

// Writes report.json, report.md and (when `html`) report.html into `out_dir`, each atomically (temp
// file + rename): an interrupted run leaves the previous files intact.
void write_report(const std::string& out_dir, const nlohmann::json& report, bool html = true);
// Whether the run succeeded: every case is pass, xfail, xpass or capture_failed (torch.export's
// refusal is not Parity's failure), at least one case, and no regression against a baseline.
bool report_passed(const nlohmann::json& report);
// Whether this status is a failure of Parity that nobody expected.
bool is_unexpected(const std::string& status);

}  // namespace parity::verify
