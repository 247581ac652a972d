// Internal to refrt's load-time passes: activation patterns (one-node activations, Clip chains, SiLU,
// decomposed hardswish and exact GELU) found from the value they start at, as the steps of a fused
// activation epilogue.
#pragma once
#include "../activation.h"
#include "pass_util.h"

namespace parity::refrt {

struct Match {
  std::vector<ActStep> steps;
  std::vector<size_t> nodes;  // consumed, in order
  std::string out;            // the value the chain ends in
};

// The activation pattern that starts at value `x` (its readers), if any.
std::optional<Match> match_activation(const GraphDef& g, const GraphIndex& ix, const std::string& x);

// Conv / Gemm / MatMul / BatchNormalization (or their fused forms) that an activation can follow as an epilogue;
// sets the fused op name.
bool anchor_op(const NodeDef& n, std::string* fused);

// Appends the matched steps to node `i` (turned into `op`) and removes the matched nodes.
void take_match(GraphDef& g, size_t i, const std::string& op, const Match& m, std::vector<bool>& dead);

}  // namespace parity::refrt
