// refrt kernels against naive reference loops written here (independent of the kernels' code paths:
// no broadcast helper, no BLAS), over odd, empty, scalar and broadcast shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "model_builder.h"
#include "parity/error.h"
#include "parity/refrt/session.h"

namespace parity {
namespace {

using testing::make;
using testing::ModelBuilder;
using testing::ramp;

Tensor run1(ModelBuilder& b, const std::vector<Tensor>& inputs) {
  auto s = refrt::Session::load_bytes(b.bytes(), "test.onnx");
  return s->run(inputs).outputs.at(0);
}

// Index of output element `flat` in an input of shape `in` broadcast to `out` (numpy rules).
int64_t broadcast_index(int64_t flat, const Shape& out, const Shape& in) {
  int64_t idx = 0, stride = 1;
  for (int64_t d = static_cast<int64_t>(out.size()) - 1; d >= 0; --d) {
    const int64_t coord = flat % out[static_cast<size_t>(d)];
    flat /= out[static_cast<size_t>(d)];
    const int64_t id = d - static_cast<int64_t>(out.size() - in.size());
    if (id < 0) continue;
    const int64_t size = in[static_cast<size_t>(id)];
    idx += (size == 1 ? 0 : coord) * stride;
    stride *= size;
  }
  return idx;
}

struct BinaryCase {
  Shape a, b, out;
};

class AddBroadcast : public ::testing::TestWithParam<BinaryCase> {};

TEST_P(AddBroadcast, MatchesNaiveLoop) {
  const auto& c = GetParam();
  for (const std::string op : {"Add", "Sub", "Mul", "Div"}) {
    ModelBuilder b;
    b.input("a", DType::kFloat32);
    b.input("b", DType::kFloat32);
    b.node(op, {"a", "b"}, {"y"});
    b.output("y");
    const auto va = ramp(checked_numel(c.a), 3), vb = ramp(checked_numel(c.b), 7);
    std::vector<float> vb_safe = vb;
    for (auto& x : vb_safe) x = x == 0 ? 0.5f : x;
    const Tensor y = run1(b, {make(DType::kFloat32, c.a, va), make(DType::kFloat32, c.b, vb_safe)});
    ASSERT_EQ(y.shape(), c.out) << op;
    for (int64_t i = 0; i < y.numel(); ++i) {
      const float x1 = va[static_cast<size_t>(broadcast_index(i, c.out, c.a))];
      const float x2 = vb_safe[static_cast<size_t>(broadcast_index(i, c.out, c.b))];
      const float want = op == "Add" ? x1 + x2 : op == "Sub" ? x1 - x2 : op == "Mul" ? x1 * x2 : x1 / x2;
      ASSERT_FLOAT_EQ(y.data<float>()[i], want) << op << " element " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, AddBroadcast,
                         ::testing::Values(BinaryCase{{2, 3}, {2, 3}, {2, 3}}, BinaryCase{{2, 3}, {3}, {2, 3}},
                                           BinaryCase{{2, 1, 3}, {4, 1}, {2, 4, 3}}, BinaryCase{{}, {2, 2}, {2, 2}},
                                           BinaryCase{{0, 3}, {3}, {0, 3}}, BinaryCase{{5, 7}, {5, 1}, {5, 7}},
                                           BinaryCase{{1, 1}, {}, {1, 1}}, BinaryCase{{3, 1, 5}, {1, 4, 1}, {3, 4, 5}}),
                         [](const ::testing::TestParamInfo<BinaryCase>& info) {
                           auto dims = [](const Shape& s) {
                             std::string out = "s";
                             for (int64_t d : s) out += "_" + std::to_string(d);
                             return out;
                           };
                           return dims(info.param.a) + "_by_" + dims(info.param.b);
                         });

TEST(Kernels, IntegerDivTruncatesTowardZero) {
  ModelBuilder b;
  b.input("a", DType::kInt64);
  b.input("b", DType::kInt64);
  b.node("Div", {"a", "b"}, {"y"});
  b.output("y");
  const Tensor y =
      run1(b, {make<int64_t>(DType::kInt64, {4}, {-7, 7, -7, 6}), make<int64_t>(DType::kInt64, {4}, {2, -2, -2, 4})});
  EXPECT_EQ(std::vector<int64_t>(y.data<int64_t>(), y.data<int64_t>() + 4), (std::vector<int64_t>{-3, -3, 3, 1}));
}

TEST(Kernels, SigmoidIsStableForLargeInputs) {
  ModelBuilder b;
  b.input("x", DType::kFloat32);
  b.node("Sigmoid", {"x"}, {"y"});
  b.output("y");
  const Tensor y = run1(b, {make<float>(DType::kFloat32, {3}, {-1000.f, 0.f, 1000.f})});
  EXPECT_EQ(y.data<float>()[0], 0.f);
  EXPECT_EQ(y.data<float>()[1], 0.5f);
  EXPECT_EQ(y.data<float>()[2], 1.f);
}

std::vector<float> naive_matmul(const std::vector<float>& a, const std::vector<float>& b, int64_t m, int64_t k,
                                int64_t n) {
  std::vector<float> c(static_cast<size_t>(m * n), 0.f);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < k; ++p)
        acc += double(a[static_cast<size_t>(i * k + p)]) * b[static_cast<size_t>(p * n + j)];
      c[static_cast<size_t>(i * n + j)] = static_cast<float>(acc);
    }
  return c;
}

TEST(Kernels, MatMulBatchBroadcastAndVectors) {
  struct Case {
    Shape a, b, out;
  };
  for (const Case& c :
       {Case{{2, 3}, {3, 4}, {2, 4}}, Case{{2, 1, 3, 4}, {5, 4, 2}, {2, 5, 3, 2}}, Case{{3}, {3, 4}, {4}},
        Case{{2, 3}, {3}, {2}}, Case{{0, 3}, {3, 2}, {0, 2}}, Case{{17, 33}, {33, 9}, {17, 9}}}) {
    ModelBuilder b;
    b.input("a", DType::kFloat32);
    b.input("b", DType::kFloat32);
    b.node("MatMul", {"a", "b"}, {"y"});
    b.output("y");
    const auto va = ramp(checked_numel(c.a), 11), vb = ramp(checked_numel(c.b), 13);
    const Tensor y = run1(b, {make(DType::kFloat32, c.a, va), make(DType::kFloat32, c.b, vb)});
    ASSERT_EQ(y.shape(), c.out);
    // Reference: promote vectors, broadcast the batch by hand, multiply each pair of matrices.
    Shape a = c.a, bb = c.b;
    if (a.size() == 1) a.insert(a.begin(), 1);
    if (bb.size() == 1) bb.push_back(1);
    const int64_t m = a[a.size() - 2], k = a.back(), n = bb.back();
    const Shape batch_a(a.begin(), a.end() - 2), batch_b(bb.begin(), bb.end() - 2);
    Shape batch(std::max(batch_a.size(), batch_b.size()), 1);
    for (size_t i = 0; i < batch.size(); ++i) {
      const int64_t ia = static_cast<int64_t>(i) - static_cast<int64_t>(batch.size() - batch_a.size());
      const int64_t ib = static_cast<int64_t>(i) - static_cast<int64_t>(batch.size() - batch_b.size());
      batch[i] =
          std::max(ia >= 0 ? batch_a[static_cast<size_t>(ia)] : 1, ib >= 0 ? batch_b[static_cast<size_t>(ib)] : 1);
    }
    for (int64_t bi = 0; bi < checked_numel(batch); ++bi) {
      const int64_t oa = broadcast_index(bi, batch, batch_a), ob = broadcast_index(bi, batch, batch_b);
      const std::vector<float> ma(va.begin() + oa * m * k, va.begin() + (oa + 1) * m * k);
      const std::vector<float> mb(vb.begin() + ob * k * n, vb.begin() + (ob + 1) * k * n);
      const auto want = naive_matmul(ma, mb, m, k, n);
      for (int64_t i = 0; i < m * n; ++i)
        ASSERT_NEAR(y.data<float>()[bi * m * n + i], want[static_cast<size_t>(i)], 1e-5);
    }
  }
}

TEST(Kernels, GemmTransBWithBiasAlphaBeta) {
  ModelBuilder b;
  b.input("a", DType::kFloat32);
  b.input("w", DType::kFloat32);
  b.input("c", DType::kFloat32);
  auto* n = b.node("Gemm", {"a", "w", "c"}, {"y"});
  ModelBuilder::attr(n, "transB", int64_t{1});
  auto* alpha = n->add_attribute();
  alpha->set_name("alpha");
  alpha->set_type(onnx::AttributeProto::FLOAT);
  alpha->set_f(0.5f);
  b.output("y");
  const int64_t m = 5, k = 7, nn = 3;
  const auto va = ramp(m * k, 2), vw = ramp(nn * k, 4), vc = ramp(nn, 6);
  const Tensor y =
      run1(b, {make(DType::kFloat32, {m, k}, va), make(DType::kFloat32, {nn, k}, vw), make(DType::kFloat32, {nn}, vc)});
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < nn; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < k; ++p)
        acc += double(va[static_cast<size_t>(i * k + p)]) * vw[static_cast<size_t>(j * k + p)];
      EXPECT_NEAR(y.data<float>()[i * nn + j], 0.5 * acc + vc[static_cast<size_t>(j)], 1e-5);
    }
}

