// BatchNormalization (inference), LRN. Statistics accumulate in double.
#include <cmath>

#include "../src/dispatch.h"

namespace parity::refrt {
namespace {

// Y = (X - mean) / sqrt(var + eps) * scale + B over channel dim 1. With training_mode=1 (opset 14+)
// mean and var are the batch's (population variance) and the optional outputs are the updated running
// statistics: running = input_running * momentum + batch * (1 - momentum).
class BatchNormKernel : public Kernel {
 public:
  explicit BatchNormKernel(const NodeDef& node)
      : node_(node), epsilon_(node.attr_float("epsilon", 1e-5f)), momentum_(node.attr_float("momentum", 0.9f)),
        training_(node.attr_int("training_mode", 0) != 0) {
    if (node.opset < 9 && node.attr_int("spatial", 1) != 1)
      node.fail("spatial=0 is not implemented", ErrorKind::kUnsupported);
  }
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    if (is_float16_like(x.dtype())) return with_float32(io, x.dtype(), [&](KernelIO& f) { compute(f); });
    if (x.rank() < 2) node_.fail("X must have rank >= 2, got " + shape_str(x.shape()));
    const int64_t n = x.dim(0), c = x.dim(1), inner = c ? x.numel() / (n * c) : 0;
    for (size_t i = 1; i < 5; ++i) {
      const Tensor& p = io.in(i);
      if (p.numel() != c) node_.fail("input #" + std::to_string(i) + " must have " + std::to_string(c) + " elements");
      if (p.dtype() != x.dtype() && !is_float16_like(p.dtype())) node_.fail("parameter dtypes must match X");
    }
    Tensor out(x.dtype(), x.shape());
    if (!dispatch_float(x.dtype(), [&](auto tag) {
          using T = decltype(tag);
          std::vector<double> a(static_cast<size_t>(c)), b(static_cast<size_t>(c));
          std::vector<double> batch_mean(static_cast<size_t>(c)), batch_var(static_cast<size_t>(c));
          if (training_) batch_statistics(x.data<T>(), n, c, inner, batch_mean, batch_var);
          for (int64_t ch = 0; ch < c; ++ch) {
            const double scale = value(io.in(1), ch), bias = value(io.in(2), ch);
            const double mean = training_ ? batch_mean[static_cast<size_t>(ch)] : value(io.in(3), ch);
            const double var = training_ ? batch_var[static_cast<size_t>(ch)] : value(io.in(4), ch);
            a[static_cast<size_t>(ch)] = scale / std::sqrt(var + static_cast<double>(epsilon_));
            b[static_cast<size_t>(ch)] = bias - mean * a[static_cast<size_t>(ch)];
          }
          const T* px = x.data<T>();
          T* py = out.data<T>();
          parallel_for(io, n * c, 4, [&](int64_t begin, int64_t end) {
            for (int64_t plane = begin; plane < end; ++plane) {
              const double sa = a[static_cast<size_t>(plane % c)], sb = b[static_cast<size_t>(plane % c)];
              for (int64_t i = plane * inner; i < (plane + 1) * inner; ++i)
                py[i] = static_cast<T>(static_cast<double>(px[i]) * sa + sb);
            }
          });
        }))
      node_.fail("dtype " + dtype_name(x.dtype()) + " is not implemented", ErrorKind::kUnsupported);
    io.outputs[0] = std::move(out);
  }

 private:
  template <typename T>
  void batch_statistics(const T* px, int64_t n, int64_t c, int64_t inner, std::vector<double>& mean,
                        std::vector<double>& var) const {
    const double count = static_cast<double>(n * inner);
    for (int64_t ch = 0; ch < c; ++ch) {
      double sum = 0, sq = 0;
      for (int64_t img = 0; img < n; ++img)
        for (int64_t i = 0; i < inner; ++i) sum += static_cast<double>(px[(img * c + ch) * inner + i]);
      const double m = count > 0 ? sum / count : 0;
      for (int64_t img = 0; img < n; ++img)
        for (int64_t i = 0; i < inner; ++i) {
          const double d = static_cast<double>(px[(img * c + ch) * inner + i]) - m;
          sq += d * d;
        }
      mean[static_cast<size_t>(ch)] = m;
      var[static_cast<size_t>(ch)] = count > 0 ? sq / count : 0;
    }
  }

  // Running statistics after this batch, in the dtype of the given running statistic.
  void write_running(KernelIO& io, const std::vector<double>& batch, size_t input, size_t output) const {
    if (output >= io.outputs.size()) return;
    const Tensor& running = io.in(input);
    Tensor updated(DType::kFloat64, running.shape());
    for (int64_t ch = 0; ch < running.numel(); ++ch)
      updated.data<double>()[ch] = value(running, ch) * momentum_ + batch[static_cast<size_t>(ch)] * (1.0 - momentum_);
    if (running.dtype() == DType::kFloat64) {
      io.outputs[output] = std::move(updated);
      return;
    }
    Tensor f(DType::kFloat32, running.shape());
    for (int64_t ch = 0; ch < running.numel(); ++ch) f.data<float>()[ch] = static_cast<float>(updated.data<double>()[ch]);
    io.outputs[output] = is_float16_like(running.dtype()) ? narrow_from_float32(f, running.dtype()) : std::move(f);
  }

