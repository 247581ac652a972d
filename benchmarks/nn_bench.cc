// Neural-network kernels through a refrt Session: Conv (im2col + sgemm) next to the bare cblas_sgemm
// of the same GEMM shape (the difference is im2col and session overhead), Gemm, Softmax and
// LayerNormalization. GFLOP is a rate (GFLOP/s): Conv/Gemm count 2 flops per multiply-add; Softmax
// counts 4 flops per element (max, subtract+exp, sum, divide) and LayerNormalization 8 (mean,
// variance, normalize, scale, shift), so the rows compare runs, not different ops.
//   refrt_bench --benchmark_filter='Conv|Gemm|Softmax|LayerNorm' --benchmark_min_time=0.05
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <map>
#include <string>
#include <vector>

#include "onnx/onnx-ml.pb.h"
#include "parity/refrt/session.h"

namespace {

using parity::DType;
using parity::Tensor;

struct Attr {
  std::vector<int64_t> ints;
  int64_t i = 0;
  bool is_int = false;
};

// One node whose inputs are all float graph inputs.
std::string single_node_model(const std::string& op, const std::vector<std::string>& inputs,
                              const std::map<std::string, Attr>& attrs, int opset = 18) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(opset);
  auto* g = model.mutable_graph();
  g->set_name(op + "_bench");
  auto* node = g->add_node();
  node->set_op_type(op);
  node->set_name(op);
  for (const auto& name : inputs) {
    auto* vi = g->add_input();
    vi->set_name(name);
    vi->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    node->add_input(name);
  }
  for (const auto& [name, a] : attrs) {
    auto* p = node->add_attribute();
    p->set_name(name);
    if (a.is_int) {
      p->set_type(onnx::AttributeProto::INT);
      p->set_i(a.i);
    } else {
      p->set_type(onnx::AttributeProto::INTS);
      for (int64_t v : a.ints) p->add_ints(v);
    }
  }
  const std::string output = "y";
  node->add_output(output);
  g->add_output()->set_name(output);
  return model.SerializeAsString();
}

Tensor filled(parity::Shape shape) {
  Tensor t(DType::kFloat32, std::move(shape));
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<float>((i * 7919) % 1000) / 1000.0f - 0.5f;
  return t;
}

