// Internal: exact export-time evaluation of the few ONNX ops constant folding handles (shape arithmetic
// and data movement). No refrt: the exporter must convert a .pt2 on its own. Opset >= 13 semantics
// (Squeeze/Unsqueeze/Slice take their axes as inputs).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "onnx/onnx-ml.pb.h"
#include "parity/tensor.h"

namespace parity::exporter {

// Whether evaluate_constant knows `op_type` (default domain). Shape and Size are among them.
bool is_foldable_op(const std::string& op_type);

// `inputs[i]` is nullptr for an absent optional input. nullopt when the node cannot be folded exactly:
// an unsupported dtype, an input the runtime would reject (left for the runtime to report), or a result
// of more than `max_elements` elements.
std::optional<Tensor> evaluate_constant(const onnx::NodeProto& node, const std::vector<const Tensor*>& inputs,
                                        int64_t max_elements);

// The [begin, end) range of dims a Shape node (start/end attributes, opset 15) returns for rank `rank`.
std::pair<int64_t, int64_t> shape_op_range(const onnx::NodeProto& shape_node, int64_t rank);

// The shape Reshape(input, target) produces (0 copies an input dim unless `allow_zero`, -1 is inferred);
// nullopt when the runtime would reject it.
std::optional<Shape> reshape_target(const Shape& input, const std::vector<int64_t>& target, bool allow_zero);

// The integer attribute `name` of `node`, or `fallback`.
int64_t int_attribute(const onnx::NodeProto& node, const std::string& name, int64_t fallback);

// A 1-D (or, with `scalar`, 0-D) int64 tensor.
Tensor int64_tensor(const std::vector<int64_t>& values, bool scalar = false);
// The values of an int32/int64 tensor; nullopt for other dtypes.
std::optional<std::vector<int64_t>> int_values(const Tensor& t);

}  // namespace parity::exporter
