// Dropout at inference: the output is the input and the mask is all true (bool since 10; before, of
// the input's type with ones). Training (12+: training_mode input true, ratio > 0) keeps each element
// with probability 1 - ratio and scales the kept ones by 1 / (1 - ratio). The stream is refrt's own
// (mt19937_64; the `seed` attribute makes every run draw the same mask): no runtime reproduces another's
// random values, so tests check the distribution, never the values.
#include <cstring>
#include <random>

#include "double_io.h"
#include "elementwise.h"

#include "../src/dispatch.h"

namespace parity::refrt {
namespace {

class DropoutKernel : public Kernel {
 public:
  explicit DropoutKernel(const NodeDef& node) : node_(node) {}

  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    if (node_.opset >= 12) {
      const Tensor* ratio = io.optional(1);
      const Tensor* training = io.optional(2);
      if (training) {
        if (training->dtype() != DType::kBool || training->numel() != 1)
          node_.fail("training_mode must be a bool scalar");
        const double r = ratio ? ratio_value(*ratio) : 0.5;
        if (!(r >= 0 && r <= 1)) node_.fail("ratio " + std::to_string(r) + " is outside [0, 1]");
        if (*training->data<uint8_t>() != 0 && r > 0) return train(x, r, io);
      }
    }
    io.outputs[0] = x;  // shared read-only view: kernels never write their inputs
    if (io.outputs.size() > 1) {
      const bool bool_mask = node_.opset >= 10;
      Tensor mask(bool_mask ? DType::kBool : x.dtype(), x.shape());
      if (bool_mask) {
        std::memset(mask.mutable_raw(), 1, mask.nbytes());
      } else if (!dispatch_float(x.dtype(), [&](auto tag) {
                   using T = decltype(tag);
                   std::fill_n(mask.data<T>(), mask.numel(), T(1));
                 })) {
        const uint16_t one = x.dtype() == DType::kFloat16 ? float_to_half(1.0f) : float_to_bf16(1.0f);
        std::fill_n(mask.data<uint16_t>(), mask.numel(), one);
      }
      io.outputs[1] = std::move(mask);
    }
  }

 private:
  void train(const Tensor& x, double ratio, KernelIO& io) const {
    if (!is_float_dtype(x.dtype())) fail_dtype(node_, x.dtype());
    const auto* seed = node_.attr("seed");
    std::mt19937_64 gen(seed ? static_cast<uint64_t>(node_.attr_int("seed", 0))
                             : (uint64_t{std::random_device{}()} << 32) ^ std::random_device{}());
    std::vector<double> y = float_values(x);
    Tensor mask(DType::kBool, x.shape());
    uint8_t* keep = mask.data<uint8_t>();
    const double scale = ratio < 1 ? 1.0 / (1.0 - ratio) : 0.0;  // ratio 1 drops everything
    for (size_t i = 0; i < y.size(); ++i) {
      const double u = static_cast<double>(gen() >> 11) * 0x1.0p-53;  // [0, 1)
      keep[i] = u >= ratio;
      y[i] = keep[i] ? y[i] * scale : 0.0;
    }
    io.outputs[0] = float_tensor(x.dtype(), x.shape(), y);
    if (io.outputs.size() > 1) io.outputs[1] = std::move(mask);
  }
  double ratio_value(const Tensor& t) const {
    if (t.numel() != 1) node_.fail("ratio must be a scalar");
    switch (t.dtype()) {
      case DType::kFloat32:
        return *t.data<float>();
      case DType::kFloat64:
        return *t.data<double>();
      case DType::kFloat16:
        return half_to_float(*t.data<uint16_t>());
      case DType::kBFloat16:
        return bf16_to_float(*t.data<uint16_t>());
      default:
        node_.fail("ratio must be a float scalar, got " + dtype_name(t.dtype()));
    }
  }
  NodeDef node_;
};

}  // namespace

// Dropout 7: is_test removed (always inference here); 10: bool mask; 12: ratio and training_mode inputs.
PARITY_KERNEL("Dropout", 7, DropoutKernel, kFloatTypes16);
PARITY_KERNEL("Dropout", 10, DropoutKernel, kFloatTypes16);
PARITY_KERNEL("Dropout", 12, DropoutKernel, kFloatTypes16);
PARITY_KERNEL("Dropout", 13, DropoutKernel, kFloatTypes16);

}  // namespace parity::refrt
