// Dropout at inference: the output is the input and the mask is all true (bool since 10; before, of
// the input's type with ones). Training (training_mode input true with a ratio > 0) draws random
// numbers whose stream no other runtime reproduces, so it is refused rather than guessed.
#include <cstring>

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
        if (training->dtype() != DType::kBool || training->numel() != 1) node_.fail("training_mode must be a bool scalar");
        const double r = ratio ? ratio_value(*ratio) : 0.5;
        if (*training->data<uint8_t>() != 0 && r > 0)
          node_.fail("Dropout with training_mode=true and ratio " + std::to_string(r) +
                         " > 0 is not implemented (random masks cannot be reproduced)",
                     ErrorKind::kUnsupported);
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
  double ratio_value(const Tensor& t) const {
    if (t.numel() != 1) node_.fail("ratio must be a scalar");
    switch (t.dtype()) {
      case DType::kFloat32: return *t.data<float>();
      case DType::kFloat64: return *t.data<double>();
      case DType::kFloat16: return half_to_float(*t.data<uint16_t>());
      case DType::kBFloat16: return bf16_to_float(*t.data<uint16_t>());
      default: node_.fail("ratio must be a float scalar, got " + dtype_name(t.dtype()));
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
