// The translation registry picks a key's version by the export opset (min_opset is a real choice), and a
// plugin's registration replaces every built-in version.
#include <gtest/gtest.h>

#include "../../exporter/src/translate.h"
#include "parity/exporter/plugin.h"

namespace parity::exporter {
namespace {

int chosen(const std::string& key, int opset) {
  const auto t = find_translation(key, opset);
  return t ? t->min_opset : -1;
}

TEST(OpsetChoice, NewestVersionNotAboveTheOpset) {
  EXPECT_EQ(chosen("aten::gelu.default", 18), 18);  // the erf formula
  EXPECT_EQ(chosen("aten::gelu.default", 19), 18);
  EXPECT_EQ(chosen("aten::gelu.default", 20), 20);  // ONNX Gelu
  EXPECT_EQ(chosen("aten::gelu.default", 23), 20);
  EXPECT_EQ(chosen("aten::rms_norm.default", 22), 18);
  EXPECT_EQ(chosen("aten::rms_norm.default", 23), 23);  // RMSNormalization
  EXPECT_EQ(chosen("aten::no_such_op.default", 23), -1);
}

TEST(OpsetChoice, InPlaceRuleKeepsTheChoice) {
  const auto t = find_translation("aten::gelu_.default", 20);
  ASSERT_TRUE(t.has_value());
  EXPECT_TRUE(t->in_place);
  EXPECT_EQ(t->min_opset, 20);
}

void plugin_gelu(PluginContext& ctx) { ctx.emit("Identity", {ctx.tensor("self")}, {ctx.output()}); }

TEST(OpsetChoice, APluginReplacesEveryBuiltInVersion) {
  const auto saved = translation_registry()["aten::gelu.default"];
  register_plugin_translation("aten::gelu.default", plugin_gelu, 18);
  for (int opset : {18, 20, 23}) {
    const auto t = find_translation("aten::gelu.default", opset);
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(t->plugin_fn, &plugin_gelu) << "opset " << opset;
  }
  translation_registry()["aten::gelu.default"] = saved;
  EXPECT_EQ(chosen("aten::gelu.default", 20), 20);
}

}  // namespace
}  // namespace parity::exporter
