// Internal: what the sequence and optional kernels share: reading a sequence input, building a
// sequence output (homogeneous dtype, elements frozen so no holder can write into another's tensor),
// and positions with the ONNX range rules.
#pragma once
#include <string>
#include <vector>

#include "../src/kernel.h"

namespace parity::refrt {

// Input i as a sequence; fails naming what was given instead (a tensor, an optional, nothing).
inline const Value& sequence_input(const KernelIO& io, size_t i, const NodeDef& node) {
  const auto& v = io.value(i);
  if (v && v->kind == ValueKind::kSequence) return *v;
  const std::string what = "input #" + std::to_string(i) + (i < node.inputs.size() ? " '" + node.inputs[i] + "'" : "");
  if (v) node.fail(what + " must be a sequence, got " + v->describe());
  if (io.optional(i)) node.fail(what + " must be a sequence, got a " + dtype_name(io.optional(i)->dtype()) + " tensor");
  node.fail(what + " (a sequence) is missing");
}

// A sequence of `elements`; every element must be of `elem_type` (kUndefined: the first element's).
inline std::shared_ptr<const Value> make_sequence(std::vector<Tensor> elements, DType elem_type, const NodeDef& node) {
  for (size_t k = 0; k < elements.size(); ++k) {
    if (elem_type == DType::kUndefined) elem_type = elements[k].dtype();
    if (elements[k].dtype() != elem_type)
      node.fail("sequence element #" + std::to_string(k) + " is " + dtype_name(elements[k].dtype()) +
                ", the sequence holds " + dtype_name(elem_type) + " (a sequence has one element type)");
    elements[k] = frozen(elements[k]);
  }
  return Value::sequence(std::move(elements), elem_type);
}

// The one integer of a scalar (or one-element) int32/int64 position tensor, checked against
// [lowest, highest] and made non-negative by adding `length` when negative.
inline int64_t sequence_position(const Tensor& t, int64_t lowest, int64_t highest, int64_t length,
                                 const NodeDef& node) {
  if (t.dtype() != DType::kInt32 && t.dtype() != DType::kInt64)
    node.fail("position must be int32 or int64, got " + dtype_name(t.dtype()));
  if (t.numel() != 1) node.fail("position must be a scalar, got shape " + shape_str(t.shape()));
  const int64_t p = int64_values(t, "position")[0];
  if (p < lowest || p > highest)
    node.fail("position " + std::to_string(p) + " is out of range [" + std::to_string(lowest) + ", " +
              std::to_string(highest) + "] for a sequence of " + std::to_string(length) + " tensors");
  return p < 0 ? p + length : p;
}

}  // namespace parity::refrt
