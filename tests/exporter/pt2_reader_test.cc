// PT2 reader: a good archive is read faithfully; every broken one gives one clear error naming the file.
#include <gtest/gtest.h>

#include "parity/error.h"
#include "parity/exporter/program.h"
#include "pt2_fixture.h"

namespace parity {
namespace {

using testing::Pt2Fixture;

// Runs read_pt2 expecting an error that mentions every `needle` (and the archive's path).
void expect_read_error(const std::string& path, const std::vector<std::string>& needles) {
  try {
    pt2::read_pt2(path);
    FAIL() << "expected an error reading " << path;
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(path), std::string::npos) << what;
    for (const auto& n : needles) EXPECT_NE(what.find(n), std::string::npos) << "missing '" << n << "' in: " << what;
  }
}

TEST(Pt2Reader, ReadsGraphSignatureWeightsAndDimNames) {
  Pt2Fixture f;
  const pt2::Program p = pt2::read_pt2(f.write("good.pt2"));
  EXPECT_EQ(p.schema_major, 8);
  ASSERT_EQ(p.graph.nodes.size(), 2u);
  EXPECT_EQ(p.graph.nodes[0].target, "torch.ops.aten.linear.default");
  EXPECT_EQ(p.user_input_names(), std::vector<std::string>{"x"});
  EXPECT_EQ(p.user_output_names(), std::vector<std::string>{"relu"});
  ASSERT_EQ(p.weights.count("fc.weight"), 1u);
  const Tensor& w = p.weights.at("fc.weight");
  EXPECT_EQ(w.shape(), (Shape{2, 3}));
  EXPECT_EQ(w.data<float>()[5], -6.0f);
  EXPECT_EQ(p.dim_names.at("s77"), "batch");
  const auto& x = p.graph.tensor_values.at("x");
  EXPECT_FALSE(x.sizes[0].value.has_value());
  EXPECT_EQ(x.sizes[0].expr, "s77");  // the sympy srepr is simplified
  EXPECT_EQ(x.sizes[0].hint, 2);
  EXPECT_EQ(p.range_constraints.at("s77").min, 2);
}

TEST(Pt2Reader, TransposedWeightStorageIsMaterialised) {
  Pt2Fixture f;
  // The same 6 floats viewed as a 3x2 transpose (strides 1, 3).
  f.weights_config["config"]["fc.weight"]["tensor_meta"] =
      testing::tensor_meta({{{"as_int", 3}}, {{"as_int", 2}}}, {1, 3});
  const pt2::Program p = pt2::read_pt2(f.write("strided.pt2"));
  const Tensor& w = p.weights.at("fc.weight");
  EXPECT_EQ(w.shape(), (Shape{3, 2}));
  const float expected[6] = {1, -4, -2, 5, 3, -6};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(w.data<float>()[i], expected[i]) << i;
}

TEST(Pt2Reader, MissingFileIsAnError) { expect_read_error("/nonexistent/model.pt2", {"cannot open"}); }

TEST(Pt2Reader, NonZipIsAnError) {
  Pt2Fixture f;
  expect_read_error(f.write("not_zip.pt2", "this is not a zip archive at all, just text"), {"not a PT2 archive"});
}

TEST(Pt2Reader, TruncatedArchiveIsAnError) {
  Pt2Fixture f;
  const std::string full = f.bytes();
  for (size_t keep : {full.size() / 2, full.size() - 10, size_t{30}, size_t{0}})
    expect_read_error(f.write("truncated.pt2", full.substr(0, keep)), {});
}

TEST(Pt2Reader, BrokenJsonNamesTheRecord) {
  Pt2Fixture f;
  expect_read_error(f.write("broken_json.pt2", f.bytes("{\"graph_module\": [")), {"models/model.json", "broken JSON"});
}

TEST(Pt2Reader, UnexpectedJsonStructureIsAnError) {
  Pt2Fixture f;
  f.model["graph_module"]["graph"].erase("nodes");
  expect_read_error(f.write("no_nodes.pt2"), {"models/model.json"});
}

TEST(Pt2Reader, UnknownSchemaMajorIsRefused) {
  Pt2Fixture f;
  f.model["schema_version"]["major"] = 9;
  expect_read_error(f.write("schema9.pt2"), {"major version 9"});
}

TEST(Pt2Reader, PickledWeightsAreRefused) {
  Pt2Fixture f;
  f.weights_config["config"]["fc.bias"]["use_pickle"] = true;
  expect_read_error(f.write("pickle.pt2"), {"fc.bias", "pickle"});
}

TEST(Pt2Reader, WrongArchiveFormatIsRefused) {
  Pt2Fixture f;
  f.archive_format = "torchscript";
  expect_read_error(f.write("format.pt2"), {"archive_format"});
}

TEST(Pt2Reader, ShortWeightStorageIsAnError) {
  Pt2Fixture f;
  f.weight_bytes.resize(8);
  expect_read_error(f.write("short_weight.pt2"), {"fc.weight", "needs 24"});
}

TEST(Pt2Reader, AbsurdStridesDoNotWrapAround) {
  Pt2Fixture f;
  // (5 - 1) * 2^62 wraps to 0 in 64 bits: without the overflow check the extent would look like
  // 2 elements, pass the size check and the view would read far out of bounds.
  f.weights_config["config"]["fc.weight"]["tensor_meta"] =
      testing::tensor_meta({{{"as_int", 2}}, {{"as_int", 5}}}, {1, int64_t{1} << 62});
  expect_read_error(f.write("absurd_strides.pt2"), {"fc.weight", "overflow"});
}

TEST(Pt2Reader, UnsafeWeightPathIsRefused) {
  Pt2Fixture f;
  f.weights_config["config"]["fc.bias"]["path_name"] = "../../etc/passwd";
  expect_read_error(f.write("unsafe_path.pt2"), {"unsafe path_name"});
}

}  // namespace
}  // namespace parity