TEST(Kernels, SliceNegativeStepsAndClamping) {
  auto slice = [](std::vector<int64_t> starts, std::vector<int64_t> ends, std::vector<int64_t> steps) {
    ModelBuilder b;
    b.input("x", DType::kInt64);
    b.initializer("s", make(DType::kInt64, {1}, starts));
    b.initializer("e", make(DType::kInt64, {1}, ends));
    b.initializer("ax", make<int64_t>(DType::kInt64, {1}, {0}));
    b.initializer("st", make(DType::kInt64, {1}, steps));
    b.node("Slice", {"x", "s", "e", "ax", "st"}, {"y"});
    b.output("y");
    std::vector<int64_t> x(10);
    for (int i = 0; i < 10; ++i) x[static_cast<size_t>(i)] = i;
    const Tensor y = run1(b, {make(DType::kInt64, {10}, x)});
    return std::vector<int64_t>(y.data<int64_t>(), y.data<int64_t>() + y.numel());
  };
  // Expected values: Python's list slicing, e.g. list(range(10))[-1::-2].
  EXPECT_EQ(slice({-1}, {std::numeric_limits<int64_t>::min()}, {-2}), (std::vector<int64_t>{9, 7, 5, 3, 1}));
  EXPECT_EQ(slice({2}, {std::numeric_limits<int64_t>::max()}, {3}), (std::vector<int64_t>{2, 5, 8}));
  EXPECT_EQ(slice({-3}, {100}, {1}), (std::vector<int64_t>{7, 8, 9}));
  EXPECT_EQ(slice({8}, {2}, {1}), (std::vector<int64_t>{}));
  EXPECT_EQ(slice({8}, {2}, {-3}), (std::vector<int64_t>{8, 5}));
}