void run_session(benchmark::State& state, const std::string& model, const std::vector<Tensor>& inputs, double flops) {
  auto session = parity::refrt::Session::load_bytes(model, "nn_bench");
  for (auto _ : state) {
    auto result = session->run(inputs);
    benchmark::DoNotOptimize(result.outputs[0].raw());
  }
  state.counters["GFLOP"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// Conv 3x3, pad 1, stride 1: [N, C, H, W] * [M, C, 3, 3].
void BM_RefrtConv3x3(benchmark::State& state) {
  const int64_t c = state.range(0), hw = state.range(1), m = state.range(2);
  const std::string model = single_node_model("Conv", {"x", "w"}, {{"pads", {{1, 1, 1, 1}}}});
  run_session(state, model, {filled({1, c, hw, hw}), filled({m, c, 3, 3})}, 2.0 * double(m * hw * hw * c * 9));
}

// The GEMM inside that conv, alone: [M, C*9] x [C*9, H*W].
void BM_CblasConvGemm(benchmark::State& state) {
  const int c = static_cast<int>(state.range(0)), hw = static_cast<int>(state.range(1)),
            m = static_cast<int>(state.range(2));
  const Tensor w = filled({m, c * 9}), col = filled({c * 9, hw * hw});
  Tensor y(DType::kFloat32, {m, hw * hw});
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, hw * hw, c * 9, 1.0f, w.data<float>(), c * 9,
                col.data<float>(), hw * hw, 0.0f, y.data<float>(), hw * hw);
    benchmark::DoNotOptimize(y.raw());
  }
  state.counters["GFLOP"] =
      benchmark::Counter(2.0 * double(m) * hw * hw * c * 9 * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// Depthwise 3x3 (group = C), the case where im2col + a 1-row GEMM per group is at its weakest.
void BM_RefrtConvDepthwise3x3(benchmark::State& state) {
  const int64_t c = state.range(0), hw = state.range(1);
  const std::string model = single_node_model("Conv", {"x", "w"}, {{"pads", {{1, 1, 1, 1}}}, {"group", {{}, c, true}}});
  run_session(state, model, {filled({1, c, hw, hw}), filled({c, 1, 3, 3})}, 2.0 * double(c * hw * hw * 9));
}

// Any 2-D conv of an image net, batch 1: C channels HxH, M outputs, k x k kernel, stride, group,
// pad k/2 (MobileNetV3-small's shapes below: its stem, depthwise 3x3 / 5x5, small-K pointwise).
void BM_RefrtConv(benchmark::State& state) {
  const int64_t c = state.range(0), hw = state.range(1), m = state.range(2), k = state.range(3), s = state.range(4),
                g = state.range(5), p = k / 2, out = (hw + 2 * p - k) / s + 1;
  const std::string model = single_node_model(
      "Conv", {"x", "w"}, {{"pads", {{p, p, p, p}}}, {"strides", {{s, s}}}, {"group", {{}, g, true}}});
  run_session(state, model, {filled({1, c, hw, hw}), filled({m, c / g, k, k})},
              2.0 * double(m * out * out * (c / g) * k * k));
}

void BM_RefrtGemm(benchmark::State& state) {
  const int64_t n = state.range(0);
  const std::string model = single_node_model("Gemm", {"a", "b", "c"}, {{"transB", {{}, 1, true}}});
  run_session(state, model, {filled({n, n}), filled({n, n}), filled({n})}, 2.0 * double(n * n * n));
}

void BM_RefrtSoftmax(benchmark::State& state) {
  const int64_t rows = state.range(0), cols = state.range(1);
  run_session(state, single_node_model("Softmax", {"x"}, {}), {filled({rows, cols})}, 4.0 * double(rows * cols));
}

void BM_RefrtLayerNorm(benchmark::State& state) {
  const int64_t rows = state.range(0), cols = state.range(1);
  run_session(state, single_node_model("LayerNormalization", {"x", "s", "b"}, {}, 17),
              {filled({rows, cols}), filled({cols}), filled({cols})}, 8.0 * double(rows * cols));
}

BENCHMARK(BM_RefrtConv3x3)->Args({64, 56, 64})->Args({128, 28, 128})->Args({3, 224, 64})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CblasConvGemm)->Args({64, 56, 64})->Args({128, 28, 128})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RefrtConvDepthwise3x3)->Args({64, 56})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RefrtConv)
    ->ArgNames({"C", "H", "M", "k", "s", "g"})
    ->Args({3, 224, 16, 3, 2, 1})
    ->Args({16, 112, 16, 3, 1, 16})
    ->Args({72, 56, 72, 3, 2, 72})
    ->Args({240, 14, 240, 5, 1, 240})
    ->Args({576, 7, 576, 5, 1, 576})
    ->Args({16, 56, 72, 1, 1, 1})
    ->Args({96, 7, 576, 1, 1, 1})
    ->Args({144, 1, 576, 1, 1, 1})
    // MobileNetV3-small's other pointwise shapes, then ResNet-18's convs (stem, 3x3 per stage, stride-2 3x3, 1x1
    // downsample)
    ->Args({88, 28, 88, 3, 1, 88})
    ->Args({96, 28, 96, 5, 2, 96})
    ->Args({288, 14, 288, 5, 2, 288})
    ->Args({576, 7, 96, 1, 1, 1})
    ->Args({48, 14, 144, 1, 1, 1})
    ->Args({240, 14, 40, 1, 1, 1})
    ->Args({24, 28, 96, 1, 1, 1})
    ->Args({3, 224, 64, 7, 2, 1})
    ->Args({64, 56, 64, 3, 1, 1})
    ->Args({128, 28, 128, 3, 1, 1})
    ->Args({256, 14, 256, 3, 1, 1})
    ->Args({512, 7, 512, 3, 1, 1})
    ->Args({64, 56, 128, 3, 2, 1})
    ->Args({256, 14, 512, 3, 2, 1})
    ->Args({128, 28, 256, 1, 2, 1})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_RefrtGemm)->RangeMultiplier(4)->Range(64, 1024)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_RefrtSoftmax)->Args({128, 1000})->Args({4096, 128})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_RefrtLayerNorm)->Args({128, 768})->Args({4096, 64})->Unit(benchmark::kMicrosecond);

}  // namespace
