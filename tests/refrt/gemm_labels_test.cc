// The implementation label a GEMM-shaped node reports is the path that ran: for every shape class (one row,
// many rows, transA, transB, leading dims other than K, tiny, large, float64, batched, constant weights,
// convolutions, int8, bfloat16), the label is compared with the backends that counted a call while it ran
// (backend_probe.h: a counter inside each backend's entry point, apart from any label). Run under every CPU
// class by scripts/cpu_classes.py, so each class's branches are checked where they are taken.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "../../refrt/src/backend_probe.h"
#include "../../refrt/src/gemm.h"
#include "../../refrt/src/thread_pool.h"
#include "model_builder.h"
#include "parity/float16.h"
#include "parity/refrt/session.h"

namespace parity::refrt {
namespace {

using testing::make;
using testing::ModelBuilder;
using testing::ramp;

// Backends a label names. Labels are backend names joined by " + " ("float32 " in front when a half-precision
// node computed in float32). `onednn_primitive` is what a oneDNN name other than sgemm means for this node: a
// matmul primitive for MatMul/Gemm (counted), a convolution primitive for Conv (not counted: kNone).
BackendSet label_backends(std::string label, Backend onednn_primitive, std::string* unknown) {
  if (label.rfind("float32 ", 0) == 0) label = label.substr(8);
  BackendSet set = 0;
  size_t start = 0;
  while (start <= label.size()) {
    const size_t end = std::min(label.find(" + ", start), label.size());
    const std::string part = label.substr(start, end - start);
    start = end + 3;
    bool known = false;
    for (size_t i = 1; i < kBackendCount; ++i) {
      const auto b = static_cast<Backend>(i);
      const std::string name = backend_probe::name(b);
      if (b == Backend::kRefrtLoop || b == Backend::kOnednnMatmul || b == Backend::kRefrtQgemm) continue;
      if (part.rfind(name + " ", 0) == 0 || part == name) {
        set |= backend_bit(b);
        known = true;
      }
    }
    if (known) continue;
    if (part.rfind("onednn ", 0) == 0) {
      set |= backend_bit(onednn_primitive);
    } else if (part.rfind("refrt", 0) != 0) {  // "refrt", "refrt im2col conv-gemm (avx2)", "refrt weight-only ..."
      *unknown += "'" + part + "' ";
    }
  }
  return set;
}

// The library backends that counted calls between two snapshots (refrt's own loops and int8 kernel are
// refrt: a label names them as refrt).
BackendSet probed(const std::array<uint64_t, kBackendCount>& before, const std::array<uint64_t, kBackendCount>& after) {
  BackendSet set = 0;
  for (size_t i = 1; i < kBackendCount; ++i) {
    const auto b = static_cast<Backend>(i);
    if (b == Backend::kRefrtLoop || b == Backend::kRefrtQgemm) continue;
    if (after[i] != before[i]) set |= backend_bit(b);
  }
  return set;
}

std::string names(BackendSet set) {
  std::string out;
  for (size_t i = 1; i < kBackendCount; ++i)
    if (set & backend_bit(static_cast<Backend>(i)))
      out += std::string(out.empty() ? "" : ", ") + backend_probe::name(static_cast<Backend>(i));
  return out.empty() ? "(none)" : out;
}

class ProbeScope {
 public:
  ProbeScope() { backend_probe::enable(true); }
  ~ProbeScope() { backend_probe::enable(false); }
};

// --- pool_gemm / gemm called directly: every argument combination, including those no node produces ---

struct Shape3 {
  const char* what;
  bool ta, tb;
  int64_t m, n, k, lda_extra, ldb_extra;  // leading dims = the minimum + extra
};

template <typename T>
void check_direct(const Shape3& s, const ThreadPool* pool) {
  const int64_t a_rows = s.ta ? s.k : s.m, a_cols = s.ta ? s.m : s.k;
  const int64_t b_rows = s.tb ? s.n : s.k, b_cols = s.tb ? s.k : s.n;
  const int64_t lda = a_cols + s.lda_extra, ldb = b_cols + s.ldb_extra, ldc = s.n;
  const std::vector<float> ra = ramp(a_rows * lda, 3), rb = ramp(b_rows * ldb, 5);
  std::vector<T> a(ra.begin(), ra.end()), b(rb.begin(), rb.end()), c(static_cast<size_t>(s.m * ldc), T(0));
  KernelIO io;
  io.pool = pool;
  const auto before = backend_probe::counts();
  const BackendSet returned =
      pool_gemm<T>(io, s.ta, s.tb, s.m, s.n, s.k, T(1), a.data(), lda, b.data(), ldb, T(0), c.data(), ldc);
  const auto after = backend_probe::counts();
  std::string unknown;
  const std::string label(backend_label(returned));
  const std::string where = std::string(s.what) + (std::is_same_v<T, float> ? " float32" : " float64") +
                            (pool ? " pool " + std::to_string(pool->size()) : " no pool") + ": label '" + label +
                            "', ran " + names(probed(before, after));
  EXPECT_FALSE(label.empty()) << where;
  EXPECT_EQ(label_backends(label, Backend::kOnednnMatmul, &unknown), probed(before, after)) << where;
  EXPECT_TRUE(unknown.empty()) << where << " unknown parts " << unknown;
  // The product itself, against a plain double loop (the oracle).
  double worst = 0;
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j) {
      double ref = 0;
      for (int64_t p = 0; p < s.k; ++p)
        ref += static_cast<double>(s.ta ? a[p * lda + i] : a[i * lda + p]) *
               static_cast<double>(s.tb ? b[j * ldb + p] : b[p * ldb + j]);
      worst = std::max(worst, std::abs(ref - static_cast<double>(c[i * ldc + j])));
    }
  EXPECT_LE(worst, 1e-3 * std::sqrt(static_cast<double>(std::max<int64_t>(s.k, 1)))) << where;
}

const std::vector<Shape3>& direct_shapes() {
  static const std::vector<Shape3> shapes = {
      {"m=1", false, false, 1, 512, 256, 0, 0},
      {"m=1 transA lda=3", true, false, 1, 512, 256, 2, 0},  // A's one row is a strided column
      {"m=1 transA lda=1", true, false, 1, 512, 256, 0, 0},
      {"m=1 transB", false, true, 1, 512, 256, 0, 0},
      {"m=1 small", false, false, 1, 16, 8, 0, 0},
      {"m>1", false, false, 64, 512, 256, 0, 0},
      {"m>1 lda!=k", false, false, 64, 512, 256, 7, 3},
      {"transA", true, false, 64, 512, 256, 0, 0},
      {"transB", false, true, 64, 512, 256, 0, 0},
      {"transA transB lda!=k", true, true, 48, 96, 200, 5, 1},
      {"small", false, false, 4, 16, 8, 0, 0},
      {"small transA", true, false, 4, 16, 8, 0, 0},
      {"n=1", false, false, 300, 1, 256, 0, 0},
      {"n=1 transB", false, true, 300, 1, 256, 0, 0},
      {"k=0", false, false, 8, 8, 0, 0, 0},
      {"large", false, false, 256, 256, 256, 0, 0},
  };
  return shapes;
}

TEST(GemmLabels, DirectCallsNameTheBackendsThatRan) {
  ProbeScope probe;
  ThreadPool pool(2);
  for (const Shape3& s : direct_shapes())
    for (const ThreadPool* p : {static_cast<const ThreadPool*>(nullptr), static_cast<const ThreadPool*>(&pool)}) {
      check_direct<float>(s, p);
      check_direct<double>(s, p);
    }
}

// refrt_half_gemv (a half KV cache read in place by the fused attention) promises refrt_sgemv's sums on the widened
// matrix, bit for bit, so that a decode step's answer does not depend on which of the two ran. Both layouts, both
// dtypes, row and column counts with tails past the 8-lane vectors, lda past cols, beta 0 and 1; and the values
// against a double loop (the oracle), so that two equally wrong kernels cannot pass.
TEST(GemmLabels, HalfGemvSumsAsTheFloat32GemvOnTheWidenedMatrix) {
  for (const DType dt : {DType::kBFloat16, DType::kFloat16}) {
    if (!refrt_half_gemv_available(dt)) {
      // Below refrt's AVX2 level (or float16 without F16C) the attention widens its key blocks instead.
      EXPECT_FALSE(refrt_sgemv_available() && dt == DType::kBFloat16) << "bfloat16 needs only the AVX2 level";
      continue;
    }
    for (const bool trans : {false, true})
      for (const auto& [rows, cols, extra] :
           std::vector<std::array<int64_t, 3>>{{257, 64, 0}, {13, 37, 5}, {64, 700, 3}}) {
        const int64_t lda = cols + extra;
        std::vector<uint16_t> a(static_cast<size_t>(rows * lda));
        std::vector<float> wide(a.size());
        const std::vector<float> values = ramp(static_cast<int64_t>(a.size()), 11);
        for (size_t i = 0; i < a.size(); ++i) {
          a[i] = dt == DType::kBFloat16 ? float_to_bf16(values[i]) : float_to_half(values[i]);
          wide[i] = dt == DType::kBFloat16 ? bf16_to_float(a[i]) : half_to_float(a[i]);
        }
        const std::vector<float> x = ramp(trans ? rows : cols, 3);
        for (const float beta : {0.0f, 1.0f}) {
          std::vector<float> y_half(static_cast<size_t>(trans ? cols : rows), 0.5f), y_float = y_half;
          const ProbeScope probe;  // counts from zero
          refrt_half_gemv(dt, trans, rows, cols, 0.75f, a.data(), lda, x.data(), beta, y_half.data());
          EXPECT_EQ(backend_probe::counts()[static_cast<size_t>(Backend::kRefrtHalfGemv)], 1u);
          refrt_sgemv(trans, rows, cols, 0.75f, wide.data(), lda, x.data(), beta, y_float.data());
          const std::string where = std::string(dt == DType::kBFloat16 ? "bfloat16" : "float16") +
                                    (trans ? " trans " : " ") + std::to_string(rows) + "x" + std::to_string(cols) +
                                    " beta " + std::to_string(beta);
          for (size_t i = 0; i < y_half.size(); ++i) {
            ASSERT_EQ(y_half[i], y_float[i]) << where << " element " << i;
            double ref = 0.5 * beta;
            for (int64_t r = 0; r < (trans ? rows : cols); ++r) {
              const size_t at = trans ? static_cast<size_t>(r * lda) + i : i * static_cast<size_t>(lda) + r;
              ref += 0.75 * static_cast<double>(wide[at]) * static_cast<double>(x[static_cast<size_t>(r)]);
            }
            ASSERT_NEAR(y_half[i], ref, 1e-4 * std::sqrt(static_cast<double>(rows + cols)))
                << where << " element " << i;
          }
        }
      }
  }
}

// --- nodes, through a session's profile ---

struct NodeCase {
  std::string name;
  std::string model;
  std::vector<Tensor> inputs;
  std::string node;
  Backend onednn_primitive = Backend::kOnednnMatmul;
  bool int8 = false;
};

Tensor random_tensor(DType dtype, Shape shape, uint32_t seed) {
  const std::vector<float> v = ramp(checked_numel(shape), seed);
  Tensor t(dtype, shape);
  for (size_t i = 0; i < v.size(); ++i) {
    if (dtype == DType::kFloat32) t.data<float>()[i] = v[i];
    if (dtype == DType::kFloat64) t.data<double>()[i] = v[i];
    if (dtype == DType::kBFloat16) static_cast<uint16_t*>(t.mutable_raw())[i] = float_to_bf16(v[i]);
  }
  return t;
}

// One MatMul (or Gemm with attributes); `constant_b`: B is an initializer (weights), else a graph input.
NodeCase product(const std::string& name, const std::string& op, DType dtype, Shape a, Shape b, bool constant_b,
                 int64_t trans_a = 0, int64_t trans_b = 0) {
  ModelBuilder mb;
  mb.input("a", dtype, a);
  if (!constant_b) mb.input("b", dtype, b);
  if (constant_b) mb.initializer("b", random_tensor(dtype, b, 11));
  auto* n = mb.node(op, {"a", "b"}, {"y"}, "product");
  if (op == "Gemm") {
    ModelBuilder::attr(n, "transA", trans_a);
    ModelBuilder::attr(n, "transB", trans_b);
  }
  mb.output("y");
  NodeCase c{name, mb.bytes(), {random_tensor(dtype, a, 7)}, "product"};
  if (!constant_b) c.inputs.push_back(random_tensor(dtype, b, 9));
  return c;
}

NodeCase conv(const std::string& name, Shape x, Shape w, std::vector<int64_t> pads) {
  ModelBuilder mb;
  mb.input("x", DType::kFloat32, x);
  mb.initializer("w", random_tensor(DType::kFloat32, w, 13));
  auto* n = mb.node("Conv", {"x", "w"}, {"y"}, "product");
  ModelBuilder::attr(n, "pads", pads);
  mb.output("y");
  return {name, mb.bytes(), {random_tensor(DType::kFloat32, x, 7)}, "product", Backend::kNone};
}

// x (float32) -> QuantizeLinear/DequantizeLinear -> MatMul with int8 weights -> QuantizeLinear/DequantizeLinear:
// fused at load into an integer product (oneDNN's exact int8 kernel or refrt's own).
NodeCase qdq_matmul(const std::string& name, int64_t m) {
  ModelBuilder mb(13);
  mb.input("x", DType::kFloat32, {m, 256});
  mb.initializer("xs", make<float>(DType::kFloat32, {}, {0.02f}));
  mb.initializer("xz", make<uint8_t>(DType::kUInt8, {}, {128}));
  std::vector<int8_t> w(256 * 512);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>(static_cast<int>(i * 37 % 255) - 127);
  mb.initializer("w", make<int8_t>(DType::kInt8, {256, 512}, w));
  mb.initializer("ws", make<float>(DType::kFloat32, {512}, std::vector<float>(512, 0.01f)));
  mb.initializer("ys", make<float>(DType::kFloat32, {}, {0.05f}));
  mb.initializer("yz", make<uint8_t>(DType::kUInt8, {}, {128}));
  mb.node("QuantizeLinear", {"x", "xs", "xz"}, {"xq"}, "qx");
  mb.node("DequantizeLinear", {"xq", "xs", "xz"}, {"xf"}, "dqx");
  ModelBuilder::attr(mb.node("DequantizeLinear", {"w", "ws"}, {"wf"}, "dqw"), "axis", 1);
  mb.node("MatMul", {"xf", "wf"}, {"acc"}, "product");
  mb.node("QuantizeLinear", {"acc", "ys", "yz"}, {"yq"}, "qy");
  mb.node("DequantizeLinear", {"yq", "ys", "yz"}, {"y"}, "dqy");
  mb.output("y");
  NodeCase c{name, mb.bytes(), {random_tensor(DType::kFloat32, {m, 256}, 7)}, "product"};
  c.int8 = true;
  return c;
}

// Nodes whose kernels call GEMMs inside their own loops: Attention's two products per head, ConvTranspose's
// columns, the recurrent cells' input and recurrence products.
NodeCase attention(const std::string& name, int64_t seq) {
  ModelBuilder mb(23);
  for (const char* v : {"q", "k", "v"}) mb.input(v, DType::kFloat32, {1, 2, seq, 32});
  mb.node("Attention", {"q", "k", "v"}, {"y"}, "product");
  mb.output("y");
  NodeCase c{name, mb.bytes(), {}, "product", Backend::kNone};
  for (uint32_t seed : {3u, 5u, 7u}) c.inputs.push_back(random_tensor(DType::kFloat32, {1, 2, seq, 32}, seed));
  return c;
}

NodeCase conv_transpose(const std::string& name) {
  ModelBuilder mb;
  mb.input("x", DType::kFloat32, {1, 16, 8, 8});
  mb.initializer("w", random_tensor(DType::kFloat32, {16, 8, 3, 3}, 13));
  mb.node("ConvTranspose", {"x", "w"}, {"y"}, "product");
  mb.output("y");
  return {name, mb.bytes(), {random_tensor(DType::kFloat32, {1, 16, 8, 8}, 7)}, "product", Backend::kNone};
}

NodeCase recurrent(const std::string& op, int64_t gates) {
  const int64_t hidden = 32, input = 24;
  ModelBuilder mb;
  mb.input("x", DType::kFloat32, {5, 2, input});
  mb.initializer("w", random_tensor(DType::kFloat32, {1, gates * hidden, input}, 13));
  mb.initializer("r", random_tensor(DType::kFloat32, {1, gates * hidden, hidden}, 17));
  ModelBuilder::attr(mb.node(op, {"x", "w", "r"}, {"y"}, "product"), "hidden_size", hidden);
  mb.output("y");
  return {op, mb.bytes(), {random_tensor(DType::kFloat32, {5, 2, input}, 7)}, "product", Backend::kNone};
}

std::vector<NodeCase> node_cases() {
  using D = DType;
  return {
      product("matmul m=1", "MatMul", D::kFloat32, {1, 256}, {256, 512}, false),
      product("matmul m>1", "MatMul", D::kFloat32, {64, 256}, {256, 512}, false),
      product("matmul small", "MatMul", D::kFloat32, {4, 8}, {8, 16}, false),
      product("matmul batched", "MatMul", D::kFloat32, {4, 16, 64}, {4, 64, 32}, false),
      product("matmul batched small", "MatMul", D::kFloat32, {3, 2, 8}, {3, 8, 4}, false),
      product("matmul weights", "MatMul", D::kFloat32, {64, 256}, {256, 512}, true),
      product("matmul weights m=1", "MatMul", D::kFloat32, {1, 256}, {256, 512}, true),
      product("matmul float64", "MatMul", D::kFloat64, {64, 256}, {256, 128}, false),
      product("matmul float64 m=1", "MatMul", D::kFloat64, {1, 256}, {256, 128}, false),
      product("gemm transA (lda != k)", "Gemm", D::kFloat32, {256, 64}, {256, 512}, false, 1, 0),
      product("gemm transA m=1", "Gemm", D::kFloat32, {256, 1}, {256, 512}, false, 1, 0),
      product("gemm transB", "Gemm", D::kFloat32, {64, 256}, {512, 256}, false, 0, 1),
      product("gemm transA transB", "Gemm", D::kFloat32, {256, 64}, {512, 256}, false, 1, 1),
      product("gemm weights transB", "Gemm", D::kFloat32, {64, 256}, {512, 256}, true, 0, 1),
      product("gemm weights m=1", "Gemm", D::kFloat32, {1, 256}, {512, 256}, true, 0, 1),
      product("gemm float64 transA", "Gemm", D::kFloat64, {128, 32}, {128, 64}, false, 1, 0),
      product("gemm bfloat16 weights", "Gemm", D::kBFloat16, {16, 256}, {512, 256}, true, 0, 1),
      product("matmul bfloat16", "MatMul", D::kBFloat16, {16, 256}, {256, 128}, false),
      conv("conv 3x3", {1, 32, 28, 28}, {64, 32, 3, 3}, {1, 1, 1, 1}),
      conv("conv 1x1 small plane", {1, 64, 3, 3}, {32, 64, 1, 1}, {0, 0, 0, 0}),
      conv("conv 3x3 small plane", {1, 64, 3, 3}, {32, 64, 3, 3}, {1, 1, 1, 1}),
      conv("conv 1-D", {2, 16, 40}, {24, 16, 3}, {1, 1}),
      conv("conv 3-D", {1, 8, 6, 6, 6}, {16, 8, 3, 3, 3}, {1, 1, 1, 1, 1, 1}),
      qdq_matmul("int8 qdq matmul", 64),
      qdq_matmul("int8 qdq matmul m=1", 1),
      attention("attention", 16),
      attention("attention one query", 1),
      conv_transpose("conv transpose"),
      recurrent("LSTM", 4),
      recurrent("GRU", 3),
      recurrent("RNN", 1),
  };
}

TEST(GemmLabels, EveryShapeClassReportsThePathThatRan) {
  for (int threads : {1, 2}) {
    for (const NodeCase& c : node_cases()) {
      const std::string where = c.name + ", " + std::to_string(threads) + " thread(s)";
      SessionOptions options;
      options.threads = threads;
      const auto session = Session::load_bytes(c.model, c.name, options);
      session->run(c.inputs);  // the first run packs constant weights (reorders: not products)
      std::array<uint64_t, kBackendCount> before{}, after{};
      RunResult result;
      {
        ProbeScope probe;
        before = backend_probe::counts();
        result = session->run(c.inputs, {.profile = true});
        after = backend_probe::counts();
      }
      std::string label;
      for (const NodeTiming& t : result.timings)
        if (t.node == c.node) label = t.impl;
      ASSERT_FALSE(label.empty()) << where << ": node not in the profile";
      std::string unknown;
      const BackendSet named = label_backends(label, c.onednn_primitive, &unknown);
      EXPECT_EQ(named, probed(before, after))
          << where << ": label '" << label << "', ran " << names(probed(before, after));
      EXPECT_TRUE(unknown.empty()) << where << ": label '" << label << "' has unknown parts " << unknown;
      if (c.int8 && label == "refrt") {  // refrt's own exact integer GEMM, and nothing else, ran
        const size_t q = static_cast<size_t>(Backend::kRefrtQgemm);
        EXPECT_GT(after[q], before[q]) << where;
      }
    }
  }
}

}  // namespace
}  // namespace parity::refrt