 public:
  void compute_running(KernelIO& io) const {
    if (!training_ || io.outputs.size() < 2) return;
    const Tensor& x = io.in(0);
    const Tensor xf = widen_to_float32(x);
    const int64_t n = x.dim(0), c = x.dim(1), inner = c ? x.numel() / (n * c) : 0;
    std::vector<double> mean(static_cast<size_t>(c)), var(static_cast<size_t>(c));
    if (xf.dtype() == DType::kFloat64) batch_statistics(xf.data<double>(), n, c, inner, mean, var);
    else batch_statistics(xf.data<float>(), n, c, inner, mean, var);
    write_running(io, mean, 3, 1);
    write_running(io, var, 4, 2);
  }

 private:
  static double value(const Tensor& t, int64_t i) {
    switch (t.dtype()) {
      case DType::kFloat32: return t.data<float>()[i];
      case DType::kFloat64: return t.data<double>()[i];
      case DType::kFloat16: return half_to_float(static_cast<const uint16_t*>(t.raw())[i]);
      default: return bf16_to_float(static_cast<const uint16_t*>(t.raw())[i]);
    }
  }
  NodeDef node_;
  float epsilon_, momentum_;
  bool training_;
};

// The running-statistics outputs are computed after Y (from X alone), outside the float16 wrapper.
class BatchNormWithStatsKernel : public BatchNormKernel {
 public:
  using BatchNormKernel::BatchNormKernel;
  void compute(KernelIO& io) const override {
    BatchNormKernel::compute(io);
    compute_running(io);
  }
};

// LRN: y = x / (bias + alpha / size * sum of x^2 over a channel window) ^ beta.
class LrnKernel : public Kernel {
 public:
  explicit LrnKernel(const NodeDef& node)
      : node_(node), alpha_(node.attr_float("alpha", 1e-4f)), beta_(node.attr_float("beta", 0.75f)),
        bias_(node.attr_float("bias", 1.0f)), size_(node.attr_int("size", 0)) {
    if (size_ < 1) node.fail("size must be >= 1");
  }
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    if (is_float16_like(x.dtype())) return with_float32(io, x.dtype(), [&](KernelIO& f) { compute(f); });
    if (x.rank() < 2) node_.fail("X must have rank >= 2");
    const int64_t n = x.dim(0), c = x.dim(1), inner = c ? x.numel() / (n * c) : 0;
    const int64_t lo = (size_ - 1) / 2, hi = size_ - 1 - lo;  // window [ch - floor, ch + ceil]
    Tensor out(x.dtype(), x.shape());
    if (!dispatch_float(x.dtype(), [&](auto tag) {
          using T = decltype(tag);
          const T* px = x.data<T>();
          T* py = out.data<T>();
          for (int64_t img = 0; img < n; ++img)
            for (int64_t ch = 0; ch < c; ++ch)
              for (int64_t i = 0; i < inner; ++i) {
                double sum = 0;
                for (int64_t k = std::max<int64_t>(0, ch - lo); k <= std::min(c - 1, ch + hi); ++k) {
                  const double v = static_cast<double>(px[(img * c + k) * inner + i]);
                  sum += v * v;
                }
                const int64_t at = (img * c + ch) * inner + i;
                py[at] = static_cast<T>(static_cast<double>(px[at]) /
                                        std::pow(bias_ + alpha_ / static_cast<double>(size_) * sum, static_cast<double>(beta_)));
              }
        }))
      node_.fail("dtype " + dtype_name(x.dtype()) + " is not implemented", ErrorKind::kUnsupported);
    io.outputs[0] = std::move(out);
  }

 private:
  NodeDef node_;
  float alpha_, beta_, bias_;
  int64_t size_;
};

}  // namespace

// BatchNormalization 7 (spatial attr), 9 (spatial removed), 14 (training_mode), 15 (param types).
PARITY_KERNEL("BatchNormalization", 7, BatchNormKernel, kFloatTypes16);
PARITY_KERNEL("BatchNormalization", 9, BatchNormKernel, kFloatTypes16);
PARITY_KERNEL("BatchNormalization", 14, BatchNormWithStatsKernel, kFloatTypes16);
PARITY_KERNEL("BatchNormalization", 15, BatchNormWithStatsKernel, kFloatTypes16);
PARITY_KERNEL("LRN", 1, LrnKernel, kFloatTypes16);

}  // namespace parity::refrt
