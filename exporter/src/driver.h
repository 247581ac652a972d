// Internal: the one translation loop, for the root graph and every subgraph (cond branches, loop and
// scan bodies), so both get the same lookup (registry, in-place rule, plugins), the custom-op fallback,
// the FX metadata on every ONNX node and one error listing every unsupported op.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "builder.h"
#include "parity/exporter/program.h"

namespace parity::exporter {

// Translates the nodes of `fx_graph` (the program's root graph or one of its subgraphs) into `builder`.
// `values` maps FX value names to ONNX names: the graph's inputs must be bound on entry; the nodes'
// outputs are bound on return. Throws parity::Error naming the node; unsupported ATen ops are collected
// first and reported together (ErrorKind::kUnsupported).
void translate_nodes(const pt2::Program& program, const pt2::Graph& fx_graph, GraphBuilder& builder, int opset,
                     std::map<std::string, std::string>& values);

// "site-packages/torch/nn/..." and the user's file name, never absolute paths: byte-identical exports.
std::string relative_stack_trace(const std::string& trace);

}  // namespace parity::exporter
