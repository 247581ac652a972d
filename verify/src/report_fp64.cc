// The fp64 rule in the reports (compare.h): which pairs and peer runs passed by it alone, counted in the
// summary and listed in report.md, so that a pass by the second rule is never mistaken for a pass by the
// first.
#include <algorithm>
#include <iomanip>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "parity/verify/compare.h"
#include "report_text.h"

namespace parity::verify {

using json = nlohmann::json;

namespace {

// An output comparison that failed the fixed rule and passed by the second rule `rule` ("fp64_rule",
// "requant_rule").
bool passed_by_rule(const json& cmp, const char* rule) {
  return cmp.is_object() && cmp.value("passed", false) && cmp.contains(rule) && cmp[rule].value("passed", false);
}

// The outputs of case `c` whose comparison `key` ("refrt_vs_eager", ...) passed by `rule`.
int64_t outputs_passed_by_rule(const json& c, const char* key, const char* rule = "fp64_rule") {
  int64_t n = 0;
  for (const auto& set : c.value("input_sets", json::array()))
    for (const auto& o : set.value("outputs", json::array())) n += passed_by_rule(o.value(key, json()), rule) ? 1 : 0;
  return n;
}

bool case_passed(const json& c) {
  const std::string status = c.value("status", "");
  return status == "pass" || status == "xpass";
}

// The run record of a peers column (scenarios.peers' for ORT, ours for refrt on the official model).
json peer_detail(const json& c, const char* side, const char* engine) {
  if (!c.contains("peers") || !c["peers"].is_object()) return json();
  const json& p = c["peers"].value(side, json::object());
  return p.value(std::string(engine) == "refrt" ? "refrt_detail" : "ort_detail", json());
}

// The verdict nearest to failing over the outputs' comparison `key`, with its set and output.
json closest_verdict(const json& c, const char* key) {
  std::optional<Fp64Rule> worst;
  for (const auto& set : c.value("input_sets", json::array()))
    for (const auto& o : set.value("outputs", json::array())) {
      const json cmp = o.value(key, json());
      if (!cmp.is_object() || !cmp.contains("fp64_rule")) continue;
      Fp64Rule here = cmp["fp64_rule"].get<Fp64Rule>();
      here.input_set = text_of(set, "name"), here.output = o.value("index", int64_t{0});
      worst = worst ? closer_to_failing(*worst, here) : here;
    }
  return worst ? json(*worst) : json();
}

std::string verdict_line(const json& v) {
  const Fp64Rule r = v.get<Fp64Rule>();
  return fp64_rule_text(r) + " (" + r.input_set + " output " + std::to_string(r.output) + ")";
}

}  // namespace

const char* const kFp64RuleStatement =
    "A floating output that fails the fixed rule passes when eager's float64 run (saved at capture) shows it is "
    "not much farther from the exact result than eager float32 itself: rmse(float64, actual) <= m x "
    "rmse(float64, eager float32) + atol / 10, m = 2 (3 below 1000 elements or for float16 / bfloat16). This is "
    "torch's fp64-oracle rule (torch._dynamo.utils.same) with tol = the dtype's atol; shapes, dtypes and NaN "
    "placement must still match.";

int64_t fp64_passes(const json& c, const char* side, const char* engine) {
  if (std::string(side) == "ours" && std::string(engine) == "refrt") return outputs_passed_by_rule(c, "refrt_vs_eager");
  const json d = peer_detail(c, side, engine);
  return d.is_object() ? d.value("fp64_outputs", int64_t{0}) : 0;
}

bool case_passed_by_fp64(const json& c) {
  return case_passed(c) &&
         outputs_passed_by_rule(c, "refrt_vs_eager") + outputs_passed_by_rule(c, "libtorch_vs_eager") > 0;
}

bool case_passed_by_requant(const json& c) {
  return case_passed(c) && outputs_passed_by_rule(c, "refrt_vs_eager", "requant_rule") > 0;
}

void count_fp64(json& summary, const json& cases) {
  json counts = {{"cases", 0}};
  bool any = false;
  for (const auto& c : cases) {
    if (case_passed_by_fp64(c)) counts["cases"] = counts["cases"].get<int>() + 1, any = true;
    for (const auto& col : kPeerColumns) {
      const std::string key = std::string(col[0]) + "_" + col[1];
      const bool counted = peer_cell(c, col[0], col[1]) == "pass" && fp64_passes(c, col[0], col[1]) > 0;
      counts[key] = counts.value(key, 0) + (counted ? 1 : 0);
      any = any || counted;
    }
  }
  if (any) summary["fp64_rule"] = counts;
}

// "## The fp64 rule": the rule, then every case where it was tried, each engine's verdict nearest to failing.
void markdown_fp64(std::ostringstream& md, const json& report) {
  bool any = false;
  for (const auto& c : report.at("cases")) {
    std::vector<std::string> parts;
    for (const auto& [label, v] : {std::pair{"refrt", closest_verdict(c, "refrt_vs_eager")},
                                   std::pair{"libtorch", closest_verdict(c, "libtorch_vs_eager")}})
      if (v.is_object()) parts.push_back(std::string(label) + ": " + verdict_line(v));
    for (const auto& col : kPeerColumns) {
      const json d = peer_detail(c, col[0], col[1]);
      if (d.is_object() && d.contains("fp64_rule"))
        parts.push_back(std::string(col[0]) + "/" + col[1] + ": " + verdict_line(d["fp64_rule"]));
    }
    if (parts.empty()) continue;
    if (!any) md << "\n## The fp64 rule\n\n" << kFp64RuleStatement << " Pairs where it was tried:\n\n";
    any = true;
    md << "- **" << text_of(c, "case") << " / " << text_of(c, "mode") << "** (" << text_of(c, "status") << ")";
    for (const auto& p : parts) md << "; " << p;
    md << "\n";
  }
}

namespace {
// "## Complex outputs": which outputs were compared as complex numbers (docs/complex.md), once per case and mode.
void markdown_complex(std::ostringstream& md, const json& report) {
  bool any = false;
  for (const auto& c : report.at("cases")) {
    std::vector<std::string> names;
    for (const auto& s : c.value("input_sets", json::array()))
      for (const auto& o : s.value("outputs", json::array())) {
        const json z = o.value("refrt_vs_eager", json::object()).value("complex", json());
        if (!z.is_object()) continue;
        const std::string name = text_of(o, "name") + " (" + z.value("dtype", std::string("complex")) + ")";
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
      }
    if (names.empty()) continue;
    if (!any)
      md << "\n## Complex outputs\n\nCompared as complex numbers: both sides are (real, imaginary) pairs in a "
            "trailing dim of 2, and an element passes when the modulus of the complex difference is <= atol + rtol "
            "x |expected| (the float part dtype's numbers).\n\n";
    any = true;
    md << "- **" << text_of(c, "case") << " / " << text_of(c, "mode") << "**:";
    for (size_t i = 0; i < names.size(); ++i) md << (i ? ", " : " ") << names[i];
    md << "\n";
  }
}
}  // namespace

void markdown_tolerances(std::ostringstream& md, const json& report) {
  // Machine epsilon (the gap above 1.0) of each floating dtype: 10, 7, 23 and 52 mantissa bits.
  const std::vector<std::pair<std::string, double>> eps = {
      {"float16", 0x1p-10}, {"bfloat16", 0x1p-7}, {"float32", 0x1p-23}, {"float64", 0x1p-52}};
  // The numbers the comparisons used (the dtype's defaults, or a case's own), each distinct triple once.
  std::vector<std::tuple<std::string, double, double>> rows;
  for (const auto& c : report.at("cases"))
    for (const auto& s : c.value("input_sets", json::array()))
      for (const auto& o : s.value("outputs", json::array())) {
        const json cmp = o.value("refrt_vs_eager", json::object());
        if (!cmp.contains("atol") || !cmp.contains("rtol")) continue;
        std::tuple<std::string, double, double> row{o.value("dtype", ""), cmp["atol"].get<double>(),
                                                    cmp["rtol"].get<double>()};
        if (std::find(rows.begin(), rows.end(), row) == rows.end()) rows.push_back(row);
      }
  bool any = false;
  for (const auto& [dtype, epsilon] : eps)
    for (const auto& [d, atol, rtol] : rows) {
      if (d != dtype) continue;
      if (!any)
        md << "\n## Tolerances\n\nAn element passes when |actual - expected| <= atol + rtol x |expected| "
              "(defaults per dtype in common/tolerances.json); an output that misses it is judged by the fp64 "
              "rule. The numbers used here:\n\n| dtype | atol | rtol | rtol in epsilons of the dtype |\n"
              "|---|---:|---:|---:|\n";
      any = true;
      std::ostringstream row;
      row << "| " << dtype << " | " << atol << " | " << rtol << " | " << std::setprecision(3) << rtol / epsilon
          << " |\n";
      md << row.str();
    }
  markdown_complex(md, report);
}

const char* const kRequantRuleStatement =
    "A floating output of a quantized net that misses eager (or a dequantized output a step off anywhere) is "
    "judged layer by layer: libtorch runs again with refrt's quantized activations in place of its own. Each "
    "activation must be within one step of libtorch's requantization of the same input, and where it is a "
    "step off, libtorch's unrounded value (x / scale) must lie within 1e-3 step of the rounding tie: float "
    "rounding moves only near-ties, a wrong integer kernel lands anywhere. The output must then match that run "
    "within the fixed tolerance.";

void markdown_requant(std::ostringstream& md, const json& report) {
  bool any = false;
  for (const auto& c : report.at("cases")) {
    json rule;  // the first failing rule of the case, else the one with the most flips
    for (const auto& s : c.value("input_sets", json::array()))
      for (const auto& o : s.value("outputs", json::array())) {
        const json r = o.value("refrt_vs_eager", json::object()).value("requant_rule", json());
        if (!r.is_object()) continue;
        if (!rule.is_object() || (rule.value("passed", false) &&
                                  (!r.value("passed", false) || r.value("one_step", 0) > rule.value("one_step", 0))))
          rule = r;
      }
    if (!rule.is_object()) continue;
    if (!any) md << "\n## The requantized rule\n\n" << kRequantRuleStatement << " Cases where it was tried:\n\n";
    any = true;
    md << "- **" << text_of(c, "case") << " / " << text_of(c, "mode")
       << "**: " << (rule.value("passed", false) ? "passed" : "failed") << ", " << rule.value("activations", 0)
       << " activations substituted, " << rule.value("one_step", 0) << " elements flipped";
    std::vector<std::pair<int64_t, std::string>> nodes;
    const json flipped = rule.value("flipped", json::object());  // items() must not outlive it
    for (const auto& [name, n] : flipped.items()) nodes.emplace_back(n.get<int64_t>(), name);
    std::sort(nodes.rbegin(), nodes.rend());
    for (size_t k = 0; k < nodes.size() && k < 4; ++k)
      md << (k == 0 ? " (" : ", ") << nodes[k].second << ": " << nodes[k].first;
    if (!nodes.empty()) md << (nodes.size() > 4 ? ", ...)" : ")");
    if (rule.contains("max_tie_distance") && rule["max_tie_distance"].is_number())
      md << ", farthest from a tie " << scientific(rule["max_tie_distance"]) << " step";
    if (rule.contains("problem")) md << "; " << text_of(rule, "problem");
    md << "\n";
  }
}

}  // namespace parity::verify
