// The exporter from several threads at once, while one of them loads a plugin (whose static initialiser
// registers a translation into the registry the others are reading). Run under ThreadSanitizer by
// scripts/tsan.sh; here it checks that every concurrent export equals the single-threaded one.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "parity/exporter/export.h"
#include "pt2_fixture.h"

namespace parity {
namespace {

TEST(ExportThreads, FourThreadsExportWhileAPluginLoads) {
  testing::Pt2Fixture f;
  const pt2::Program program = pt2::read_pt2(f.write("threads.pt2"));
  const std::string expected = exporter::export_program(program);
  ASSERT_FALSE(exporter::has_translation("parity_demo::scaled_tanh.default"));
  constexpr int kThreads = 4, kExports = 6;
  std::atomic<int> equal{0};
  std::mutex errors_mutex;
  std::vector<std::string> errors;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kExports; ++i) {
        exporter::ExportOptions o;
        if (t == kThreads - 1 && i == kExports / 2) o.plugins = {PARITY_TEST_PLUGIN};  // mid-run, one thread
        try {
          if (exporter::export_program(program, o) == expected) ++equal;
          exporter::registered_translations();
        } catch (const std::exception& e) {
          std::lock_guard lock(errors_mutex);
          errors.push_back(e.what());
        }
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_TRUE(errors.empty()) << errors.front();
  EXPECT_EQ(equal.load(), kThreads * kExports);
  EXPECT_TRUE(exporter::has_translation("parity_demo::scaled_tanh.default"));  // the plugin did register
}

TEST(ExportThreads, DiagnosticSinkReceivesWarnings) {
  // The sink is global: set, used and reset within this test only.
  std::vector<std::string> got;
  exporter::set_diagnostic_sink([&](const std::string& m) { got.push_back(m); });
  testing::Pt2Fixture f;
  f.model["graph_module"]["graph"]["nodes"][1]["target"] = "torch.ops.parity_sink_test.custom.default";
  const pt2::Program program = pt2::read_pt2(f.write("sink.pt2"));
  exporter::export_program(program);
  exporter::export_program(program);  // once per op per process
  exporter::set_diagnostic_sink(nullptr);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_NE(got[0].find("custom-domain node parity_sink_test::custom"), std::string::npos) << got[0];
}

}  // namespace
}  // namespace parity
