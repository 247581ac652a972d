// The per-case data report.html renders lazily (a case's section is drawn when it is opened): only
// what the page shows, in arrays rather than objects, so that the page grows with what it shows.
#include <algorithm>
#include <iomanip>
#include <sstream>

#include "html_report.h"
#include "parity/verify/compare.h"
#include "report_text.h"

namespace parity::verify {

using json = nlohmann::json;

namespace {

constexpr size_t kMaxPathPoints = 600;   // divergence path: longer graphs are thinned evenly
constexpr size_t kMaxProfileOps = 15;    // profile bars: the slowest op types
constexpr size_t kMaxErrorChars = 4000;  // a case's error text (tracebacks are cut)

json error_number(const json& v) { return v.is_number() ? json(v.get<double>()) : v.is_string() ? v : json(); }

// [max_abs, passed] of one comparison, or null when there is none (mutations from case folders without
// eager's record of the state).
json verdict(const json& cmp) {
  if (!cmp.is_object() || cmp.empty()) return json();
  return json::array({error_number(cmp.value("max_abs_error", json())), cmp.value("passed", false)});
}

std::string detail_text(const json& cmp) {
  if (!cmp.is_object()) return "";
  // A pass by the fp64 rule alone says so, with its numbers (a failure by both rules adds them too).
  const std::string fp64 = cmp.contains("fp64_rule") ? fp64_rule_text(cmp["fp64_rule"].get<Fp64Rule>()) : "";
  if (cmp.value("passed", true) || !cmp.contains("detail")) return fp64;
  const std::string mismatch = mismatch_summary(cmp["detail"].get<MismatchDetail>());
  return fp64.empty() ? mismatch : mismatch + "; " + fp64;
}

json output_rows(const json& sets, std::vector<int64_t>& histogram) {
  json rows = json::array();
  for (const auto& s : sets)
    for (const auto& o : s.value("outputs", json::array())) {
      const json ours = o.value("refrt_vs_eager", json::object());
      for (size_t i = 0; i < histogram.size() && i < ours.value("histogram", json::array()).size(); ++i)
        histogram[i] += ours["histogram"][i].get<int64_t>();
      const json& shown = ours.empty() ? o.value("refrt_vs_libtorch", json::object()) : ours;
      std::string detail = detail_text(shown);
      if (detail.empty()) detail = detail_text(o.value("refrt_vs_libtorch", json::object()));
      rows.push_back({text_of(s, "name"), text_of(o, "name"), text_of(o, "dtype"),
                      o.value("shape", json::array()).dump(), verdict(ours),
                      verdict(o.value("libtorch_vs_eager", json())), verdict(o.value("refrt_vs_libtorch", json())),
                      shown.value("mismatches", 0), shown.value("numel", 0), shown.value("ties", 0), detail});
    }
  return rows;
}

// [[value, max_abs_error, passed], ...] of the set that holds the first divergence (or the first set
// with intermediates), thinned to kMaxPathPoints but keeping every failing value.
json divergence_path(const json& c, const json& sets) {
  const json d = c.value("first_divergence", json());
  for (const auto& s : sets) {
    if (!s.contains("intermediates") || !s["intermediates"].is_object()) continue;
    if (d.is_object() && text_of(d, "input_set") != text_of(s, "name")) continue;
    const json values = s["intermediates"].value("values", json::array());
    const size_t step = std::max<size_t>(1, (values.size() + kMaxPathPoints - 1) / kMaxPathPoints);
    json path = json::array();
    for (size_t i = 0; i < values.size(); ++i) {
      const json& v = values[i];
      const bool passed = v.value("passed", false);
      if (passed && i % step != 0) continue;
      path.push_back({text_of(v, "value"), error_number(v.value("max_abs_error", json())), passed});
    }
    return json{{"set", text_of(s, "name")}, {"values", path}};
  }
  return json();
}

json fresh_rows(const json& c) {
  json rows = json::array();
  for (const auto& f : c.value("fresh_sets", json::array())) {
    bool ok = true;
    double worst = 0;
    for (const auto& o : f.value("outputs", json::array())) {
      const json cmp = o.value("refrt_vs_libtorch", json::object());
      ok = ok && cmp.value("passed", false);
      if (cmp.value("max_abs_error", json()).is_number()) worst = std::max(worst, cmp["max_abs_error"].get<double>());
    }
    rows.push_back({f.value("dims", json::object()).dump(), worst, ok});
  }
  return rows;
}

json profile_bars(const json& c) {
  if (!c.contains("profile") || !c["profile"].is_object()) return json();
  json bars = json::array();
  for (const auto& o : c["profile"].value("ops", json::array())) {
    if (bars.size() == kMaxProfileOps) break;
    bars.push_back({text_of(o, "op_type") + " x" + std::to_string(o.value("count", 0)), o.value("ms", 0.0)});
  }
  return json{
      {"set", text_of(c["profile"], "input_set")}, {"total_ms", c["profile"].value("total_ms", 0.0)}, {"ops", bars}};
}

void put_if(json& j, const char* key, json v) {
  if (!v.is_null() && !(v.is_array() && v.empty()) && !(v.is_string() && v.get<std::string>().empty()))
    j[key] = std::move(v);
}

}  // namespace

json html_case_data(const json& c) {
  json d = json::object();
  std::string error = text_of(c, "error");
  if (error.size() > kMaxErrorChars) error = error.substr(0, kMaxErrorChars) + " [...]";
  put_if(d, "error", error);
  put_if(d, "stage", text_of(c, "stage"));
  if (c.contains("expected_failure")) put_if(d, "expected", text_of(c["expected_failure"], "reason"));
  if (c.value("first_divergence", json()).is_object()) {
    json fd = c["first_divergence"];
    if (fd.contains("detail")) fd["detail"] = mismatch_summary(fd["detail"].get<MismatchDetail>());
    d["divergence"] = fd;
  }
  const json sets = c.value("input_sets", json::array());
  std::vector<int64_t> histogram(histogram_edges().size() + 1, 0);
  put_if(d, "outputs", output_rows(sets, histogram));
  if (std::any_of(histogram.begin(), histogram.end(), [](int64_t n) { return n > 0; })) d["histogram"] = histogram;
  put_if(d, "path", divergence_path(c, sets));
  put_if(d, "fresh", fresh_rows(c));
  put_if(d, "profile", profile_bars(c));
  if (c.contains("peers") && c["peers"].is_object()) {
    const json& p = c["peers"];
    const json official = p.value("official", json::object());
    put_if(d, "official_error", official.value("export_error", json()).is_string() ? official["export_error"] : json());
  }
  return d;
}

json histogram_bin_labels() {
  json labels = json::array({"0"});
  const auto& edges = histogram_edges();
  for (size_t i = 1; i < edges.size(); ++i) {
    std::ostringstream s;
    s << "<=" << std::setprecision(0) << std::scientific << edges[i];
    labels.push_back(s.str());
  }
  labels.push_back(">1/NaN");
  return labels;
}

}  // namespace parity::verify
