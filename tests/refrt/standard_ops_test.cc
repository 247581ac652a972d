// The signal, selection, loss, geometry, ROI and random kernels: hostile inputs (bad indices, shapes,
// dtypes, empty tensors) give a parity::Error naming node and op, never a crash; random ops are
// checked by distribution (moments, ranges, frequencies) and seeds by run-to-run equality, never by
// value (the numpy-oracle rows are in cases/signal.py, selection.py, losses.py, image_geometry.py, roi.py).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "model_builder.h"
#include "parity/error.h"
#include "parity/refrt/session.h"

namespace parity {
namespace {

using testing::make;
using testing::ModelBuilder;

Tensor i64(Shape shape, std::vector<int64_t> v) { return make<int64_t>(DType::kInt64, std::move(shape), v); }
Tensor f32(Shape shape, std::vector<float> v) { return make<float>(DType::kFloat32, std::move(shape), v); }
Tensor f32_fill(Shape shape, float v) {
  Tensor t(DType::kFloat32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = v;
  return t;
}

void float_attr(onnx::NodeProto* n, const std::string& name, float v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

// One node `op` named after it, inputs in0.. as graph inputs typed from the run's tensors, outputs y0..
struct OneNode {
  ModelBuilder b;
  onnx::NodeProto* n;
  OneNode(const std::string& op, size_t inputs, size_t outputs = 1, int opset = 18) : b(opset) {
    std::vector<std::string> in, out;
    for (size_t i = 0; i < inputs; ++i) in.push_back("in" + std::to_string(i));
    for (size_t i = 0; i < outputs; ++i) out.push_back("y" + std::to_string(i));
    n = b.node(op, in, out, "bad_" + op);
    for (const auto& o : out) b.output(o);
  }
  std::unique_ptr<refrt::Session> load(const std::vector<Tensor>& inputs) {
    if (b.g().input_size() == 0)
      for (size_t i = 0; i < inputs.size(); ++i) b.input("in" + std::to_string(i), inputs[i].dtype());
    for (size_t i = 0; i < inputs.size(); ++i)  // each run's dtypes (rank left open)
      b.g()
          .mutable_input(static_cast<int>(i))
          ->mutable_type()
          ->mutable_tensor_type()
          ->set_elem_type(static_cast<int>(inputs[i].dtype()));
    return refrt::Session::load_bytes(b.bytes(), "standard_ops.onnx");
  }
  std::vector<Tensor> run(const std::vector<Tensor>& inputs) { return load(inputs)->run(inputs).outputs; }
};

void expect_error(OneNode& m, const std::vector<Tensor>& inputs, const std::string& needle) {
  try {
    m.run(inputs);
    ADD_FAILURE() << m.n->op_type() << ": expected an error containing '" << needle << "'";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.context().node, m.n->name()) << what;
    EXPECT_EQ(e.context().op, m.n->op_type()) << what;
    EXPECT_NE(what.find(needle), std::string::npos) << "missing '" << needle << "' in: " << what;
  }
}

TEST(StandardOpsHostile, SelectionOps) {
  const Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  OneNode compress("Compress", 2);
  ModelBuilder::attr(compress.n, "axis", int64_t{1});
  Tensor cond(DType::kBool, {4}, true);
  expect_error(compress, {x, cond}, "condition has 4 entries");
  expect_error(compress, {x, i64({2}, {1, 0})}, "condition must be bool");
  OneNode rev("ReverseSequence", 2);
  expect_error(rev, {f32({3, 2}, {1, 2, 3, 4, 5, 6}), i64({2}, {4, 1})}, "sequence_lens[0] = 4");
  expect_error(rev, {f32({3, 2}, {1, 2, 3, 4, 5, 6}), i64({3}, {1, 1, 1})}, "sequence_lens must be int64 of shape [2]");
  OneNode unique("Unique", 1);
  ModelBuilder::attr(unique.n, "axis", int64_t{2});
  expect_error(unique, {x}, "axis");
  OneNode det("Det", 1);
  expect_error(det, {x}, "[..., M, M]");
  expect_error(det, {i64({2, 2}, {1, 2, 3, 4})}, "float");
}

TEST(StandardOpsHostile, LossOps) {
  const Tensor logp = f32({2, 3}, {-1, -2, -3, -1, -2, -3});
  OneNode nll("NegativeLogLikelihoodLoss", 2, 1, 13);
  expect_error(nll, {logp, i64({2}, {0, 3})}, "target value 3 at position 1 is outside [0, 3)");
  expect_error(nll, {logp, i64({2}, {-1, 0})}, "target value -1");
  expect_error(nll, {logp, i64({3}, {0, 1, 2})}, "target must be int32/int64 of shape [2]");
  OneNode sce("SoftmaxCrossEntropyLoss", 3, 1, 13);
  expect_error(sce, {logp, i64({2}, {0, 1}), f32({2}, {1, 1})}, "weight must be float32 of shape [3]");
  OneNode empty("NegativeLogLikelihoodLoss", 2, 1, 13);
  ModelBuilder::attr(empty.n, "reduction", int64_t{1});  // an int where a string belongs
  expect_error(empty, {logp, i64({2}, {0, 1})}, "reduction");
}

TEST(StandardOpsHostile, GeometryOps) {
  OneNode col2im("Col2Im", 3);
  expect_error(col2im, {f32_fill({1, 4, 5}, 1), i64({2}, {3, 3}), i64({2}, {2, 2})}, "input must be [N, C * 4, 4]");
  expect_error(col2im, {f32_fill({1, 4, 4}, 1), i64({2}, {3, 3}), i64({2}, {0, 2})}, "must be > 0");
  // The fuzzer's case: block and image sizes whose products wrap int64.
  expect_error(col2im, {f32_fill({1, 4, 4}, 1), i64({2}, {INT64_MAX, 5}), i64({2}, {INT64_MAX / 2, 3})}, "overflow");
  expect_error(col2im, {f32_fill({1, 4, 4}, 1), i64({2}, {INT64_MAX, 3}), i64({2}, {2, 2})}, "overflow");
  expect_error(col2im, {f32_fill({1, 4, 4}, 1), i64({2}, {3, 3}), i64({2}, {4, 2})}, "do not fit");
  OneNode col2im_dilated("Col2Im", 3);
  ModelBuilder::attr(col2im_dilated.n, "dilations", std::vector<int64_t>{INT64_MAX / 2, 1});
  expect_error(col2im_dilated, {f32_fill({1, 6, 4}, 1), i64({2}, {9, 9}), i64({2}, {4, 2})}, "overflow");
  OneNode unpool("MaxUnpool", 2, 1, 11);
  ModelBuilder::attr(unpool.n, "kernel_shape", std::vector<int64_t>{2, 2});
  ModelBuilder::attr(unpool.n, "strides", std::vector<int64_t>{2, 2});
  expect_error(unpool, {f32_fill({1, 1, 1, 1}, 1), i64({1, 1, 1, 1}, {4})}, "index 4 at position 0 is outside [0, 4)");
  expect_error(unpool, {f32_fill({1, 1, 1, 1}, 1), i64({1, 1, 1, 1}, {-1})}, "index -1");
  OneNode crop("CenterCropPad", 2);
  ModelBuilder::attr(crop.n, "axes", std::vector<int64_t>{0, -2});
  expect_error(crop, {f32_fill({2, 3}, 1), i64({2}, {1, 1})}, "listed twice");
  OneNode grid("AffineGrid", 2, 1, 20);
  expect_error(grid, {f32_fill({1, 2, 3}, 1), i64({4}, {2, 1, 4, 4})}, "theta must be [2, 2, 3]");
  // The fuzzer's case: a grid of 2^61 points must be refused before any buffer of it is allocated.
  expect_error(grid, {f32_fill({1, 2, 3}, 1), i64({4}, {1, 1, int64_t{1} << 40, int64_t{1} << 20})},
               "allocation limit");
  OneNode deform("DeformConv", 3, 1, 19);
  expect_error(deform, {f32_fill({1, 1, 4, 4}, 1), f32_fill({1, 1, 2, 2}, 1), f32_fill({1, 8, 2, 2}, 0)},
               "offset must be [1, 8, 3, 3]");
}

TEST(StandardOpsHostile, RoiOps) {
  OneNode nms("NonMaxSuppression", 2, 1, 11);
  expect_error(nms, {f32_fill({1, 3, 4}, 0), f32_fill({1, 1, 2}, 0)}, "boxes must be [batches, boxes, 4]");
  OneNode align("RoiAlign", 3, 1, 16);
  expect_error(align, {f32_fill({1, 1, 4, 4}, 1), f32({1, 4}, {0, 0, 2, 2}), i64({1}, {1})}, "batch_indices[0] = 1");
  expect_error(align, {f32_fill({1, 1, 4, 4}, 1), f32({1, 4}, {0, NAN, 2, 2}), i64({1}, {0})}, "non-finite");
  OneNode pool("MaxRoiPool", 2, 1, 18);
  ModelBuilder::attr(pool.n, "pooled_shape", std::vector<int64_t>{2, 2});
  expect_error(pool, {f32_fill({1, 1, 4, 4}, 1), f32({1, 5}, {2, 0, 0, 2, 2})}, "batch index");
  expect_error(pool, {f32_fill({1, 1, 4, 4}, 1), f32({1, 5}, {0, INFINITY, 0, 2, 2})}, "non-finite");
}

TEST(StandardOpsHostile, SignalOps) {
  OneNode dft("DFT", 1, 1, 17);
  ModelBuilder::attr(dft.n, "axis", int64_t{2});
  expect_error(dft, {f32_fill({1, 4, 2}, 1)}, "axis must not be the last dim");
  expect_error(dft, {f32_fill({1, 4, 3}, 1)}, "[..., n, 1] (real) or [..., n, 2] (complex)");
  OneNode stft("STFT", 4, 1, 17);
  expect_error(stft, {f32_fill({1, 8, 1}, 1), i64({}, {2}), f32_fill({4}, 1), i64({}, {5})}, "frame_length 5 differs");
  OneNode stft2("STFT", 2, 1, 17);
  expect_error(stft2, {f32_fill({1, 8, 1}, 1), i64({}, {0})}, "frame_step must be > 0");
  OneNode hann("HannWindow", 1, 1, 17);
  expect_error(hann, {i64({}, {-3})}, "size must be >= 0");
  expect_error(hann, {i64({2}, {3, 3})}, "size must hold one value");
  expect_error(hann, {i64({}, {int64_t{184549376}})}, "is too large (at most 2^24)");  // a fuzzer's model
  OneNode mel("MelWeightMatrix", 5, 1, 17);
  expect_error(mel, {i64({}, {8}), i64({}, {64}), i64({}, {8000}), f32({}, {0}), f32({}, {9000})}, "falls outside");
}

// ---- random ops: distributions, never values
struct Moments {
  double mean = 0, var = 0, min = INFINITY, max = -INFINITY;
};
Moments moments(const Tensor& t) {
  Moments m;
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) {
    const double v = t.dtype() == DType::kFloat64 ? t.data<double>()[i] : t.data<float>()[i];
    m.mean += v / static_cast<double>(n);
    m.min = std::min(m.min, v);
    m.max = std::max(m.max, v);
  }
  for (int64_t i = 0; i < n; ++i) {
    const double v = t.dtype() == DType::kFloat64 ? t.data<double>()[i] : t.data<float>()[i];
    m.var += (v - m.mean) * (v - m.mean) / static_cast<double>(n - 1);
  }
  return m;
}

constexpr int64_t kDraws = 40000;

TEST(RandomOps, NormalMomentsAndSeed) {
  OneNode m("RandomNormal", 0, 1, 18);
  ModelBuilder::attr(m.n, "shape", std::vector<int64_t>{200, kDraws / 200});
  float_attr(m.n, "mean", 2.0f);
  float_attr(m.n, "scale", 0.5f);
  float_attr(m.n, "seed", 7.0f);
  auto s = m.load({});
  const Tensor a = s->run({}).outputs[0], b = s->run({}).outputs[0];
  ASSERT_EQ(a.shape(), (Shape{200, kDraws / 200}));
  EXPECT_TRUE(a.bitwise_equal(b)) << "a seeded op draws the same values every run";
  const Moments mo = moments(a);
  EXPECT_NEAR(mo.mean, 2.0, 5 * 0.5 / std::sqrt(kDraws));  // 5 standard errors
  EXPECT_NEAR(std::sqrt(mo.var), 0.5, 0.5 * 0.03);
}

TEST(RandomOps, UniformLikeRangeAndUnseededRunsDiffer) {
  OneNode m("RandomUniformLike", 1, 1, 18);
  float_attr(m.n, "low", -3.0f);
  float_attr(m.n, "high", 5.0f);
  ModelBuilder::attr(m.n, "dtype", int64_t{11});
  const Tensor like = f32_fill({kDraws}, 0);
  auto s = m.load({like});
  const Tensor a = s->run({like}).outputs[0], b = s->run({like}).outputs[0];
  ASSERT_EQ(a.dtype(), DType::kFloat64);
  EXPECT_FALSE(a.bitwise_equal(b)) << "without a seed, runs draw fresh values";
  const Moments mo = moments(a);
  EXPECT_GE(mo.min, -3.0);
  EXPECT_LT(mo.max, 5.0);
  EXPECT_NEAR(mo.mean, 1.0, 5 * 8 / std::sqrt(12.0 * kDraws));
  EXPECT_NEAR(mo.var, 64 / 12.0, 64 / 12.0 * 0.03);
}

TEST(RandomOps, BernoulliFrequencyAndRange) {
  OneNode m("Bernoulli", 1, 1, 18);
  float_attr(m.n, "seed", 3.0f);
  const Tensor p = f32_fill({kDraws}, 0.3f);
  const Tensor y = m.run({p})[0];
  const Moments mo = moments(y);
  EXPECT_EQ(mo.min, 0.0);
  EXPECT_EQ(mo.max, 1.0);
  EXPECT_NEAR(mo.mean, 0.3, 5 * std::sqrt(0.21 / kDraws));
  OneNode bad("Bernoulli", 1, 1, 18);
  expect_error(bad, {f32({2}, {0.5f, 1.5f})}, "outside [0, 1]");
}

TEST(RandomOps, TrainingDropoutKeepsAndScales) {
  OneNode m("Dropout", 3, 2, 13);
  ModelBuilder::attr(m.n, "seed", int64_t{5});
  const Tensor x = f32_fill({kDraws}, 2.0f);
  Tensor ratio(DType::kFloat32, {}), training(DType::kBool, {});
  *ratio.data<float>() = 0.25f;
  *training.data<uint8_t>() = 1;
  auto s = m.load({x, ratio, training});
  const auto a = s->run({x, ratio, training}).outputs, b = s->run({x, ratio, training}).outputs;
  EXPECT_TRUE(a[0].bitwise_equal(b[0])) << "a seeded Dropout draws the same mask every run";
  ASSERT_EQ(a[1].dtype(), DType::kBool);
  double kept = 0;
  for (int64_t i = 0; i < kDraws; ++i) {
    const float y = a[0].data<float>()[i];
    const bool k = a[1].data<uint8_t>()[i] != 0;
    ASSERT_EQ(y, k ? 2.0f / 0.75f : 0.0f) << "element " << i;  // kept ones scaled by 1 / (1 - ratio)
    kept += k;
  }
  EXPECT_NEAR(kept / kDraws, 0.75, 5 * std::sqrt(0.75 * 0.25 / kDraws));
  *ratio.data<float>() = 1.5f;
  expect_error(m, {x, ratio, training}, "outside [0, 1]");
}

TEST(RandomOps, MultinomialFrequencies) {
  OneNode m("Multinomial", 1, 1, 18);
  ModelBuilder::attr(m.n, "sample_size", kDraws);
  ModelBuilder::attr(m.n, "dtype", int64_t{7});
  float_attr(m.n, "seed", 1.0f);
  const std::vector<double> p = {0.2, 0.3, 0.5};
  const Tensor logits = f32({1, 3}, {std::log(0.2f) + 4, std::log(0.3f) + 4, std::log(0.5f) + 4});  // unnormalised
  const Tensor y = m.run({logits})[0];
  ASSERT_EQ(y.shape(), (Shape{1, kDraws}));
  std::vector<double> freq(3, 0);
  for (int64_t i = 0; i < kDraws; ++i) {
    const int64_t k = y.data<int64_t>()[i];
    ASSERT_TRUE(k >= 0 && k < 3) << k;
    freq[k] += 1.0 / kDraws;
  }
  for (size_t k = 0; k < 3; ++k) EXPECT_NEAR(freq[k], p[k], 5 * std::sqrt(p[k] * (1 - p[k]) / kDraws));
  OneNode bad("Multinomial", 1, 1, 18);
  expect_error(bad, {f32({3}, {0, 0, 0})}, "input must be [batch, classes >= 1]");
}

}  // namespace
}  // namespace parity
