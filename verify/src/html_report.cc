// report.html: one self-contained page (no network, no library) that opens on a summary: pass counts
// by family x mode (ours next to the official exporter when the peers ran), where the two exporters
// differ, the failures with their reasons, and a filterable table of every case. Each case's details
// (outputs, error histogram and divergence path as inline SVG, profile) are drawn by the page's script
// from compact JSON when the case is opened, so the page stays small for a large green matrix.
#include <algorithm>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>

#include "html_report.h"
#include "parity/verify/report.h"
#include "report_text.h"

namespace parity::verify {

using json = nlohmann::json;

namespace {

std::string esc(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// JSON inside <script>: every '<' (only ever inside a JSON string) as \u003c, so no "</script>" or
// "<!--" can end or change the element.
std::string script_safe(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '<')
      out += "\\u003c";
    else
      out += c;
  }
  return out;
}

std::string anchor(const json& c) { return "case-" + text_of(c, "case") + "-" + text_of(c, "mode"); }

// A case's family: its name up to the first '_' (op_, sig_, model_, cond_, ...).
std::string family_of(const json& c) {
  const std::string name = text_of(c, "case");
  return name.substr(0, name.find('_'));
}

std::string status_cell(const std::string& status) {
  return status.empty() ? "" : "<span class=\"st st-" + esc(status) + "\">" + esc(status) + "</span>";
}

// Failures first (unexpected ones, then expected ones and refused captures), then passes; stable.
int status_rank(const std::string& status) {
  if (is_unexpected(status)) return 0;
  if (status == "xpass") return 1;
  if (status == "xfail" || status == "capture_failed") return 2;
  return 3;
}

std::vector<std::string> mode_order(const json& report) {
  std::vector<std::string> modes;
  for (const auto& m : report.value("modes", json::array()))
    if (m.is_string()) modes.push_back(m.get<std::string>());
  for (const auto& c : report.at("cases"))
    if (std::find(modes.begin(), modes.end(), text_of(c, "mode")) == modes.end()) modes.push_back(text_of(c, "mode"));
  return modes;
}

struct Count {
  int total = 0, ours = 0, ours_ort = 0, official = 0, official_run = 0;  // official_run: pairs it ran on
};

std::string count_cell(int n, int total) {
  if (total == 0) return "<td></td>";
  const char* cls = n == total ? "ok" : n == 0 ? "bad" : "part";
  return "<td class=\"" + std::string(cls) + "\">" + std::to_string(n) + "/" + std::to_string(total) + "</td>";
}

// Pass counts by family x mode: ours (the case's verdict; with the peers also our model on ONNX
// Runtime) next to the official exporter's model on ONNX Runtime.
std::string family_table(const json& report, bool with_peers) {
  const auto modes = mode_order(report);
  std::map<std::string, std::map<std::string, Count>> counts;
  for (const auto& c : report.at("cases")) {
    Count& n = counts[family_of(c)][text_of(c, "mode")];
    ++n.total;
    n.ours += text_of(c, "status") == "pass" || text_of(c, "status") == "xpass";
    n.ours_ort += peer_cell(c, "ours", "ort") == "pass";
    n.official += peer_cell(c, "official", "ort") == "pass";
    n.official_run += peer_cell(c, "official", "ort") != "not_run";
  }
  std::ostringstream h;
  const int span = with_peers ? 3 : 1;
  h << "<table id=\"families\"><thead><tr><th rowspan=\"" << (with_peers ? 2 : 1) << "\">family</th>";
  for (const auto& m : modes) h << "<th colspan=\"" << span << "\">" << esc(m) << "</th>";
  h << "</tr>";
  if (with_peers) {
    h << "<tr>";
    for (size_t i = 0; i < modes.size(); ++i) h << "<th>ours</th><th>ours/ORT</th><th>official/ORT</th>";
    h << "</tr>";
  }
  h << "</thead><tbody>\n";
  for (const auto& [family, by_mode] : counts) {
    h << "<tr><td>" << esc(family) << "</td>";
    for (const auto& m : modes) {
      const auto it = by_mode.find(m);
      const Count n = it == by_mode.end() ? Count{} : it->second;
      h << count_cell(n.ours, n.total);
      if (with_peers)
        h << count_cell(n.ours_ort, n.total)
          << (n.official_run > 0 ? count_cell(n.official, n.official_run) : "<td>-</td>");
    }
    h << "</tr>\n";
  }
  h << "</tbody></table>\n";
  return h.str();
}

// The cases where our export and the official one disagree (on ONNX Runtime, where both ran).
std::string differences(const json& report) {
  std::ostringstream only_ours, only_official;
  int n_ours = 0, n_official = 0;
  for (const auto& c : report.at("cases")) {
    const std::string ours = peer_cell(c, "ours", "ort"), official = peer_cell(c, "official", "ort");
    if (official == "not_run") continue;
    const std::string official_export = c.contains("peers") && c["peers"].is_object()
                                            ? c["peers"].value("official", json::object()).value("export", "")
                                            : "";
    const bool official_ok = official == "pass";
    const std::string link =
        "<a href=\"#" + esc(anchor(c)) + "\">" + esc(text_of(c, "case") + "/" + text_of(c, "mode")) + "</a> ";
    if (ours == "pass" && !official_ok && !official_export.empty())
      ++n_ours, only_ours << link;
    else if (official_ok && ours != "pass" && !ours.empty())
      ++n_official, only_official << link;
  }
  std::ostringstream h;
  h << "<h2>Where ours and the official exporter differ</h2>\n<p>Ours passes, the official exporter does not ("
    << n_ours << "): " << only_ours.str() << "</p>\n<p>The official exporter passes, ours does not (" << n_official
    << "): " << only_official.str() << "</p>\n";
  return h.str();
}

std::string short_text(std::string s, size_t limit) {
  for (auto& ch : s)
    if (ch == '\n') ch = ' ';
  return s.size() > limit ? s.substr(0, limit) + " ..." : s;
}

std::vector<size_t> failures_first(const json& cases) {
  std::vector<size_t> order(cases.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return status_rank(text_of(cases[a], "status")) < status_rank(text_of(cases[b], "status"));
  });
  return order;
}