TEST(Kernels, ConcatTransposeReshapeGather) {
  ModelBuilder b;
  b.input("a", DType::kFloat32);
  b.input("c", DType::kFloat32);
  ModelBuilder::attr(b.node("Concat", {"a", "c"}, {"cat"}), "axis", int64_t{-1});               // (2,5)
  ModelBuilder::attr(b.node("Transpose", {"cat"}, {"t"}), "perm", std::vector<int64_t>{1, 0});  // (5,2)
  b.initializer("shape", make<int64_t>(DType::kInt64, {2}, {0, -1}));
  b.node("Reshape", {"t", "shape"}, {"r"});  // (5,2)
  b.initializer("idx", make<int64_t>(DType::kInt64, {2}, {-1, 0}));
  b.node("Gather", {"r", "idx"}, {"y"});  // rows 4, 0
  b.output("y");
  const Tensor y = run1(b, {make<float>(DType::kFloat32, {2, 2}, {0, 1, 5, 6}),
                            make<float>(DType::kFloat32, {2, 3}, {2, 3, 4, 7, 8, 9})});
  // cat = [[0,1,2,3,4],[5,6,7,8,9]]; t row 4 = [4, 9], row 0 = [0, 5].
  ASSERT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(std::vector<float>(y.data<float>(), y.data<float>() + 4), (std::vector<float>{4, 9, 0, 5}));
}

TEST(Kernels, GatherIndexOutOfRangeNamesTheNode) {
  ModelBuilder b;
  b.input("x", DType::kFloat32);
  b.initializer("idx", make<int64_t>(DType::kInt64, {1}, {3}));
  b.node("Gather", {"x", "idx"}, {"y"}, "my_gather");
  b.output("y");
  try {
    run1(b, {make<float>(DType::kFloat32, {3}, {1, 2, 3})});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("my_gather"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace parity
