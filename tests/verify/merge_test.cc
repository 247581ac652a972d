// Joining sharded matrix reports: the order of one run, recomputed summary, joined regressions, and
// errors naming the file for missing, repeated or overlapping shards. Oracle: hand-written reports.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "parity/error.h"
#include "parity/verify/merge.h"

namespace parity {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

class Merge : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("parity_merge_test_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A shard report holding (case, mode, status) entries and optional regressions.
  std::string shard(int k, int n, std::vector<std::array<const char*, 3>> cases, json regressions = nullptr) {
    json report = {{"schema_version", 2},
                   {"summary", json::object()},
                   {"torch_version", "2.13.0"},
                   {"modes", {"strict", "nonstrict", "decomposed"}},
                   {"cases", json::array()}};
    if (n > 0) report["shard"] = {{"index", k}, {"count", n}};
    for (const auto& [c, m, s] : cases) report["cases"].push_back({{"case", c}, {"mode", m}, {"status", s}});
    if (!regressions.is_null()) report["regressions"] = regressions, report["baseline"] = "old/report.json";
    const std::string path = (dir_ / ("s" + std::to_string(k) + "_" + std::to_string(counter_++) + ".json")).string();
    std::ofstream(path) << report.dump();
    return path;
  }

  fs::path dir_;
  int counter_ = 0;
};

TEST_F(Merge, RestoresTheOrderOfOneRunAndRecountsTheSummary) {
  // One run's pairs a/strict a/nonstrict a/decomposed b/strict ..., round robin over 2 shards.
  const auto s1 = shard(1, 2, {{"a", "strict", "pass"}, {"a", "decomposed", "pass"}, {"b", "nonstrict", "fail"}},
                        json::array({{{"case", "b"}, {"mode", "nonstrict"}, {"kind", "status"}}}));
  const auto s2 =
      shard(2, 2, {{"a", "nonstrict", "pass"}, {"b", "strict", "capture_failed"}, {"b", "decomposed", "pass"}},
            json::array());
  const json merged = verify::merge_reports({s2, s1});
  std::vector<std::string> order;
  for (const auto& c : merged["cases"])
    order.push_back(c["case"].get<std::string>() + "/" + c["mode"].get<std::string>());
  EXPECT_EQ(order, (std::vector<std::string>{"a/strict", "a/nonstrict", "a/decomposed", "b/strict", "b/nonstrict",
                                             "b/decomposed"}));
  EXPECT_EQ(merged["summary"]["total"], 6);
  EXPECT_EQ(merged["summary"]["pass"], 4);
  EXPECT_EQ(merged["summary"]["fail"], 1);
  EXPECT_EQ(merged["summary"]["capture_failed"], 1);
  EXPECT_EQ(merged["summary"]["regressions"], 1);
  EXPECT_EQ(merged["regressions"][0]["case"], "b");
  EXPECT_EQ(merged["baseline"], "old/report.json");
  EXPECT_EQ(merged["schema_version"], 2);
  EXPECT_FALSE(merged.contains("shard"));
}

TEST_F(Merge, RefusesMissingRepeatedAndOverlappingShards) {
  const auto s1 = shard(1, 3, {{"a", "strict", "pass"}});
  const auto s2 = shard(2, 3, {{"b", "strict", "pass"}});
  const auto s3 = shard(3, 3, {{"c", "strict", "pass"}});
  EXPECT_NO_THROW(verify::merge_reports({s1, s2, s3}));
  auto message = [](const std::vector<std::string>& paths) {
    try {
      verify::merge_reports(paths);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({s1, s3}).find("shard 2/3 is missing"), std::string::npos);
  EXPECT_NE(message({s1, s1, s2, s3}).find("shard 1 given twice"), std::string::npos);
  const auto other_split = shard(2, 4, {{"d", "strict", "pass"}});
  EXPECT_NE(message({s1, other_split}).find(other_split), std::string::npos);
  const auto overlap = shard(3, 3, {{"a", "strict", "fail"}});
  const std::string m = message({s1, s2, overlap});
  EXPECT_NE(m.find("a/strict is also in " + s1), std::string::npos) << m;
  const std::string broken = (dir_ / "broken.json").string();
  std::ofstream(broken) << "{\"cases\": 3}";
  EXPECT_NE(message({broken}).find(broken + ": not a Parity report"), std::string::npos);
}

TEST(Shard, ParsesKOfN) {
  EXPECT_EQ(verify::parse_shard("2/3").index, 2);
  EXPECT_EQ(verify::parse_shard("2/3").count, 3);
  for (const char* bad : {"0/3", "4/3", "3", "a/b", "1/0", "1/3x", "-1/3", ""})
    EXPECT_THROW(verify::parse_shard(bad), Error) << bad;
}

}  // namespace
}  // namespace parity
