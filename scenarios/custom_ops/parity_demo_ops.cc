// A demo custom op for Parity's custom-op scenario: parity_demo::scaled_tanh(x, alpha) = alpha * tanh(x).
// Built as libparity_demo_ops.so; Python capture loads it with torch.ops.load_library (the op's fake
// kernel is registered in scenarios/cases/custom_ops.py), the libtorch reference of `parity verify`
// loads it from case.json's "torch_libraries".
#include <torch/library.h>
#include <ATen/ATen.h>

namespace {

at::Tensor scaled_tanh_cpu(const at::Tensor& x, double alpha) {
  TORCH_CHECK(x.is_floating_point(), "parity_demo::scaled_tanh expects a floating-point tensor, got ", x.scalar_type());
  return at::tanh(x) * alpha;
}

}  // namespace

TORCH_LIBRARY(parity_demo, m) { m.def("scaled_tanh(Tensor x, float alpha) -> Tensor"); }

TORCH_LIBRARY_IMPL(parity_demo, CPU, m) { m.impl("scaled_tanh", &scaled_tanh_cpu); }
