// The result lines Python children print (capture, the Ray driver): read from the first '{' that starts an object, so
// that bytes another writer left on the pipe without a newline do not lose a unit's result. Oracle: hand-written lines.
#include <gtest/gtest.h>

#include "parity/verify/capture.h"

namespace parity::verify {
namespace {

TEST(JsonLine, PlainLine) {
  const auto j = json_line(R"({"event": "done", "index": 3})");
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["index"], 3);
}

TEST(JsonLine, AfterAnotherWritersPartialLine) {
  const auto j = json_line(R"(2026-12-06 WARNING {worker} died{"event": "done", "index": 7, "lost": "x"})");
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["event"], "done");
  EXPECT_EQ(j["index"], 7);
}

TEST(JsonLine, NotJson) {
  EXPECT_FALSE(json_line("ray: 2 nodes").is_object());
  EXPECT_FALSE(json_line("{truncated").is_object());
  EXPECT_FALSE(json_line("").is_object());
}

}  // namespace
}  // namespace parity::verify
