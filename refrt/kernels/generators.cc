// Tensors made from shapes: ConstantOfShape; and Dropout at inference (identity, mask all true).
#include <cstring>

#include "../src/dispatch.h"

namespace parity::refrt {
namespace {

class ConstantOfShapeKernel : public Kernel {
 public:
  explicit ConstantOfShapeKernel(const NodeDef& node) : node_(node) {
    if (const Attribute* v = node.attr("value", Attribute::Type::kTensor)) {
      if (v->t.numel() != 1) node.fail("value must hold exactly one element");
      value_ = v->t;
    } else {
      value_ = Tensor::scalar<float>(DType::kFloat32, 0.0f);
    }
  }
  void compute(KernelIO& io) const override {
    Shape shape = int64_values(io.in(0), "shape");
    for (int64_t d : shape)
      if (d < 0) node_.fail("shape " + shape_str(shape) + " has a negative dimension");
    Tensor out(value_.dtype(), shape);
    const size_t width = dtype_size(value_.dtype());
    auto* dst = static_cast<unsigned char*>(out.mutable_raw());
    for (int64_t i = 0; i < out.numel(); ++i) std::memcpy(dst + i * width, value_.raw(), width);
    io.outputs[0] = std::move(out);
  }

 private:
  NodeDef node_;
  Tensor value_;
};

// Inference Dropout: Y = X; the optional mask is all true. training_mode=true with ratio > 0 would
// need random numbers matching another runtime's generator: refused with a clear error.
class DropoutKernel : public Kernel {
 public:
  explicit DropoutKernel(const NodeDef& node) : node_(node) {}
  void compute(KernelIO& io) const override {
    if (const Tensor* training = io.optional(2)) {
      if (training->numel() != 1 || training->dtype() != DType::kBool) node_.fail("training_mode must be a bool scalar");
      if (*static_cast<const uint8_t*>(training->raw()) != 0) {
        const Tensor* ratio = io.optional(1);
        const double r = ratio ? (ratio->dtype() == DType::kFloat64 ? ratio->data<double>()[0] : widen_to_float32(*ratio).data<float>()[0]) : 0.5;
        if (r != 0.0) node_.fail("training_mode=true with ratio > 0 is not implemented (refrt runs inference)", ErrorKind::kUnsupported);
      }
    }
    const Tensor& x = io.in(0);
    io.outputs[0] = x;
    if (io.outputs.size() > 1) {
      Tensor mask(DType::kBool, x.shape());
      std::memset(mask.mutable_raw(), 1, mask.nbytes());
      io.outputs[1] = std::move(mask);
    }
  }

 private:
  NodeDef node_;
};

}  // namespace

PARITY_KERNEL("ConstantOfShape", 9, ConstantOfShapeKernel, kAllTypes);
// Dropout 7 (no is_test), 10 (mask bool), 12 (ratio and training_mode inputs), 13 (bfloat16).
PARITY_KERNEL("Dropout", 7, DropoutKernel, kAllTypes);
PARITY_KERNEL("Dropout", 10, DropoutKernel, kAllTypes);
PARITY_KERNEL("Dropout", 12, DropoutKernel, kAllTypes);

}  // namespace parity::refrt
