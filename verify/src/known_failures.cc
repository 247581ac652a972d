#include "parity/verify/known_failures.h"

#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>

#include "parity/error.h"
#include "parity/fs.h"

namespace parity::verify {

using json = nlohmann::json;

std::vector<KnownFailure> load_known_failures(const std::string& path) {
  if (!std::filesystem::exists(path)) return {};
  json list;
  try {
    list = json::parse(read_file(path, "matrix"));
  } catch (const json::exception& e) {
    throw Error({"matrix", path}, std::string("broken JSON: ") + e.what());
  }
  if (!list.is_array()) throw Error({"matrix", path}, "expected a list of {\"case\", \"mode\", \"reason\"} objects");
  std::vector<KnownFailure> out;
  for (size_t i = 0; i < list.size(); ++i) {
    const json& e = list[i];
    const std::string where = "entry " + std::to_string(i);
    if (!e.is_object() || !e.contains("case") || !e["case"].is_string() || !e.contains("reason") ||
        !e["reason"].is_string() || e["reason"].get<std::string>().empty())
      throw Error({"matrix", path}, where + ": needs a \"case\" and a non-empty \"reason\"");
    KnownFailure k{e["case"], e.value("mode", "*"), e["reason"], e.value("side", "ours")};
    if (k.mode != "*" && k.mode != "strict" && k.mode != "nonstrict" && k.mode != "decomposed")
      throw Error({"matrix", path}, where + ": mode '" + k.mode + "' is not strict, nonstrict, decomposed or *");
    if (k.side != "ours" && k.side != "official" && k.side != "capture")
      throw Error({"matrix", path}, where + ": side '" + k.side + "' is not ours, official or capture");
    out.push_back(k);
  }
  return out;
}

void apply_known_failures(json& cases, const std::vector<KnownFailure>& known) {
  for (auto& c : cases) {
    const std::string name = c.value("case", ""), mode = c.value("mode", ""), status = c.value("status", "");
    bool ours_done = false;
    for (const auto& k : known) {
      if (k.case_name != name || (k.mode != "*" && k.mode != mode)) continue;
      if (k.side == "official") {
        if (c.contains("peers") && c["peers"].is_object() && c["peers"].contains("official") &&
            c["peers"]["official"].value("export", "") != "not_run")
          c["peers"]["official"]["known_failure"] = k.reason;
        continue;
      }
      if (status == "capture_failed") {  // torch.export's refusal is reported as such, with the listed reason
        if (k.side == "capture") c["expected_failure"] = {{"mode", k.mode}, {"reason", k.reason}};
        continue;
      }
      if (k.side != "ours" || ours_done) continue;
      ours_done = true;
      c["result"] = status;
      c["expected_failure"] = {{"mode", k.mode}, {"reason", k.reason}};
      c["status"] = status == "pass" ? "xpass" : "xfail";
    }
  }
}

namespace {
bool passed(const std::string& status) { return status == "pass" || status == "xpass"; }
}  // namespace

json find_regressions(const json& baseline, const json& cases) {
  std::map<std::pair<std::string, std::string>, const json*> before;
  if (baseline.contains("cases") && baseline["cases"].is_array())
    for (const auto& c : baseline["cases"]) before[{c.value("case", ""), c.value("mode", "")}] = &c;
  json out = json::array();
  for (const auto& c : cases) {
    const auto it = before.find({c.value("case", ""), c.value("mode", "")});
    if (it == before.end()) continue;
    const json& old = *it->second;
    const std::string was = old.value("status", ""), now = c.value("status", "");
    json r = {{"case", c.value("case", "")}, {"mode", c.value("mode", "")}};
    if (passed(was) && !passed(now)) {
      r.update({{"kind", "status"},
                {"before", was},
                {"after", now},
                {"what", "was " + was + ", now " + now +
                             (c.value("error", json()).is_string() ? ": " + c["error"].get<std::string>() : "")}});
      out.push_back(r);
      continue;
    }
    const json a = old.value("max_abs_error", json()), b = c.value("max_abs_error", json());
    const bool b_infinite = b.is_string() && b.get<std::string>() == "Infinity";
    if (a.is_number() && (b.is_number() || b_infinite)) {
      const double old_err = a.get<double>(), new_err = b_infinite ? INFINITY : b.get<double>();
      if (new_err > 10 * std::max(old_err, 1e-9)) {
        std::ostringstream what;
        what << "max abs error grew from " << old_err << " to " << new_err;
        r.update({{"kind", "error_growth"}, {"before", a}, {"after", b}, {"what", what.str()}});
        out.push_back(r);
      }
    }
  }
  return out;
}

}  // namespace parity::verify
