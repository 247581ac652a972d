// Exporter: the ONNX graph built for a hand-written program. Numerical agreement with eager PyTorch
// is proven end to end by tests/python/test_end_to_end.py (onnx.checker + onnxruntime + eager).
#include <gtest/gtest.h>

#include <algorithm>

#include "onnx/onnx-ml.pb.h"
#include "parity/error.h"
#include "parity/exporter/export.h"
#include "pt2_fixture.h"

namespace parity {
namespace {

using testing::Pt2Fixture;

onnx::ModelProto export_model(const Pt2Fixture& f, const std::string& name, exporter::ExportOptions o = {}) {
  const std::string bytes = exporter::export_program(pt2::read_pt2(f.write(name)), o);
  onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromString(bytes));
  return m;
}

std::string meta(const onnx::NodeProto& n, const std::string& key) {
  for (const auto& p : n.metadata_props())
    if (p.key() == key) return p.value();
  return "<absent>";
}

TEST(Export, GraphUsesFxNamesInitializersAndDimNames) {
  Pt2Fixture f;
  const onnx::ModelProto m = export_model(f, "export_good.pt2");
  EXPECT_EQ(m.opset_import(0).version(), 18);
  const auto& g = m.graph();
  ASSERT_EQ(g.input_size(), 1);
  EXPECT_EQ(g.input(0).name(), "x");
  EXPECT_EQ(g.input(0).type().tensor_type().shape().dim(0).dim_param(), "batch");
  EXPECT_EQ(g.input(0).type().tensor_type().shape().dim(1).dim_value(), 3);
  ASSERT_EQ(g.initializer_size(), 2);
  EXPECT_EQ(g.initializer(0).name(), "fc.weight");
  ASSERT_EQ(g.node_size(), 2);
  EXPECT_EQ(g.node(0).op_type(), "Gemm");  // rank-2 linear is one Gemm with transB
  EXPECT_EQ(g.node(0).output(0), "linear");
  EXPECT_EQ(g.node(1).op_type(), "Relu");
  EXPECT_EQ(g.output(0).name(), "relu");
  EXPECT_EQ(g.output(0).type().tensor_type().shape().dim(0).dim_param(), "batch");
}

TEST(Export, NodesCarrySourceMetadataWithRelativePaths) {
  Pt2Fixture f;
  const auto n = export_model(f, "export_meta.pt2").graph().node(0);
  EXPECT_EQ(meta(n, "pkg.torch.onnx.name_scopes"), "['', 'fc']");
  EXPECT_EQ(meta(n, "pkg.torch.onnx.class_hierarchy"), "['__main__.M', 'torch.nn.modules.linear.Linear']");
  EXPECT_EQ(meta(n, "pkg.torch.onnx.stack_trace").find("/home/u"), std::string::npos);
  EXPECT_NE(meta(n, "pkg.torch.onnx.stack_trace").find("model.py"), std::string::npos);
  EXPECT_NE(meta(n, "namespace").find("aten.linear.default"), std::string::npos);
}

TEST(Export, IsDeterministic) {
  Pt2Fixture f;
  const auto p = pt2::read_pt2(f.write("export_det.pt2"));
  EXPECT_EQ(exporter::export_program(p), exporter::export_program(p));
}

TEST(Export, WithoutDimNamesTheSymbolIsKept) {
  Pt2Fixture f;
  f.dims = "{}";
  const auto m = export_model(f, "export_nodims.pt2");
  EXPECT_EQ(m.graph().input(0).type().tensor_type().shape().dim(0).dim_param(), "s77");
}

TEST(Export, NameOverrides) {
  Pt2Fixture f;
  exporter::ExportOptions o;
  o.input_names = {"features"};
  o.output_names = {"scores"};
  const auto m = export_model(f, "export_names.pt2", o);
  EXPECT_EQ(m.graph().input(0).name(), "features");
  EXPECT_EQ(m.graph().output(0).name(), "scores");
}

TEST(Export, UnknownOpNamesTargetNodeAndTrace) {
  Pt2Fixture f;
  f.model["graph_module"]["graph"]["nodes"][1]["target"] = "torch.ops.aten.frobnicate.default";
  try {
    exporter::export_program(pt2::read_pt2(f.write("export_unknown.pt2")));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("aten::frobnicate.default"), std::string::npos) << what;
    EXPECT_NE(what.find("relu"), std::string::npos) << what;      // the node
    EXPECT_NE(what.find("model.py"), std::string::npos) << what;  // its source line
  }
}

TEST(Export, OpsetOutOfRangeIsAnError) {
  Pt2Fixture f;
  exporter::ExportOptions o;
  o.opset = 17;
  EXPECT_THROW(exporter::export_program(pt2::read_pt2(f.write("export_opset.pt2")), o), Error);
}

}  // namespace
}  // namespace parity

namespace parity {
namespace {

// `parity coverage` matches these keys against torch's "aten::op.overload" names: a malformed
// registration would silently count as untranslated.
TEST(Export, RegisteredTranslationKeysAreWellFormed) {
  const auto keys = exporter::registered_translations();
  ASSERT_GT(keys.size(), 200u);
  for (const auto& key : keys) {
    const auto sep = key.find("::");
    ASSERT_NE(sep, std::string::npos) << key;
    const std::string ns = key.substr(0, sep), rest = key.substr(sep + 2);
    // Besides ATen and Python's operators: PT2E's quantize/dequantize ops, torchao's affine quantization
    // ops, transformers' own MoE op and torch's prims (as_strided_scatter, which aten's decomposes to),
    // which programs carry as registered torch libraries of those namespaces.
    const bool library_op = ns == "quantized_decomposed" || ns == "torchao" || ns == "transformers" || ns == "prims";
    EXPECT_TRUE(ns == "aten" || ns == "_operator" || ns == "torch" || ns == "math" || ns == "higher_order" ||
                library_op)
        << key;
    if (ns == "aten" || library_op) {
      EXPECT_NE(rest.find('.'), std::string::npos) << key << " lacks its overload";
    }
  }
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
  EXPECT_EQ(exporter::registry_key("torch.ops.aten.add.Tensor"), "aten::add.Tensor");
  EXPECT_EQ(exporter::registry_key("_operator.floordiv"), "_operator::floordiv");
}

}  // namespace
}  // namespace parity
