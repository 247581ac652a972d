// Training-IR programs written as values: in-place results renamed to the tensor they wrote, views read
// after a write taken again from the newest base (in_place_aliases.cc says why).
#pragma once
#include <string>
#include <vector>

#include "parity/exporter/program.h"

namespace parity::pt2 {

// The tensors a node writes: `self` of an in-place aten op, the running statistics of batch norm in training
// mode (mutable arguments that are not `self`).
std::vector<std::string> tensors_written_by(const Node& n);

// A node's tensor outputs, lists flattened (split and unbind make several).
std::vector<std::string> output_tensor_names(const Node& n);

// Rewrites `graph` (and the output specs that name its values) so that every read of a tensor, under any
// of its names, sees the newest write. Graphs without in-place writes are left untouched.
void resolve_in_place_aliases(Graph& graph, std::vector<OutputSpec>& output_specs);

}  // namespace parity::pt2
