// MatMul through a refrt Session (OpenBLAS sgemm) against its peers measured in the same run: the
// bare cblas_sgemm call (the difference is session overhead) and a plain Eigen product.
// The GFLOP counter is a rate (GFLOP/s, 2*M*N*K per product).
// OpenBLAS may use several threads and Eigen uses one: set OPENBLAS_NUM_THREADS=1 to compare per core.
//   refrt_bench --benchmark_filter=MatMul
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <Eigen/Core>
#include <cstring>

#include "onnx/onnx-ml.pb.h"
#include "parity/refrt/session.h"

namespace {

using parity::DType;
using parity::Tensor;

// y = MatMul(a, b) with a: [m, k], b: [k, n], both graph inputs.
std::string matmul_model() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(18);
  auto* g = model.mutable_graph();
  g->set_name("matmul_bench");
  for (const char* name : {"a", "b"}) {
    auto* vi = g->add_input();
    vi->set_name(name);
    vi->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  }
  auto* node = g->add_node();
  node->set_op_type("MatMul");
  node->set_name("matmul");
  node->add_input("a");
  node->add_input("b");
  node->add_output("y");
  g->add_output()->set_name("y");
  return model.SerializeAsString();
}

Tensor filled(int64_t rows, int64_t cols) {
  Tensor t(DType::kFloat32, {rows, cols});
  float* p = t.data<float>();
  for (int64_t i = 0; i < rows * cols; ++i) p[i] = static_cast<float>((i * 7919) % 1000) / 1000.0f - 0.5f;
  return t;
}

void report_gflops(benchmark::State& state, int64_t m, int64_t n, int64_t k) {
  state.counters["GFLOP"] =
      benchmark::Counter(2.0 * static_cast<double>(m * n * k) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_RefrtMatMul(benchmark::State& state) {
  const int64_t n = state.range(0);
  auto session = parity::refrt::Session::load_bytes(matmul_model(), "matmul_bench");
  const std::vector<Tensor> inputs = {filled(n, n), filled(n, n)};
  for (auto _ : state) {
    auto result = session->run(inputs);
    benchmark::DoNotOptimize(result.outputs[0].raw());
  }
  report_gflops(state, n, n, n);
}

void BM_CblasSgemm(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const Tensor a = filled(n, n), b = filled(n, n);
  Tensor y(DType::kFloat32, {n, n});
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data<float>(), n, b.data<float>(), n, 0.0f,
                y.data<float>(), n);
    benchmark::DoNotOptimize(y.raw());
  }
  report_gflops(state, n, n, n);
}

void BM_EigenMatMul(benchmark::State& state) {
  using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const int64_t n = state.range(0);
  const Tensor a = filled(n, n), b = filled(n, n);
  const Eigen::Map<const RowMajor> ma(a.data<float>(), n, n), mb(b.data<float>(), n, n);
  RowMajor y(n, n);
  for (auto _ : state) {
    y.noalias() = ma * mb;
    benchmark::DoNotOptimize(y.data());
  }
  report_gflops(state, n, n, n);
}

BENCHMARK(BM_RefrtMatMul)->RangeMultiplier(4)->Range(16, 1024)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CblasSgemm)->RangeMultiplier(4)->Range(16, 1024)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_EigenMatMul)->RangeMultiplier(4)->Range(16, 1024)->Unit(benchmark::kMicrosecond);

}  // namespace
