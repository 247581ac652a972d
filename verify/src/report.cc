#include "parity/verify/report.h"

#include <chrono>
#include <ctime>
#include <filesystem>
#include <iomanip>
#include <sstream>

#include "parity/error.h"
#include "parity/fs.h"
#include "parity/verify/compare.h"
#include "parity/refrt/session.h"
#include "parity/verify/reference.h"
#include "report_text.h"

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

// Markdown table cells must not contain pipes or newlines.
std::string cell(std::string s) {
  for (auto& c : s)
    if (c == '\n' || c == '|') c = ' ';
  if (s.size() > 160) s = s.substr(0, 157) + "...";
  return s;
}

}  // namespace

std::string scientific(const json& v) {
  if (v.is_number()) {
    std::ostringstream ss;
    ss << std::setprecision(3) << std::scientific << v.get<double>();
    return ss.str();
  }
  return v.is_string() ? v.get<std::string>() : "";
}

std::string peer_cell(const json& c, const char* side, const char* engine) {
  if (!c.contains("peers") || !c["peers"].is_object()) return "";
  const json& p = c["peers"];
  return p.contains(side) && p[side].contains(engine) && p[side][engine].is_string()
             ? p[side][engine].get<std::string>()
             : "";
}

// A side's ONNX node count ("ours" or "official"), or "" when the report has none.
std::string nodes_cell(const json& c, const char* side) {
  if (!c.contains("peers") || !c["peers"].is_object()) return "";
  const json& p = c["peers"];
  return p.contains(side) && p[side].contains("nodes") && p[side]["nodes"].is_number_integer()
             ? std::to_string(p[side]["nodes"].get<int64_t>())
             : "";
}

bool any_peers(const json& report) {
  for (const auto& c : report.at("cases"))
    if (c.contains("peers")) return true;
  return false;
}

bool is_unexpected(const std::string& status) {
  return status != "pass" && status != "xfail" && status != "xpass" && status != "capture_failed";
}

void update_summary(json& report) {
  json summary = {{"total", report["cases"].size()}};
  for (const char* s : kStatuses) summary[s] = 0;
  json peers = json::object();
  bool with_peers = false;
  for (const auto& c : report["cases"]) {
    const std::string status = c.value("status", "error");
    summary[status] = summary.value(status, 0) + 1;
    if (c.contains("peers") && c["peers"].is_object()) {
      with_peers = true;
      for (const auto& col : kPeerColumns) {
        const std::string key = std::string(col[0]) + "_" + col[1];
        const std::string v = peer_cell(c, col[0], col[1]).empty() ? "skipped" : peer_cell(c, col[0], col[1]);
        if (!peers.contains(key)) peers[key] = {{"pass", 0}, {"fail", 0}, {"error", 0}, {"skipped", 0}};
        peers[key][v] = peers[key].value(v, 0) + 1;
      }
    }
  }
  if (with_peers) summary["peers"] = peers;
  count_fp64(summary, report["cases"]);
  if (report.contains("regressions")) summary["regressions"] = report["regressions"].size();
  report["summary"] = summary;
}

json make_report(const std::string& command, const std::vector<CaseEntry>& cases) {
  return make_report(command, json(cases));
}

namespace {

// How refrt computed weight-only products in this run (SessionOptions::weight_only_accuracy, read from
// PARITY_REFRT_WEIGHT_ONLY_ACCURACY by every session verify loads): the int8-activation mode is an approximation,
// so a report must say that it ran.
json weight_only_mode() {
  try {
    const int level = refrt::weight_only_accuracy_level();
    return {{"accuracy_level", level},
            {"activations", level == 4 ? "int8 activations per block (approximate, docs/weight-only.md)"
                                       : "float32 activations (exact)"}};
  } catch (const parity::Error& e) {
    return {{"accuracy_level", nullptr}, {"activations", e.what()}};
  }
}

}  // namespace

json make_report(const std::string& command, json cases) {
  json report = {{"schema_version", kReportSchemaVersion},
                 {"tool", "parity"},
                 {"command", command},
                 {"created", utc_now()},
                 {"torch_version", libtorch_version()},
                 {"refrt_weight_only", weight_only_mode()},
                 {"cases", std::move(cases)}};
  update_summary(report);
  return report;
}

