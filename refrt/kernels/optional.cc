// Optional operators: Optional, OptionalHasElement, OptionalGetElement. An optional is a Value
// (value.h) holding one tensor, one sequence, or nothing.
#include "sequence_values.h"

namespace parity::refrt {
namespace {

class OptionalKernel : public Kernel {
 public:
  explicit OptionalKernel(const NodeDef& node) : node_(node) {
    if (const Attribute* a = node.attr("type", Attribute::Type::kTypeProto)) {
      if (a->tp.kind != ValueKind::kTensor && a->tp.kind != ValueKind::kSequence)
        node.fail(std::string("type must be a tensor or sequence type, got ") + value_kind_name(a->tp.kind));
      type_ = a->tp;
      has_type_ = true;
    }
    if ((node.inputs.empty() || node.inputs[0].empty()) && !has_type_)
      node.fail("an Optional without input needs the attribute 'type'");
  }
  void compute(KernelIO& io) const override {
    const auto& v = io.value(0);
    if (v && v->is_optional()) node_.fail("input must be a tensor or a sequence, got " + v->describe());
    if (v) {
      check_type(ValueKind::kSequence, v->elem_type);
      io.set_value(0, Value::optional_sequence(*v));
    } else if (const Tensor* t = io.optional(0)) {
      check_type(ValueKind::kTensor, t->dtype());
      io.set_value(0, Value::optional_tensor(frozen(*t)));
    } else {
      const ValueKind kind =
          type_.kind == ValueKind::kSequence ? ValueKind::kOptionalSequence : ValueKind::kOptionalTensor;
      io.set_value(0, Value::empty_optional(kind, type_.dtype));
    }
  }
  bool takes_values() const override { return true; }

 private:
  void check_type(ValueKind kind, DType dtype) const {
    if (!has_type_) return;
    if (type_.kind != kind || (type_.dtype != DType::kUndefined && dtype != DType::kUndefined && type_.dtype != dtype))
      node_.fail(std::string("the input is a ") + value_kind_name(kind) + " of " + dtype_name(dtype) +
                 ", the attribute 'type' says " + value_kind_name(type_.kind) + " of " + dtype_name(type_.dtype));
  }

  NodeDef node_;
  ValueInfo type_;
  bool has_type_ = false;
};

// False for an empty optional or an absent input; true for anything else (from opset 18 a plain
// tensor or sequence counts as a present optional).
class OptionalHasElementKernel : public Kernel {
 public:
  explicit OptionalHasElementKernel(const NodeDef&) {}
  void compute(KernelIO& io) const override {
    const auto& v = io.value(0);
    const bool present = v ? !v->is_optional() || v->has_element : io.optional(0) != nullptr;
    io.outputs[0] = Tensor::scalar<uint8_t>(DType::kBool, present);
  }
  bool takes_values() const override { return true; }
};

// The optional's tensor or sequence; reading an empty optional is an error. From opset 18 a plain
// tensor or sequence is returned as is.
class OptionalGetElementKernel : public Kernel {
 public:
  explicit OptionalGetElementKernel(const NodeDef& node) : node_(node) {}
  void compute(KernelIO& io) const override {
    const auto& v = io.value(0);
    if (!v) {
      io.outputs[0] = io.in(0);
      return;
    }
    if (!v->is_optional()) {
      io.set_value(0, v);
      return;
    }
    if (!v->has_element)
      node_.fail("the optional input '" + (node_.inputs.empty() ? std::string() : node_.inputs[0]) + "' is empty (" +
                 v->describe() + "): there is no element to get");
    if (v->kind == ValueKind::kOptionalTensor)
      io.outputs[0] = v->tensors.at(0);
    else
      io.set_value(0, Value::sequence(v->tensors, v->elem_type));
  }
  bool takes_values() const override { return true; }

 private:
  NodeDef node_;
};

}  // namespace

// All since opset 15; 18 let OptionalHasElement / OptionalGetElement take plain tensors and sequences
// (accepted from 15: the older types are a subset).
PARITY_KERNEL("Optional", 15, OptionalKernel, kAllTypes);
PARITY_KERNEL("OptionalHasElement", 15, OptionalHasElementKernel, kAllTypes);
PARITY_KERNEL("OptionalGetElement", 15, OptionalGetElementKernel, kAllTypes);

}  // namespace parity::refrt
