// Tensors made from shapes: ConstantOfShape.
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

}  // namespace

PARITY_KERNEL("ConstantOfShape", 9, ConstantOfShapeKernel, kAllTypes);

}  // namespace parity::refrt