bool report_passed(const json& report) {
  for (const auto& c : report.at("cases"))
    if (is_unexpected(c.value("status", ""))) return false;
  if (report.contains("regressions") && !report["regressions"].empty()) return false;
  return !report.at("cases").empty();
}

namespace {

// The report's "First divergences" section: one line per failing case that was localised.
void markdown_divergences(std::ostringstream& md, const json& report) {
  bool any_divergence = false;
  for (const auto& c : report.at("cases")) {
    if (!c.contains("first_divergence") || !c["first_divergence"].is_object()) continue;
    if (!any_divergence) md << "\n## First divergences\n\n";
    any_divergence = true;
    const json& d = c["first_divergence"];
    md << "- **" << text_of(c, "case") << " / " << text_of(c, "mode") << "**: FX node `" << text_of(d, "fx_node")
       << "` (" << text_of(d, "op") << "), ONNX node `" << text_of(d, "onnx_node") << "` (" << text_of(d, "onnx_op")
       << "), max abs error " << scientific(d.value("max_abs_error", json())) << ", input set "
       << text_of(d, "input_set") << "; source: `" << cell(text_of(d, "source")) << "`";
    if (d.contains("detail") && d["detail"].is_object())
      md << "; " << cell(mismatch_summary(d["detail"].get<MismatchDetail>()));
    md << "\n";
  }
}

// The "Ties" section: index outputs where refrt and eager chose different indices of equal values.
void markdown_ties(std::ostringstream& md, const json& report) {
  bool any_ties = false;
  for (const auto& c : report.at("cases"))
    for (const auto& set : c.value("input_sets", json::array()))
      for (const auto& o : set.value("outputs", json::array())) {
        const int64_t ties = o.value("refrt_vs_eager", json::object()).value("ties", int64_t{0});
        if (ties <= 0) continue;
        if (!any_ties)
          md << "\n## Ties\n\nIndex outputs where refrt and eager pick different indices of equal values "
                "(both right; counted as passing):\n\n";
        any_ties = true;
        md << "- **" << text_of(c, "case") << " / " << text_of(c, "mode") << "** " << text_of(set, "name") << " output "
           << o.value("index", 0) << " `" << text_of(o, "name") << "`: " << ties << " ties\n";
      }
}

// Runtime assertions the libtorch reference ran past (reference_layout.h), per case and input set.
void markdown_reference_notes(std::ostringstream& md, const json& report) {
  bool any = false;
  for (const auto& c : report.at("cases"))
    for (const auto& set : c.value("input_sets", json::array()))
      for (const auto& note : set.value("reference_notes", json::array())) {
        if (!any)
          md << "\n## Reference notes\n\nWhere the libtorch reference did what torch's own run of the program "
                "would not:\n\n";
        any = true;
        md << "- **" << text_of(c, "case") << " / " << text_of(c, "mode") << "** " << text_of(set, "name") << ": "
           << cell(note.is_string() ? note.get<std::string>() : note.dump()) << "\n";
      }
}

}  // namespace

