#include "intermediates.h"

#include <cmath>
#include <regex>

#include "parity/exporter/export.h"
#include "parity/verify/compare.h"
#include "ties.h"

namespace parity::verify {

using json = nlohmann::json;

std::string source_of(const std::string& stack_trace) {
  static const std::regex frame(R"re(File "([^"]*)", line (\d+), in (\S+)\n\s*([^\n]*))re");
  std::string first;
  for (auto it = std::sregex_iterator(stack_trace.begin(), stack_trace.end(), frame); it != std::sregex_iterator();
       ++it) {
    const std::smatch& m = *it;
    const std::string text = m[1].str() + ":" + m[2].str() + " in " + m[3].str() + ": " + m[4].str();
    // The user's line is the first frame outside installed packages (strict export adds torch's own
    // frames above it, nn.Module frames come below it).
    const std::string file = m[1].str();
    if (file.find("site-packages/") == std::string::npos && file.find("dist-packages/") == std::string::npos)
      return text;
    if (first.empty()) first = text;
  }
  return first.empty() ? stack_trace.substr(0, stack_trace.find('\n')) : first;
}

namespace {

std::vector<std::string> output_tensor_names(const pt2::Node& node) {
  std::vector<std::string> names;
  for (const auto& out : node.outputs) {
    if (out.is(pt2::ArgKind::as_tensor))
      names.push_back(out.tensor_name());
    else if (out.is(pt2::ArgKind::as_tensors))
      for (const auto& n : out.tensor_names()) names.push_back(n);
  }
  return names;
}

json error_value(double v) { return std::isfinite(v) ? json(v) : json("Infinity"); }

}  // namespace

IntermediateScan compare_intermediates(const pt2::Program& program,
                                       const std::map<std::string, OnnxProducer>& producers,
                                       const std::map<std::string, Tensor>& libtorch,
                                       const std::map<std::string, Tensor>& refrt) {
  IntermediateScan scan;
  const auto& nodes = program.graph.nodes;
  for (size_t index = 0; index < nodes.size(); ++index) {
    const pt2::Node& node = nodes[index];
    for (const auto& value : output_tensor_names(node)) {
      const auto theirs = libtorch.find(value);
      const auto ours = refrt.find(value);
      if (theirs == libtorch.end() || ours == refrt.end()) {
        ++scan.unmatched;
        continue;
      }
      Comparison cmp = compare_tensors(theirs->second, ours->second);
      if (!cmp.passed)
        if (const auto source = index_source(program, value)) {
          const auto input = libtorch.find(source->input_value);
          if (input != libtorch.end()) settle_ties(cmp, *source, input->second, theirs->second, ours->second);
        }
      const auto producer = producers.find(value);
      const std::string onnx_node = producer == producers.end() ? "" : producer->second.node;
      const std::string onnx_op = producer == producers.end() ? "" : producer->second.op_type;
      json entry = cmp.to_json();
      entry.erase("detail");  // kept for the first divergence only: every value after it differs too
      entry["fx_node"] = node.name;
      entry["value"] = value;
      entry["op"] = exporter::registry_key(node.target);
      entry["onnx_node"] = onnx_node;
      entry["onnx_op"] = onnx_op;
      entry["index"] = index;
      scan.values.push_back(entry);
      if (!cmp.passed && scan.first_index < 0) {
        scan.first_index = static_cast<int64_t>(index);
        scan.first_divergence = {{"fx_node", node.name},
                                 {"value", value},
                                 {"onnx_node", onnx_node},
                                 {"onnx_op", onnx_op},
                                 {"op", exporter::registry_key(node.target)},
                                 {"source", source_of(node.stack_trace())},
                                 {"max_abs_error", error_value(cmp.problem.empty() ? cmp.max_abs_error : INFINITY)},
                                 {"mismatches", cmp.mismatches},
                                 {"numel", cmp.numel}};
        if (!cmp.problem.empty()) scan.first_divergence["problem"] = cmp.problem;
        if (cmp.detail) scan.first_divergence["detail"] = *cmp.detail;
      }
    }
  }
  return scan;
}

}  // namespace parity::verify
