// FusedSiblingMatMul (optimize/group_sibling_matmuls.cc): Y_i = A x B_i for the constant float32 [K, N_i] weights of
// MatMuls that read one A (an attention's q, k and v projections; a gated MLP's gate and up).
//
// One row of A (a decode step) at refrt's AVX2 levels is one GEMV on the Bs side by side ([K, sum N_i], made at the
// first one-row run: a session that never runs one row does not hold the weights twice): each row of K is then one
// stream of sum N_i floats instead of one per product. The LLaMA-style decode step's k and v projections (512 x 128)
// ran at 8 GB/s as GEMVs of their own. Each column's sum is the one its own GEMV makes (the same rows of K, in the
// same order and, with threads, the same bands), so the outputs are those of the separate products. Several rows, and
// the AVX-512 levels (whose packed GEMV streams each B in panels already, gemv_packed.h), run each product as the
// MatMul it was.
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "../src/gemm.h"
#include "../src/gemv_packed.h"
#include "../src/kernel.h"

namespace parity::refrt {
namespace {

class SiblingMatMulKernel : public Kernel {
 public:
  explicit SiblingMatMulKernel(const NodeDef& node) {
    const int opset = static_cast<int>(node.attr_int("matmul_opset", 13));
    const KernelRegistration* matmul = find_kernel("MatMul", "", opset);
    if (!matmul || node.inputs.size() < 2 || node.outputs.size() != node.inputs.size() - 1)
      node.fail("a FusedSiblingMatMul takes A, one B per output");
    for (size_t i = 1; i < node.inputs.size(); ++i) {
      NodeDef part;  // named as the model's node, so that its errors name it
      part.name = i - 1 < node.fused_from.size() ? node.fused_from[i - 1].first : node.name;
      part.op_type = "MatMul";
      part.opset = opset;
      part.origin = node.origin;
      part.inputs = {node.inputs[0], node.inputs[i]};
      part.outputs = {node.outputs[i - 1]};
      parts_.push_back(matmul->factory(part));
    }
  }

  void prepare(const std::vector<const Tensor*>& constants) override {
    for (size_t i = 0; i < parts_.size(); ++i) {
      const Tensor* b = i + 1 < constants.size() ? constants[i + 1] : nullptr;
      parts_[i]->prepare({nullptr, b});
      weights_.push_back(b ? *b : Tensor());
    }
  }

  void compute(KernelIO& io) const override {
    if (one_row(io)) return;
    std::string impl;
    for (size_t i = 0; i < parts_.size(); ++i) {
      KernelIO part;
      part.pool = io.pool;
      part.inputs = {io.inputs[0], io.inputs[i + 1]};
      part.outputs.resize(1);
      parts_[i]->compute(part);
      io.outputs[i] = std::move(part.outputs[0]);
      if (impl.find(part.impl) == std::string::npos) impl += (impl.empty() ? "" : " + ") + std::string(part.impl);
    }
    io.impl = intern_impl(impl);
  }

  double flops(const KernelIO& io) const override {
    const Tensor& a = io.in(0);
    double sum = 0;
    for (const Tensor& y : io.outputs)
      if (y.defined() && a.rank() > 0)
        sum += 2.0 * static_cast<double>(y.numel()) * static_cast<double>(a.shape().back());
    return sum;
  }

 private:
  // One float32 row times the constant Bs side by side; false: not this case (nothing written).
  bool one_row(KernelIO& io) const {
    const Tensor& a = io.in(0);
    if (a.dtype() != DType::kFloat32 || a.rank() == 0 || packed_gemv_available() || !refrt_sgemv_available())
      return false;
    const int64_t k = a.shape().back();
    if (k == 0 || a.numel() != k) return false;
    int64_t n = 0;
    for (size_t i = 0; i < weights_.size(); ++i) {
      const Tensor* b = io.inputs[i + 1];
      if (!b || !weights_[i].defined() || b->raw() != weights_[i].raw() || b->dim(0) != k) return false;
      n += b->dim(1);
    }
    const Tensor& side_by_side = concatenated(k, n);
    Tensor y(DType::kFloat32, {n});
    note_backends(io, pool_gemm<float>(io, false, false, 1, n, k, 1.0f, a.data<float>(), k, side_by_side.data<float>(),
                                       n, 0.0f, y.data<float>(), n));
    int64_t at = 0;
    for (size_t i = 0; i < weights_.size(); ++i) {
      Shape shape = a.shape();
      shape.back() = weights_[i].dim(1);
      Tensor out(DType::kFloat32, shape);
      std::memcpy(out.data<float>(), y.data<float>() + at, static_cast<size_t>(out.numel()) * sizeof(float));
      at += out.numel();
      io.outputs[i] = std::move(out);
    }
    return true;
  }

  // [K, sum N_i]: row k holds row k of every B, in order.
  const Tensor& concatenated(int64_t k, int64_t n) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!side_by_side_.defined()) {
      Tensor cat(DType::kFloat32, {k, n});
      float* dst = cat.data<float>();
      for (int64_t r = 0; r < k; ++r)
        for (const Tensor& b : weights_) {
          const int64_t cols = b.dim(1);
          std::memcpy(dst, b.data<float>() + r * cols, static_cast<size_t>(cols) * sizeof(float));
          dst += cols;
        }
      side_by_side_ = std::move(cat);
    }
    return side_by_side_;
  }

  std::vector<std::unique_ptr<Kernel>> parts_;
  std::vector<Tensor> weights_;
  mutable std::mutex mutex_;
  mutable Tensor side_by_side_;
};

}  // namespace

PARITY_FUSED_KERNEL("FusedSiblingMatMul", SiblingMatMulKernel, {DType::kFloat32});

}  // namespace parity::refrt
