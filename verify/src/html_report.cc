// report.html: one self-contained page (plotly.min.js inlined, figures as JSON, no network).
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "parity/verify/compare.h"
#include "parity/verify/report.h"
#include "report_text.h"

namespace parity::verify {

using json = nlohmann::json;

namespace {

std::string esc(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// Text inside <script>: "</" would end the element early.
std::string script_safe(std::string s) {
  for (size_t p = 0; (p = s.find("</", p)) != std::string::npos; p += 3) s.replace(p, 2, "<\\/");
  return s;
}

std::string anchor(const json& c) { return "case-" + text_of(c, "case") + "-" + text_of(c, "mode"); }

std::vector<std::string> histogram_labels() {
  std::vector<std::string> labels = {"0"};
  const auto& edges = histogram_edges();
  for (size_t i = 1; i < edges.size(); ++i) {
    std::ostringstream s;
    s << "≤" << std::setprecision(0) << std::scientific << edges[i];
    labels.push_back(s.str());
  }
  labels.push_back(">1 / NaN");
  return labels;
}

class Page {
 public:
  std::string plot(json data, json layout) {
    const std::string id = "fig-" + std::to_string(figures_.size());
    layout["margin"] = {{"l", 60}, {"r", 20}, {"t", 40}, {"b", 60}};
    layout["height"] = 320;
    figures_.push_back({{"id", id}, {"data", std::move(data)}, {"layout", std::move(layout)}});
    return "<div class=\"plot\" id=\"" + id + "\"></div>\n";
  }
  const json& figures() const { return figures_; }

 private:
  json figures_ = json::array();
};

std::string status_cell(const std::string& status) {
  return "<span class=\"st st-" + esc(status) + "\">" + esc(status) + "</span>";
}

std::string summary_table(const json& report) {
  std::ostringstream h;
  const bool with_peers = any_peers(report);
  h << "<table id=\"summary\" class=\"sortable\"><thead><tr>";
  std::vector<std::string> heads = {"case", "mode", "status", "export", "run", "verify", "max abs error", "max rel error",
                                    "first divergence", "seconds"};
  if (with_peers) heads.insert(heads.end(), {"ours/refrt", "ours/ORT", "official/refrt", "official/ORT"});
  for (const auto& t : heads) h << "<th>" << esc(t) << "</th>";
  h << "</tr></thead><tbody>\n";
  for (const auto& c : report["cases"]) {
    const json d = c.value("first_divergence", json());
    const double abs_err = c.value("max_abs_error", json()).is_number() ? c["max_abs_error"].get<double>() : -1;
    const double rel_err = c.value("max_rel_error", json()).is_number() ? c["max_rel_error"].get<double>() : -1;
    const double secs = c.value("wall_seconds", c.value("seconds", 0.0));
    h << "<tr><td><a href=\"#" << esc(anchor(c)) << "\">" << esc(text_of(c, "case")) << "</a></td><td>" << esc(text_of(c, "mode"))
      << "</td><td>" << status_cell(text_of(c, "status")) << "</td><td>" << esc(text_of(c, "export")) << "</td><td>"
      << esc(text_of(c, "run")) << "</td><td>" << esc(text_of(c, "verify")) << "</td><td data-sort=\"" << abs_err << "\">"
      << esc(scientific(c.value("max_abs_error", json()))) << "</td><td data-sort=\"" << rel_err << "\">"
      << esc(scientific(c.value("max_rel_error", json()))) << "</td><td>"
      << (d.is_object() ? esc(text_of(d, "fx_node") + " (" + text_of(d, "op") + ")") : "") << "</td><td data-sort=\"" << secs
      << "\">" << std::fixed << std::setprecision(2) << secs << std::defaultfloat << "</td>";
    if (with_peers)
      for (const auto& col : kPeerColumns) h << "<td>" << status_cell(peer_cell(c, col[0], col[1])) << "</td>";
    h << "</tr>\n";
  }
  h << "</tbody></table>\n";
  return h.str();
}

// Output errors of every set, and the histogram of refrt vs eager over all of them.
std::string outputs_table(const json& sets, Page& page) {
  std::ostringstream h;
  std::vector<int64_t> histogram(histogram_edges().size() + 1, 0);
  h << "<table class=\"outputs\"><thead><tr><th>input set</th><th>output</th><th>dtype</th><th>shape</th>"
       "<th>refrt vs eager</th><th>libtorch vs eager</th><th>refrt vs libtorch</th><th>mismatches</th></tr></thead><tbody>\n";
  for (const auto& s : sets)
    for (const auto& o : s.value("outputs", json::array())) {
      const json r = o.value("refrt_vs_eager", json::object());
      if (r.contains("histogram"))
        for (size_t i = 0; i < histogram.size() && i < r["histogram"].size(); ++i) histogram[i] += r["histogram"][i].get<int64_t>();
      h << "<tr><td>" << esc(text_of(s, "name")) << "</td><td>" << esc(text_of(o, "name")) << "</td><td>" << esc(text_of(o, "dtype"))
        << "</td><td>" << esc(o.value("shape", json::array()).dump()) << "</td>";
      for (const char* k : {"refrt_vs_eager", "libtorch_vs_eager", "refrt_vs_libtorch"}) {
        const json cmp = o.value(k, json::object());
        if (cmp.empty()) {  // a mutation output has no eager record
          h << "<td>-</td>";
          continue;
        }
        h << "<td class=\"" << (cmp.value("passed", false) ? "ok" : "bad") << "\">" << esc(scientific(cmp.value("max_abs_error", json())))
          << "</td>";
      }
      h << "<td>" << r.value("mismatches", 0) << " / " << r.value("numel", 0);
      if (r.value("ties", 0) > 0) h << " (" << r.value("ties", 0) << " ties)";  // equal values, other indices
      h << "</td></tr>\n";
    }
  h << "</tbody></table>\n";
  h << page.plot(json::array({{{"type", "bar"}, {"x", histogram_labels()}, {"y", histogram}, {"name", "refrt vs eager"}}}),
                 {{"title", {{"text", "Output error histogram (|refrt - eager|, all sets)"}}},
                  {"xaxis", {{"title", {{"text", "absolute error"}}}}},
                  {"yaxis", {{"title", {{"text", "elements"}}}}}});
  return h.str();
}

// First divergence and the error along the graph (topological order).
std::string divergence_block(const json& c, const json& sets, Page& page) {
  std::ostringstream h;
  const json d = c.value("first_divergence", json());
  if (d.is_object())
    h << "<div class=\"divergence\"><b>First divergence</b> in " << esc(text_of(d, "input_set")) << ": FX node <code>"
      << esc(text_of(d, "fx_node")) << "</code> (" << esc(text_of(d, "op")) << ") → ONNX node <code>" << esc(text_of(d, "onnx_node"))
      << "</code> (" << esc(text_of(d, "onnx_op")) << "), max abs error " << esc(scientific(d.value("max_abs_error", json())))
      << "<br>source: <code>" << esc(text_of(d, "source")) << "</code></div>\n";
  for (const auto& s : sets) {
    if (!s.contains("intermediates")) continue;
    if (d.is_object() && text_of(d, "input_set") != text_of(s, "name")) continue;
    json names = json::array(), errors = json::array(), colors = json::array();
    for (const auto& v : s["intermediates"].value("values", json::array())) {
      names.push_back(text_of(v, "value"));
      const json e = v.value("max_abs_error", json());
      errors.push_back(e.is_number() ? std::max(e.get<double>(), 1e-12) : 1e3);
      colors.push_back(v.value("passed", false) ? "#2b8a3e" : "#c92a2a");
    }
    h << page.plot(json::array({{{"type", "scatter"}, {"mode", "lines+markers"}, {"x", names}, {"y", errors},
                                 {"marker", {{"color", colors}}}, {"name", "refrt vs libtorch"}}}),
                   {{"title", {{"text", "Divergence path, " + text_of(s, "name") + " (red: beyond tolerance)"}}},
                    {"yaxis", {{"type", "log"}, {"title", {{"text", "max abs error (0 at 1e-12)"}}}}}});
    break;
  }
  return h.str();
}

std::string fresh_block(const json& c) {
  if (!c.contains("fresh_sets") || c["fresh_sets"].empty()) return "";
  std::ostringstream h;
  h << "<p>Fresh dynamic dims (refrt vs libtorch): ";
  for (const auto& f : c["fresh_sets"]) {
    bool ok = true;
    double worst = 0;
    for (const auto& o : f.value("outputs", json::array())) {
      const json cmp = o.value("refrt_vs_libtorch", json::object());
      ok = ok && cmp.value("passed", false);
      if (cmp.value("max_abs_error", json()).is_number()) worst = std::max(worst, cmp["max_abs_error"].get<double>());
    }
    h << "<span class=\"" << (ok ? "ok" : "bad") << "\">" << esc(f.value("dims", json::object()).dump()) << " "
      << esc(scientific(json(worst))) << "</span> ";
  }
  h << "</p>\n";
  return h.str();
}

std::string profile_block(const json& c, Page& page) {
  if (!c.contains("profile") || !c["profile"].is_object()) return "";
  json ops = json::array(), ms = json::array();
  for (const auto& o : c["profile"].value("ops", json::array())) {
    ops.push_back(text_of(o, "op_type") + " ×" + std::to_string(o.value("count", 0)));
    ms.push_back(o.value("ms", 0.0));
  }
  return page.plot(json::array({{{"type", "bar"}, {"x", ops}, {"y", ms}, {"name", "refrt"}}}),
                   {{"title", {{"text", "refrt time per op type (ms), " + text_of(c["profile"], "input_set")}}},
                    {"yaxis", {{"title", {{"text", "ms"}}}}}});
}

std::string case_section(const json& c, Page& page) {
  std::ostringstream h;
  h << "<section class=\"case\" id=\"" << esc(anchor(c)) << "\"><h2>" << esc(text_of(c, "case")) << " / "
    << esc(text_of(c, "mode")) << " " << status_cell(text_of(c, "status")) << "</h2>\n";
  if (c.value("error", json()).is_string())
    h << "<p class=\"error\"><b>" << esc(text_of(c, "stage")) << ":</b> " << esc(text_of(c, "error")) << "</p>\n";
  if (c.contains("expected_failure"))
    h << "<p>Known failure (" << esc(text_of(c["expected_failure"], "mode")) << "): "
      << esc(text_of(c["expected_failure"], "reason")) << "</p>\n";
  const json sets = c.value("input_sets", json::array());
  if (!sets.empty()) h << outputs_table(sets, page);
  h << divergence_block(c, sets, page) << fresh_block(c) << profile_block(c, page) << "</section>\n";
  return h.str();
}

const char* const kStyle = R"css(
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; }
th { background: #f1f3f5; cursor: pointer; user-select: none; }
th.asc::after { content: " ▲"; } th.desc::after { content: " ▼"; }
.st { padding: 1px 6px; border-radius: 3px; }
.st-pass, .ok { background: #d3f9d8; } .st-fail, .st-error, .st-crashed, .st-timeout, .bad { background: #ffe3e3; }
.st-xfail, .st-capture_failed, .st-skipped { background: #fff3bf; } .st-xpass { background: #d0ebff; }
.error { color: #a61e1e; } .divergence { background: #fff5f5; padding: 0.5em; border-left: 4px solid #c92a2a; }
section.case { border-top: 1px solid #ddd; margin-top: 1.5em; } .plot { max-width: 1000px; }
)css";

// Sorts the summary table by the clicked column: numbers by data-sort, text otherwise.
const char* const kSortScript = R"js(
document.querySelectorAll('table.sortable').forEach(function (table) {
  table.querySelectorAll('th').forEach(function (th, col) {
    th.addEventListener('click', function () {
      var asc = !th.classList.contains('asc');
      table.querySelectorAll('th').forEach(function (o) { o.classList.remove('asc', 'desc'); });
      th.classList.add(asc ? 'asc' : 'desc');
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[col], y = b.cells[col];
        var nx = parseFloat(x.getAttribute('data-sort')), ny = parseFloat(y.getAttribute('data-sort'));
        var r = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.textContent.localeCompare(y.textContent);
        return asc ? r : -r;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
var figures = JSON.parse(document.getElementById('figures').textContent);
figures.forEach(function (f) { Plotly.newPlot(f.id, f.data, f.layout, {displaylogo: false, responsive: true}); });
)js";

}  // namespace

std::string render_html(const json& report, const std::string& plotly_js) {
  Page page;
  std::ostringstream body;
  const json& s = report.at("summary");
  body << "<h1>Parity report</h1>\n<p><code>" << esc(text_of(report, "command")) << "</code> — " << esc(text_of(report, "created"))
       << ", torch " << esc(text_of(report, "torch_version")) << ", schema " << report.value("schema_version", 0) << "</p>\n<p><b>"
       << s.value("pass", 0) << " / " << s.value("total", 0) << " passed</b>";
  for (const char* k : kStatuses)
    if (std::string(k) != "pass" && s.value(k, 0) > 0) body << ", " << s.value(k, 0) << " " << k;
  body << "</p>\n" << summary_table(report);
  if (s.contains("peers")) {
    body << "<h2>Peers</h2><table id=\"peers\"><thead><tr><th>column</th><th>pass</th><th>fail</th><th>error</th>"
            "<th>skipped</th></tr></thead><tbody>\n";
    for (const auto& [key, counts] : s["peers"].items())
      body << "<tr><td>" << esc(key) << "</td><td>" << counts.value("pass", 0) << "</td><td>" << counts.value("fail", 0)
           << "</td><td>" << counts.value("error", 0) << "</td><td>" << counts.value("skipped", 0) << "</td></tr>\n";
    body << "</tbody></table>\n";
  }
  if (report.contains("regressions") && !report["regressions"].empty()) {
    body << "<h2>Regressions against " << esc(text_of(report, "baseline")) << "</h2><ul>\n";
    for (const auto& r : report["regressions"])
      body << "<li><b>" << esc(text_of(r, "case")) << " / " << esc(text_of(r, "mode")) << "</b>: " << esc(text_of(r, "what")) << "</li>\n";
    body << "</ul>\n";
  }
  for (const auto& c : report.at("cases")) body << case_section(c, page);

  std::ostringstream html;
  html << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Parity report</title>\n<style>" << kStyle
       << "</style>\n<script>" << script_safe(plotly_js) << "</script>\n</head><body>\n"
       << body.str() << "<script type=\"application/json\" id=\"figures\">"
       << script_safe(page.figures().dump(-1, ' ', false, json::error_handler_t::replace)) << "</script>\n<script>"
       << kSortScript << "</script>\n</body></html>\n";
  return html.str();
}

}  // namespace parity::verify
