// Hostile inputs to the shape, data-movement and indexing kernels: out-of-range indices, absurd sizes
// (allocation limit), wrong element counts, negative dims. Each must be a parity::Error naming the node
// and the op; nothing may crash or read out of bounds.
#include <gtest/gtest.h>

#include <limits>

#include "model_builder.h"
#include "parity/error.h"
#include "parity/refrt/session.h"

namespace parity {
namespace {

using testing::make;
using testing::ModelBuilder;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

Tensor i64(Shape shape, std::vector<int64_t> v) { return make<int64_t>(DType::kInt64, std::move(shape), v); }
Tensor f32(Shape shape, std::vector<float> v) { return make<float>(DType::kFloat32, std::move(shape), v); }
Tensor i64_scalar(int64_t v) { return i64({}, {v}); }

void string_attr(onnx::NodeProto* n, const std::string& name, const std::string& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

// A model of one node `op` named `name` whose inputs are the graph inputs in0, in1, ... (typed from the
// tensors of each run, rank left open) and whose outputs are y0, y1, ...
struct OneNode {
  ModelBuilder b;
  onnx::NodeProto* n;
  OneNode(const std::string& op, const std::string& name, size_t inputs, size_t outputs = 1, int opset = 18)
      : b(opset) {
    std::vector<std::string> in, out;
    for (size_t i = 0; i < inputs; ++i) {
      in.push_back("in" + std::to_string(i));
      b.g().add_input()->set_name(in.back());
    }
    for (size_t i = 0; i < outputs; ++i) out.push_back("y" + std::to_string(i));
    n = b.node(op, in, out, name);
    for (const auto& o : out) b.output(o);
  }
};

std::unique_ptr<refrt::Session> load_for(OneNode& model, const std::vector<Tensor>& inputs) {
  for (size_t i = 0; i < inputs.size() && i < static_cast<size_t>(model.b.g().input_size()); ++i)
    model.b.g()
        .mutable_input(static_cast<int>(i))
        ->mutable_type()
        ->mutable_tensor_type()
        ->set_elem_type(static_cast<int>(inputs[i].dtype()));
  return refrt::Session::load_bytes(model.b.bytes(), "hostile_indexing.onnx");
}

// Runs `model` on `inputs` and expects an error naming node and op plus every needle.
void expect_error(OneNode& model, const std::vector<Tensor>& inputs, const std::vector<std::string>& needles) {
  const std::string& node = model.n->name();
  const std::string& op = model.n->op_type();
  try {
    load_for(model, inputs)->run(inputs);
    ADD_FAILURE() << node << ": expected an error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.context().node, node) << what;
    EXPECT_EQ(e.context().op, op) << what;
    EXPECT_NE(what.find(node), std::string::npos) << what;
    EXPECT_NE(what.find(op), std::string::npos) << what;
    for (const auto& s : needles) EXPECT_NE(what.find(s), std::string::npos) << "missing '" << s << "' in: " << what;
  }
}

const Tensor kData = f32({2, 3}, {1, 2, 3, 4, 5, 6});

TEST(HostileIndexing, GatherIndexOutOfRange) {
  OneNode m("Gather", "gather_bad", 2);
  ModelBuilder::attr(m.n, "axis", int64_t{1});
  expect_error(m, {kData, i64({2}, {0, 3})}, {"index 3 is out of range", "size 3"});
  expect_error(m, {kData, i64({1}, {-4})}, {"index -4"});
  expect_error(m, {kData, i64({1}, {kMin})}, {"out of range"});
}

TEST(HostileIndexing, GatherElementsIndexOutOfRange) {
  OneNode m("GatherElements", "gather_elements_bad", 2);
  expect_error(m, {kData, i64({1, 3}, {0, 2, 1})}, {"index 2 is out of range for axis 0"});
  expect_error(m, {kData, i64({3}, {0, 0, 0})}, {"rank"});
  expect_error(m, {kData, i64({1, 4}, {0, 0, 0, 0})}, {"exceeds data shape"});
}

TEST(HostileIndexing, GatherNDIndexOutOfRange) {
  OneNode m("GatherND", "gather_nd_bad", 2);
  expect_error(m, {kData, i64({1, 2}, {1, 3})}, {"index 3 is out of range for axis 1"});
  expect_error(m, {kData, i64({1, 3}, {0, 0, 0})}, {"last dim 3"});
  OneNode batch("GatherND", "gather_nd_batch_bad", 2);
  ModelBuilder::attr(batch.n, "batch_dims", int64_t{5});
  expect_error(batch, {kData, i64({2, 1}, {0, 0})}, {"batch_dims 5"});
}

TEST(HostileIndexing, ScatterNDIndexOutOfRange) {
  OneNode m("ScatterND", "scatter_nd_bad", 3);
  expect_error(m, {kData, i64({1, 1}, {2}), f32({1, 3}, {0, 0, 0})}, {"index 2 is out of range for axis 0"});
  expect_error(m, {kData, i64({1, 1}, {1}), f32({1, 2}, {0, 0})}, {"updates have shape [1, 2], expected [1, 3]"});
  OneNode reduce("ScatterND", "scatter_nd_reduce_bad", 3, 1, 15);
  string_attr(reduce.n, "reduction", "add");
  try {
    load_for(reduce, {kData, i64({1, 1}, {0}), f32({1, 3}, {0, 0, 0})});
    ADD_FAILURE() << "reduction add accepted at opset 15";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("scatter_nd_reduce_bad"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("opset 15"), std::string::npos) << e.what();
  }
}

TEST(HostileIndexing, ScatterElementsIndexOutOfRange) {
  OneNode m("ScatterElements", "scatter_elements_bad", 3);
  ModelBuilder::attr(m.n, "axis", int64_t{-1});
  expect_error(m, {kData, i64({1, 1}, {-4}), f32({1, 1}, {9})}, {"index -4 is out of range for axis 1"});
  expect_error(m, {kData, i64({1, 1}, {0}), f32({1, 2}, {9, 9})}, {"must have one shape"});
}

TEST(HostileIndexing, OneHotAbsurdDepth) {
  OneNode m("OneHot", "one_hot_bad", 3);
  const Tensor values = f32({2}, {0, 1});
  expect_error(m, {i64({2}, {0, 1}), i64_scalar(int64_t{1} << 60), values}, {"allocation limit"});
  expect_error(m, {i64({2}, {0, 1}), i64_scalar(0), values}, {"depth 0 must be positive"});
  expect_error(m, {i64({2}, {0, 1}), f32({}, {1e30f}), values}, {"depth"});
  expect_error(m, {i64({2}, {0, 1}), f32({}, {std::numeric_limits<float>::quiet_NaN()}), values}, {"depth"});
  expect_error(m, {i64({2}, {0, 1}), i64_scalar(3), f32({3}, {0, 1, 2})}, {"two elements"});
}

TEST(HostileIndexing, RangeAbsurdCount) {
  OneNode m("Range", "range_bad", 3);
  expect_error(m, {i64_scalar(0), i64_scalar(kMax), i64_scalar(1)}, {"allocation limit"});
  expect_error(m, {i64_scalar(kMin), i64_scalar(kMax), i64_scalar(1)}, {"too large"});
  expect_error(m, {i64_scalar(0), i64_scalar(10), i64_scalar(0)}, {"delta is 0"});
  expect_error(m, {f32({}, {0}), f32({}, {1e30f}), f32({}, {1e-30f})}, {"too large"});
  expect_error(m, {f32({}, {0}), f32({}, {std::numeric_limits<float>::infinity()}), f32({}, {1})}, {"too large"});
  expect_error(m, {f32({}, {0}), f32({}, {10}), f32({}, {std::numeric_limits<float>::quiet_NaN()})}, {"NaN"});
}

TEST(HostileIndexing, TileToAbsurdSize) {
  OneNode m("Tile", "tile_bad", 2);
  expect_error(m, {kData, i64({2}, {int64_t{1} << 40, int64_t{1} << 20})}, {"allocation limit"});
  expect_error(m, {kData, i64({2}, {kMax, 2})}, {"overflow"});
  expect_error(m, {kData, i64({2}, {-1, 1})}, {"negative"});
  expect_error(m, {kData, i64({1}, {2})}, {"repeats has 1 entries"});
}

TEST(HostileIndexing, ExpandToAbsurdSize) {
  OneNode m("Expand", "expand_bad", 2);
  expect_error(m, {kData, i64({3}, {int64_t{1} << 40, 2, 3})}, {"allocation limit"});
  expect_error(m, {kData, i64({4}, {kMax, kMax, 1, 3})}, {"overflow"});
  expect_error(m, {kData, i64({2}, {-2, 3})}, {"negative"});
  expect_error(m, {kData, i64({2}, {4, 3})}, {"do not broadcast"});
}

TEST(HostileIndexing, ReshapeWrongCountAndNegativeDims) {
  OneNode m("Reshape", "reshape_bad", 2);
  expect_error(m, {kData, i64({2}, {4, 2})}, {"cannot reshape [2, 3] to [4, 2]"});
  expect_error(m, {kData, i64({2}, {-2, -3})}, {"-2"});
  expect_error(m, {kData, i64({2}, {-1, 4})}, {"cannot infer"});
  expect_error(m, {kData, i64({3}, {kMax, kMax, 1})}, {"cannot reshape"});
  expect_error(m, {kData, i64({3}, {2, 3, 0})}, {"no input dim to copy"});
}

TEST(HostileIndexing, PadAbsurdOrNegativePads) {
  OneNode m("Pad", "pad_bad", 2);
  expect_error(m, {kData, i64({4}, {0, int64_t{1} << 40, 0, 0})}, {"allocation limit"});
  expect_error(m, {kData, i64({4}, {0, kMax, 0, kMax})}, {"overflowing"});
  expect_error(m, {kData, i64({4}, {-3, 0, 0, 0})}, {"negative"});
  expect_error(m, {kData, i64({3}, {0, 0, 0})}, {"pads has 3 entries"});
  OneNode reflect("Pad", "pad_reflect_empty", 2);
  string_attr(reflect.n, "mode", "reflect");
  expect_error(reflect, {f32({0, 2}, {}), i64({4}, {1, 0, 1, 0})}, {"empty dim"});
}

TEST(HostileIndexing, ConstantOfShapeAbsurdOrNegative) {
  OneNode m("ConstantOfShape", "constant_of_shape_bad", 1);
  expect_error(m, {i64({2}, {int64_t{1} << 40, int64_t{1} << 20})}, {"allocation limit"});
  expect_error(m, {i64({2}, {3, -1})}, {"negative"});
}

TEST(HostileIndexing, SplitAndEinsumAndDepthToSpaceMistakes) {
  OneNode split("Split", "split_bad", 2, 2);
  expect_error(split, {kData, i64({2}, {1, 5})}, {"sum to 6"});
  expect_error(split, {kData, i64({2}, {-1, 3})}, {"negative"});
  OneNode einsum("Einsum", "einsum_bad", 2);
  string_attr(einsum.n, "equation", "ij,jk->ik");
  expect_error(einsum, {kData, f32({2, 2}, {1, 2, 3, 4})}, {"size 2, elsewhere 3"});
  OneNode einsum_terms("Einsum", "einsum_terms_bad", 1);
  string_attr(einsum_terms.n, "equation", "ij,jk->ik");
  expect_error(einsum_terms, {kData}, {"2 terms for 1 inputs"});
  OneNode einsum_char("Einsum", "einsum_char_bad", 1);
  string_attr(einsum_char.n, "equation", "i$->i");
  expect_error(einsum_char, {kData}, {"invalid character"});
  OneNode d2s("DepthToSpace", "depth_to_space_bad", 1);
  ModelBuilder::attr(d2s.n, "blocksize", int64_t{1} << 40);  // blocksize^2 overflows int64
  expect_error(d2s, {f32({1, 4, 1, 1}, {1, 2, 3, 4})}, {"blocksize"});
  OneNode s2d("SpaceToDepth", "space_to_depth_bad", 1);
  ModelBuilder::attr(s2d.n, "blocksize", int64_t{1} << 40);  // empty H, W: C * blocksize^2 overflows
  expect_error(s2d, {f32({1, 3, 0, 0}, {})}, {"overflow"});
}

TEST(HostileIndexing, ExtremeValuesThatAreValidDoNotCrash) {
  // Trilu with k at the int64 extremes keeps everything or nothing; Slice with extreme steps.
  OneNode trilu("Trilu", "trilu_extreme", 2);
  auto session = load_for(trilu, {kData, i64_scalar(0)});
  const Tensor none = session->run({kData, i64_scalar(kMax)}).outputs[0];
  const Tensor all = session->run({kData, i64_scalar(kMin)}).outputs[0];
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(none.data<float>()[i], 0.f);
    EXPECT_EQ(all.data<float>()[i], kData.data<float>()[i]);
  }
  OneNode slice("Slice", "slice_extreme", 5);
  const std::vector<Tensor> in{kData, i64({1}, {kMax}), i64({1}, {kMin}), i64({1}, {1}), i64({1}, {kMin})};
  const Tensor y = load_for(slice, in)->run(in).outputs[0];
  EXPECT_EQ(y.shape(), (Shape{2, 1}));
  EXPECT_EQ(y.data<float>()[0], 3.f);
  EXPECT_EQ(y.data<float>()[1], 6.f);
}

}  // namespace
}  // namespace parity
