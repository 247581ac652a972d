// Constant: its tensor is built once, at load, and handed out read-only on every run.
#include <cstring>

#include "../src/kernel.h"

namespace parity::refrt {
namespace {

class ConstantKernel : public Kernel {
 public:
  explicit ConstantKernel(const NodeDef& node) {
    if (node.attributes.size() != 1)
      node.fail("needs exactly one value attribute, has " + std::to_string(node.attributes.size()));
    const auto& [name, a] = *node.attributes.begin();
    if (name == "value") {
      node.attr(name, Attribute::Type::kTensor);
      value_ = a.t;
    } else if (name == "value_float") {
      value_ = Tensor::scalar<float>(DType::kFloat32, node.attr_float(name, 0));
    } else if (name == "value_int") {
      value_ = Tensor::scalar<int64_t>(DType::kInt64, node.attr_int(name, 0));
    } else if (name == "value_floats") {
      node.attr(name, Attribute::Type::kFloats);
      value_ = Tensor(DType::kFloat32, {static_cast<int64_t>(a.floats.size())});
      if (!a.floats.empty()) std::memcpy(value_.mutable_raw(), a.floats.data(), a.floats.size() * sizeof(float));
    } else if (name == "value_ints") {
      node.attr(name, Attribute::Type::kInts);
      value_ = Tensor(DType::kInt64, {static_cast<int64_t>(a.ints.size())});
      if (!a.ints.empty()) std::memcpy(value_.mutable_raw(), a.ints.data(), a.ints.size() * sizeof(int64_t));
    } else if (name == "sparse_value" || name == "value_string" || name == "value_strings") {
      node.fail("attribute '" + name + "' is not implemented", ErrorKind::kUnsupported);
    } else {
      node.fail("unknown attribute '" + name + "'");
    }
    value_ = frozen(value_);
  }
  void compute(KernelIO& io) const override { io.outputs[0] = value_; }

 private:
  Tensor value_;
};

}  // namespace

// Constant 1: `value`; 11 sparse_value (not implemented); 12 value_float(s)/value_int(s)/value_string(s).
PARITY_KERNEL("Constant", 1, ConstantKernel, kAllTypes);
PARITY_KERNEL("Constant", 12, ConstantKernel, kAllTypes);

}  // namespace parity::refrt