std::string failures_table(const json& cases, const std::vector<size_t>& order) {
  std::ostringstream h;
  int n = 0;
  for (size_t i : order) {
    const json& c = cases[i];
    const std::string status = text_of(c, "status");
    if (status == "pass") continue;
    std::string reason = text_of(c, "error");
    if (c.contains("expected_failure"))
      reason = "expected: " + text_of(c["expected_failure"], "reason") + " | " + reason;
    h << "<tr class=\"row\"><td><a href=\"#" << esc(anchor(c)) << "\">" << esc(text_of(c, "case")) << "</a></td><td>"
      << esc(text_of(c, "mode")) << "</td><td>" << status_cell(status) << "</td><td>" << esc(text_of(c, "stage"))
      << "</td><td class=\"reason\">" << esc(short_text(reason, 400)) << "</td></tr>\n";
    ++n;
  }
  if (n == 0) return "<h2>Failures</h2>\n<p>None.</p>\n";
  return "<h2>Failures (" + std::to_string(n) +
         ")</h2>\n<table id=\"failures\" class=\"filtered\"><thead><tr><th>case</th>"
         "<th>mode</th><th>status</th><th>stage</th><th>reason</th></tr></thead><tbody>\n" +
         h.str() + "</tbody></table>\n";
}

std::string case_row(const json& c, bool with_peers) {
  std::ostringstream h;
  const json d = c.value("first_divergence", json());
  const double abs_err = c.value("max_abs_error", json()).is_number() ? c["max_abs_error"].get<double>() : -1;
  const double secs = c.value("wall_seconds", c.value("seconds", 0.0));
  h << "<tr class=\"row\"><td><a href=\"#" << esc(anchor(c)) << "\">" << esc(text_of(c, "case")) << "</a></td><td>"
    << esc(text_of(c, "mode")) << "</td><td data-sort=\"" << status_rank(text_of(c, "status")) << "\">"
    << status_cell(text_of(c, "status")) << "</td><td data-sort=\"" << abs_err << "\">"
    << esc(scientific(c.value("max_abs_error", json()))) << "</td><td>"
    << (d.is_object() ? esc(text_of(d, "fx_node") + " (" + text_of(d, "op") + ")") : "") << "</td><td data-sort=\""
    << secs << "\">" << std::fixed << std::setprecision(1) << secs << "</td>";
  if (with_peers) {
    for (const auto& col : kPeerColumns) h << "<td>" << status_cell(peer_cell(c, col[0], col[1])) << "</td>";
    for (const char* side : {"ours", "official"}) {
      const std::string n = nodes_cell(c, side);
      h << "<td data-sort=\"" << (n.empty() ? "-1" : n) << "\">" << n << "</td>";
    }
  }
  h << "</tr>\n";
  return h.str();
}

