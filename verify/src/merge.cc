#include "parity/verify/merge.h"

#include <algorithm>
#include <map>
#include <set>

#include "parity/error.h"
#include "parity/fs.h"
#include "parity/verify/report.h"

namespace parity::verify {

using json = nlohmann::json;

Shard parse_shard(const std::string& text) {
  const auto usage = [&]() {
    return Error({"cli"}, "--shard takes K/N with 1 <= K <= N (e.g. 2/3), got '" + text + "'", ErrorKind::kUsage);
  };
  const size_t slash = text.find('/');
  if (slash == std::string::npos) throw usage();
  Shard s;
  try {
    size_t a = 0, b = 0;
    s.index = std::stoi(text.substr(0, slash), &a);
    s.count = std::stoi(text.substr(slash + 1), &b);
    if (a != slash || b != text.size() - slash - 1) throw usage();
  } catch (const std::logic_error&) {
    throw usage();
  }
  if (s.count < 1 || s.index < 1 || s.index > s.count) throw usage();
  return s;
}

namespace {

json read_report(const std::string& path) {
  json report;
  try {
    report = json::parse(read_file(path, "report"));
  } catch (const json::exception& e) {
    throw Error({"report", path}, std::string("broken JSON: ") + e.what());
  }
  if (!report.is_object() || !report.contains("cases") || !report["cases"].is_array())
    throw Error({"report", path}, "not a Parity report (no \"cases\" list)");
  const json version = report.value("schema_version", json());
  if (!version.is_number_integer() || version.get<int>() < 1 || version.get<int>() > kReportSchemaVersion)
    throw Error({"report", path},
                "schema_version " + version.dump() + " is not one this parity reads (1.." +
                    std::to_string(kReportSchemaVersion) + ")",
                ErrorKind::kUnsupported);
  for (const auto& c : report["cases"])
    if (!c.is_object() || !c.value("case", json()).is_string() || !c.value("mode", json()).is_string())
      throw Error({"report", path}, "a case entry without \"case\" and \"mode\" strings");
  return report;
}

// The shard fields of every report agree and every shard 1..N is there (or no report is a shard).
void check_shards(const std::vector<std::string>& paths, const std::vector<json>& reports) {
  std::map<int, std::string> seen;
  int count = 0;
  for (size_t i = 0; i < reports.size(); ++i) {
    const json shard = reports[i].value("shard", json());
    if (!shard.is_object()) {
      if (count > 0) throw Error({"report", paths[i]}, "not a shard report, but " + seen.begin()->second + " is");
      continue;
    }
    const int k = shard.value("index", 0), n = shard.value("count", 0);
    if (i > 0 && count == 0) throw Error({"report", paths[i]}, "a shard report, but " + paths[0] + " is not");
    if (count != 0 && n != count)
      throw Error({"report", paths[i]}, "shard " + std::to_string(k) + "/" + std::to_string(n) + " of a split into " +
                                            std::to_string(n) + ", but " + paths[0] + " is one of " +
                                            std::to_string(count));
    count = n;
    if (seen.count(k))
      throw Error({"report", paths[i]}, "shard " + std::to_string(k) + " given twice (also " + seen[k] + ")");
    seen[k] = paths[i];
  }
  for (int k = 1; k <= count; ++k)
    if (!seen.count(k))
      throw Error({"report"}, "shard " + std::to_string(k) + "/" + std::to_string(count) +
                                  " is missing: merge the reports of every shard of the run");
}

}  // namespace

json merge_reports(const std::vector<std::string>& paths) {
  if (paths.empty()) throw Error({"cli"}, "--merge needs at least one report.json", ErrorKind::kUsage);
  std::vector<json> reports;
  for (const auto& p : paths) reports.push_back(read_report(p));
  check_shards(paths, reports);

  std::vector<std::string> modes;  // the run's mode order (sharded matrix reports record it)
  for (const auto& r : reports)
    for (const auto& m : r.value("modes", json::array()))
      if (m.is_string() && std::find(modes.begin(), modes.end(), m.get<std::string>()) == modes.end())
        modes.push_back(m.get<std::string>());
  const auto mode_rank = [&](const std::string& m) {
    return static_cast<size_t>(std::find(modes.begin(), modes.end(), m) - modes.begin());
  };
  const auto before = [&](const json& a, const json& b) {
    const std::string ca = a.value("case", ""), cb = b.value("case", ""), ma = a.value("mode", ""),
                      mb = b.value("mode", "");
    if (ca != cb) return ca < cb;
    return mode_rank(ma) != mode_rank(mb) ? mode_rank(ma) < mode_rank(mb) : ma < mb;
  };

  std::map<std::pair<std::string, std::string>, std::string> owner;
  std::vector<json> cases, regressions;
  std::set<std::string> baselines;
  for (size_t i = 0; i < reports.size(); ++i) {
    for (const auto& c : reports[i]["cases"]) {
      const auto key = std::make_pair(c["case"].get<std::string>(), c["mode"].get<std::string>());
      if (owner.count(key))
        throw Error({"report", paths[i]}, key.first + "/" + key.second + " is also in " + owner[key] +
                                              ": shards of one run never share a (case, mode)");
      owner[key] = paths[i];
      cases.push_back(c);
    }
    for (const auto& r : reports[i].value("regressions", json::array())) regressions.push_back(r);
    if (reports[i].value("baseline", json()).is_string()) baselines.insert(reports[i]["baseline"].get<std::string>());
  }
  std::stable_sort(cases.begin(), cases.end(), before);
  std::stable_sort(regressions.begin(), regressions.end(), before);

  json merged = make_report("parity report --merge", json(cases));
  merged["torch_version"] = reports[0].value("torch_version", merged["torch_version"]);
  merged["merged_from"] = paths;
  if (!modes.empty()) merged["modes"] = modes;
  const bool any_baseline =
      std::any_of(reports.begin(), reports.end(), [](const json& r) { return r.contains("regressions"); });
  if (any_baseline) {
    merged["regressions"] = regressions;
    if (baselines.size() == 1) merged["baseline"] = *baselines.begin();
    update_summary(merged);
  }
  return merged;
}

}  // namespace parity::verify
