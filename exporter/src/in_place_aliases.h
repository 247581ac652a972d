// Training-IR programs written as values: in-place results renamed to the tensor they wrote, views read
// after a write taken again from the newest base (in_place_aliases.cc says why).
#pragma once
#include <vector>

#include "parity/exporter/program.h"

namespace parity::pt2 {

// Rewrites `graph` (and the output specs that name its values) so that every read of a tensor, under any
// of its names, sees the newest write. Graphs without in-place writes are left untouched.
void resolve_in_place_aliases(Graph& graph, std::vector<OutputSpec>& output_specs);

}  // namespace parity::pt2