std::string cases_table(const json& cases, const std::vector<size_t>& order, bool with_peers) {
  std::ostringstream h;
  h << "<h2>Cases</h2>\n<table id=\"summary\" class=\"sortable filtered\"><thead><tr>";
  std::vector<std::string> heads = {"case", "mode", "status", "max abs error", "first divergence", "seconds"};
  if (with_peers)
    heads.insert(heads.end(),
                 {"ours/refrt", "ours/ORT", "official/refrt", "official/ORT", "ours nodes", "official nodes"});
  for (const auto& t : heads) h << "<th>" << esc(t) << "</th>";
  h << "</tr></thead><tbody>\n";
  for (size_t i : order) h << case_row(cases[i], with_peers);
  h << "</tbody></table>\n";
  return h.str();
}

// One collapsed section per case; its body is drawn from CASES[i] when opened.
std::string case_sections(const json& cases, const std::vector<size_t>& order) {
  std::ostringstream h;
  h << "<h2>Details</h2>\n<div id=\"details\">\n";
  for (size_t i : order) {
    const json& c = cases[i];
    h << "<details class=\"case row\" id=\"" << esc(anchor(c)) << "\" data-i=\"" << i << "\"><summary>"
      << esc(text_of(c, "case")) << " / " << esc(text_of(c, "mode")) << " " << status_cell(text_of(c, "status"))
      << "</summary><div class=\"body\"></div></details>\n";
  }
  h << "</div>\n";
  return h.str();
}

std::string header(const json& report) {
  std::ostringstream h;
  const json& s = report.at("summary");
  h << "<h1>Parity report</h1>\n<p class=\"meta\"><code>" << esc(text_of(report, "command")) << "</code> &mdash; "
    << esc(text_of(report, "created")) << ", torch " << esc(text_of(report, "torch_version")) << ", schema "
    << report.value("schema_version", 0) << "</p>\n<p class=\"totals\"><b>" << s.value("pass", 0) << " / "
    << s.value("total", 0) << " passed</b>";
  for (const char* k : kStatuses)
    if (std::string(k) != "pass" && s.value(k, 0) > 0) h << ", " << s.value(k, 0) << " " << k;
  if (s.contains("regressions")) h << ", <b>" << s["regressions"].get<int>() << " regressions</b>";
  h << "</p>\n";
  if (report.contains("regressions") && !report["regressions"].empty()) {
    h << "<h2>Regressions against " << esc(text_of(report, "baseline")) << "</h2><ul>\n";
    for (const auto& r : report["regressions"])
      h << "<li><b>" << esc(text_of(r, "case")) << " / " << esc(text_of(r, "mode"))
        << "</b>: " << esc(text_of(r, "what")) << "</li>\n";
    h << "</ul>\n";
  }
  return h.str();
}

}  // namespace

std::string render_html(const json& report) {
  const json& cases = report.at("cases");
  const bool with_peers = any_peers(report);
  const auto order = failures_first(cases);
  json data = json::array();
  for (const auto& c : cases) data.push_back(html_case_data(c));
  const json meta = {{"bins", histogram_bin_labels()}};
  std::ostringstream html;
  html << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Parity report</title>\n<style>"
       << kHtmlStyle << "</style>\n</head><body>\n"
       << header(report)
       << "<p><input id=\"filter\" type=\"search\" size=\"50\" placeholder=\"filter cases: name, mode, status, "
          "reason\"> "
          "<span id=\"shown\"></span></p>\n"
       << "<h2>By family and mode</h2>\n"
       << family_table(report, with_peers) << (with_peers ? differences(report) : "") << failures_table(cases, order)
       << cases_table(cases, order, with_peers) << case_sections(cases, order)
       << "<script type=\"application/json\" id=\"case-data\">"
       << script_safe(data.dump(-1, ' ', false, json::error_handler_t::replace)) << "</script>\n"
       << "<script type=\"application/json\" id=\"page-meta\">" << script_safe(meta.dump()) << "</script>\n<script>"
       << kHtmlScript << "</script>\n</body></html>\n";
  return html.str();
}

}  // namespace parity::verify
