// Known failures, baseline regressions, the run's verdict and the HTML page's structure.
#include <gtest/gtest.h>
#include <stdlib.h>  // mkdtemp

#include <filesystem>
#include <fstream>

#include "parity/error.h"
#include "parity/verify/known_failures.h"
#include "parity/verify/report.h"

namespace parity {
namespace {

using json = nlohmann::json;

json entry(const std::string& name, const std::string& mode, const std::string& status, json max_abs = 1e-7) {
  return {{"case", name}, {"mode", mode}, {"status", status}, {"max_abs_error", max_abs}, {"error", nullptr}};
}

TEST(KnownFailures, ListedFailureIsXfailListedPassIsXpass) {
  json cases = {entry("a", "strict", "fail"), entry("a", "nonstrict", "crashed"), entry("b", "strict", "pass"),
                entry("c", "strict", "fail"), entry("d", "decomposed", "capture_failed")};
  verify::apply_known_failures(
      cases,
      {{"a", "*", "needs op X"}, {"b", "strict", "flaky"}, {"d", "*", "torch"}, {"c", "nonstrict", "other mode"}});
  EXPECT_EQ(cases[0]["status"], "xfail");
  EXPECT_EQ(cases[0]["result"], "fail");
  EXPECT_EQ(cases[0]["expected_failure"]["reason"], "needs op X");
  EXPECT_EQ(cases[1]["status"], "xfail");
  EXPECT_EQ(cases[1]["result"], "crashed");
  EXPECT_EQ(cases[2]["status"], "xpass");
  EXPECT_EQ(cases[3]["status"], "fail");  // listed for another mode only
  EXPECT_EQ(cases[4]["status"], "capture_failed");
  const json report = verify::make_report("t", cases);
  EXPECT_EQ(report["summary"]["xfail"], 2);
  EXPECT_EQ(report["summary"]["xpass"], 1);
  EXPECT_FALSE(verify::report_passed(report));  // c/strict is an unexpected failure
  json expected_only = {cases[0], cases[1], cases[2], cases[4]};
  EXPECT_TRUE(verify::report_passed(verify::make_report("t", expected_only)));
}

TEST(KnownFailures, OtherSidesAnnotateWithoutChangingOurStatus) {
  json cases = {entry("swin", "strict", "pass"), entry("gpt2", "decomposed", "capture_failed"),
                entry("t5", "strict", "fail")};
  cases[0]["peers"] = {{"official", {{"export", "error"}}}};
  verify::apply_known_failures(cases, {{"swin", "*", "official: Failed to decompose the FX graph", "official"},
                                       {"gpt2", "decomposed", "torch cannot view the tensor", "capture"},
                                       {"t5", "*", "official exporter fails", "official"}});
  EXPECT_EQ(cases[0]["status"], "pass");  // our status is ours alone
  EXPECT_EQ(cases[0]["peers"]["official"]["known_failure"], "official: Failed to decompose the FX graph");
  EXPECT_EQ(cases[1]["status"], "capture_failed");
  EXPECT_EQ(cases[1]["expected_failure"]["reason"], "torch cannot view the tensor");
  EXPECT_EQ(cases[2]["status"], "fail");  // listed for the official exporter only: still our failure
  EXPECT_FALSE(cases[2].contains("expected_failure"));
}

TEST(KnownFailures, MalformedFileNamesEntry) {
  std::string dir = (std::filesystem::temp_directory_path() / "parity_known_failures_XXXXXX").string();
  ASSERT_NE(::mkdtemp(dir.data()), nullptr) << dir;
  const auto path = (std::filesystem::path(dir) / "known_failures.json").string();
  std::ofstream(path)
      << R"([{"case": "a", "mode": "strict", "reason": "ok"}, {"case": "b", "mode": "sloppy", "reason": "x"}])";
  try {
    verify::load_known_failures(path);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("entry 1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("sloppy"), std::string::npos) << e.what();
  }
  std::ofstream(path) << R"([{"case": "a", "reason": ""}])";
  EXPECT_THROW(verify::load_known_failures(path), Error);
  std::ofstream(path) << R"([{"case": "a", "reason": "r", "side": "theirs"}])";
  EXPECT_THROW(verify::load_known_failures(path), Error);
  std::filesystem::remove(path);
  EXPECT_TRUE(verify::load_known_failures(path).empty());  // no file: nothing is known to fail
  std::filesystem::remove_all(dir);
}

TEST(Regressions, PassToFailAndTenfoldErrorGrowth) {
  const json baseline = {
      {"cases",
       {entry("a", "strict", "pass"), entry("b", "strict", "pass", 1e-7), entry("c", "strict", "pass", 1e-7),
        entry("d", "strict", "fail"), entry("e", "strict", "pass", 0.0), entry("f", "strict", "xpass")}}};
  const json now = {entry("a", "strict", "crashed", nullptr),
                    entry("b", "strict", "pass", 1.01e-6),
                    entry("c", "strict", "pass", 9e-7),
                    entry("d", "strict", "fail", 1.0),
                    entry("e", "strict", "pass", 1e-9),
                    entry("f", "strict", "xfail"),
                    entry("new", "strict", "fail")};
  const json r = verify::find_regressions(baseline, now);
  ASSERT_EQ(r.size(), 4u) << r.dump(1);
  EXPECT_EQ(r[0]["case"], "a");
  EXPECT_EQ(r[0]["kind"], "status");
  EXPECT_EQ(r[1]["case"], "b");  // 1e-7 -> 1.01e-6 is more than 10x; c's 9x is not
  EXPECT_EQ(r[1]["kind"], "error_growth");
  EXPECT_EQ(r[2]["case"], "d");  // failing before too, but its error grew 1e7-fold
  EXPECT_EQ(r[2]["kind"], "error_growth");
  EXPECT_EQ(r[3]["case"], "f");  // xpass -> xfail: it passed before
  // e (0 -> 1e-9, under the 1e-9 floor) and the new case are not regressions.
  json report = verify::make_report("t", now);
  report["regressions"] = r;
  verify::update_summary(report);
  EXPECT_EQ(report["summary"]["regressions"], 4);
}

TEST(Regressions, AnyRegressionFailsTheRun) {
  json report = verify::make_report("t", json::array({entry("a", "strict", "pass")}));
  EXPECT_TRUE(verify::report_passed(report));
  report["regressions"] = json::array({{{"case", "a"}, {"mode", "strict"}, {"kind", "error_growth"}}});
  EXPECT_FALSE(verify::report_passed(report));
  EXPECT_FALSE(verify::report_passed(verify::make_report("t", json::array())));  // nothing ran
}

TEST(HtmlReport, SummaryFirstCaseDataAndEscaping) {
  json c = entry("a<b>", "strict", "fail");
  c["error"] = "</script><script>alert(1)</script>";
  c["input_sets"] = {{{"name", "test_data_set_0"},
                      {"outputs",
                       {{{"name", "y"},
                         {"dtype", "float32"},
                         {"shape", {2}},
                         {"refrt_vs_eager",
                          {{"passed", false},
                           {"max_abs_error", 0.5},
                           {"mismatches", 1},
                           {"numel", 2},
                           {"histogram", {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0}}}}}}}}};
  c["profile"] = {{"input_set", "test_data_set_0"}, {"ops", {{{"op_type", "Gemm"}, {"count", 2}, {"ms", 0.1}}}}};
  const json ok = entry("op_add", "strict", "pass");
  const std::string html = verify::render_html(verify::make_report("t", json::array({ok, c})));
  EXPECT_NE(html.find("<table id=\"families\">"), std::string::npos);
  EXPECT_NE(html.find("<table id=\"summary\" class=\"sortable filtered\">"), std::string::npos);
  EXPECT_NE(html.find("<input id=\"filter\""), std::string::npos);
  // Failures first: the failing case's row comes before the passing one in the case table.
  const size_t table = html.find("<table id=\"summary\"");
  EXPECT_LT(html.find("a&lt;b&gt;", table), html.find("op_add", table));
  EXPECT_NE(html.find("<h2>Failures (1)</h2>"), std::string::npos);
  EXPECT_NE(html.find("\"histogram\":[1,0,0,0,0,0,0,0,0,0,1,0]"), std::string::npos);  // drawn when opened
  EXPECT_NE(html.find("\"Gemm x2\""), std::string::npos);
  EXPECT_EQ(html.find("<script>alert(1)"), std::string::npos);
  EXPECT_EQ(html.find("http://", html.find("<body>")), html.find("http://www.w3.org/2000/svg"));  // no fetch
}

}  // namespace
}  // namespace parity

// report.json is the contract: a real one (cases of a `parity matrix` run with peers: a pass, a
// capture_failed made by the matrix itself, mutated buffers, an error, an official export failure)
// read into the typed entries and written again is the same JSON.
namespace parity {
namespace {

TEST(ReportTypes, RealReportRoundTripsThroughTheStructs) {
  std::ifstream in(PARITY_SOURCE_DIR "/tests/verify/data/report_schema2.json");
  ASSERT_TRUE(in) << "fixture missing";
  const json report = json::parse(in);
  ASSERT_EQ(report["schema_version"], verify::kReportSchemaVersion);
  ASSERT_GE(report["cases"].size(), 5u);
  for (const json& c : report["cases"]) {
    const auto entry = c.get<verify::CaseEntry>();
    EXPECT_EQ(json(entry), c) << c["case"] << "/" << c["mode"];
  }
  // Typed fields hold what the JSON says.
  const auto pass = report["cases"][0].get<verify::CaseEntry>();
  EXPECT_EQ(pass.status, "pass");
  ASSERT_TRUE(pass.peers);
  EXPECT_EQ(pass.peers->official.export_status, report["cases"][0]["peers"]["official"]["export"]);
  ASSERT_FALSE(pass.input_sets.empty());
  EXPECT_TRUE(pass.input_sets[0].outputs[0].refrt_vs_eager->passed);
  const json again = verify::make_report(report["command"], report["cases"]);
  EXPECT_EQ(again["summary"]["total"], report["cases"].size());
  EXPECT_EQ(again["summary"], report["summary"]);
}

TEST(ReportTypes, EmptyOptionalFieldsAreLeftOut) {
  const json failed = verify::failed_entry("a", "strict", "timeout", "verify", "no result");
  for (const char* absent : {"peers", "profile", "fresh_sets", "onnx", "seconds", "wall_seconds", "expected_failure"})
    EXPECT_FALSE(failed.contains(absent)) << absent;
  for (const char* null : {"max_abs_error", "first_divergence"}) EXPECT_TRUE(failed.at(null).is_null()) << null;
  EXPECT_EQ(failed["error"], "no result");
}

}  // namespace
}  // namespace parity
