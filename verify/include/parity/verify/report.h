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
// JUnit XML (report_junit.cc): one testcase per (case, mode) (classname = case, name = mode), a failure for
// fail and for a regression against the baseline, an error for error / crashed / timeout, skipped for xfail and
// capture_failed with the reason; `report_path` (the report.html the CI should link) as each case's attachment.
std::string render_junit(const nlohmann::json& report, const std::string& report_path);
// Writes render_junit to `path` atomically (its folder created), `report_path` made absolute.
void write_junit(const std::string& path, const nlohmann::json& report, const std::string& report_path);
// Whether the run succeeded: every case is pass, xfail, xpass or capture_failed (torch.export's
// refusal is not Parity's failure), at least one case, and no regression against a baseline.
bool report_passed(const nlohmann::json& report);
// Whether this status is a failure of Parity that nobody expected.
bool is_unexpected(const std::string& status);

}  // namespace parity::verify