std::string render_markdown(const json& report) {
  std::ostringstream md;
  const json& s = report.at("summary");
  md << "# Parity report\n\n"
     << "`" << text_of(report, "command") << "` — " << text_of(report, "created") << ", torch "
     << text_of(report, "torch_version");
  if (report.contains("refrt_weight_only") && report["refrt_weight_only"].is_object())
    md << "; refrt's weight-only products: " << text_of(report["refrt_weight_only"], "activations");
  md << "\n\n**" << s.value("pass", 0) << " / " << s.value("total", 0) << " passed**";
  for (const char* k : kStatuses)
    if (std::string(k) != "pass" && s.value(k, 0) > 0) md << ", " << s.value(k, 0) << " " << k;
  if (s.contains("regressions")) md << ", " << s["regressions"].get<int>() << " regressions";
  if (s.contains("fp64_rule") && s["fp64_rule"].value("cases", 0) > 0)
    md << "; " << s["fp64_rule"]["cases"].get<int>() << " passed only by the fp64 rule (below)";
  const bool with_peers = any_peers(report);
  md << "\n\n| case | mode | status | export | run | verify | max abs error | max rel error | first divergence |"
     << (with_peers ? " ours/refrt | ours/ORT | official/refrt | official/ORT | ours nodes | official nodes |" : "")
     << "\n"
     << "|---|---|---|---|---|---|---|---|---|" << (with_peers ? "---|---|---|---|--:|--:|" : "") << "\n";
  for (const auto& c : report.at("cases")) {
    std::string divergence;
    if (c.contains("first_divergence") && c["first_divergence"].is_object()) {
      const json& d = c["first_divergence"];
      divergence = text_of(d, "fx_node") + " (" + text_of(d, "op") + " → " + text_of(d, "onnx_op") + ")";
    }
    const std::string status = text_of(c, "status") + (case_passed_by_fp64(c) ? " (fp64 rule)" : "") +
                               (case_passed_by_requant(c) ? " (requantized rule)" : "");
    md << "| " << text_of(c, "case") << " | " << text_of(c, "mode") << " | " << status << " | " << text_of(c, "export")
       << " | " << text_of(c, "run") << " | " << text_of(c, "verify") << " | "
       << scientific(c.value("max_abs_error", json())) << " | " << scientific(c.value("max_rel_error", json())) << " | "
       << cell(divergence) << " |";
    if (with_peers)
      for (const auto& col : kPeerColumns)
        md << " " << peer_cell(c, col[0], col[1]) << (fp64_passes(c, col[0], col[1]) > 0 ? " (fp64)" : "") << " |";
    if (with_peers) md << " " << nodes_cell(c, "ours") << " | " << nodes_cell(c, "official") << " |";
    md << "\n";
  }
  if (s.contains("peers")) {
    const json fp64 = s.value("fp64_rule", json::object());
    md << "\n## Peers\n\n| column | pass | of which by the fp64 rule | fail | error | skipped | not run |\n"
       << "|---|---|---|---|---|---|---|\n";
    for (const auto& col : kPeerColumns) {
      const std::string key = std::string(col[0]) + "_" + col[1];
      const json& counts = s["peers"].value(key, json::object());
      md << "| " << col[0] << "/" << col[1] << " | " << counts.value("pass", 0) << " | " << fp64.value(key, 0) << " | "
         << counts.value("fail", 0) << " | " << counts.value("error", 0) << " | " << counts.value("skipped", 0) << " | "
         << counts.value("not_run", 0) << " |\n";
    }
    if (s["peers"].value("official_ort", json::object()).value("not_run", 0) > 0)
      md << "\nThe official exporter ran on one capture per case, the one torch.onnx.export would make itself "
            "(non-strict, else strict); \"not run\" marks the other modes (`parity matrix --official all` runs it "
            "on every mode). skipped: its export failed, so no runtime ran its model.\n";
  }
  if (report.contains("regressions") && !report["regressions"].empty()) {
    md << "\n## Regressions against the baseline\n\n";
    for (const auto& r : report["regressions"])
      md << "- **" << text_of(r, "case") << " / " << text_of(r, "mode") << "**: " << cell(text_of(r, "what")) << "\n";
  }
  markdown_divergences(md, report);
  markdown_ties(md, report);
  markdown_fp64(md, report);
  markdown_requant(md, report);
  markdown_tolerances(md, report);
  markdown_reference_notes(md, report);
  bool any_error = false;
  for (const auto& c : report.at("cases")) {
    if (!c.value("error", json()).is_string()) continue;
    if (!any_error) md << "\n## Problems\n\n";
    any_error = true;
    md << "- **" << text_of(c, "case") << " / " << text_of(c, "mode") << "** (" << text_of(c, "status") << ", stage "
       << text_of(c, "stage") << "): " << cell(text_of(c, "error"));
    if (c.contains("expected_failure")) md << " — expected: " << cell(text_of(c["expected_failure"], "reason"));
    md << "\n";
  }
  return md.str();
}

void write_report(const std::string& out_dir, const json& report, bool html) {
  std::filesystem::create_directories(out_dir);
  const std::filesystem::path dir(out_dir);
  write_file_atomic((dir / "report.json").string(), report.dump(2, ' ', false, json::error_handler_t::replace) + "\n",
                    "report");
  write_file_atomic((dir / "report.md").string(), render_markdown(report), "report");
  if (html) write_file_atomic((dir / "report.html").string(), render_html(report), "report");
}

}  // namespace parity::verify
