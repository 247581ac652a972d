// `parity export --report`: what a user needs to act on a failed (or successful) export, in Markdown.
#include <deque>
#include <map>
#include <sstream>

#include "parity/error.h"
#include "parity/exporter/export.h"
#include "parity/fs.h"
#include "translate.h"

namespace parity::exporter {
namespace {

struct OpUse {
  int count = 0;
  std::vector<const pt2::Node*> nodes;  // where it is used (root graph and subgraphs)
};

// Every node of the program, subgraphs of higher-order ops included: parsed subgraphs are appended to
// `storage` (a deque, so earlier graphs and node pointers stay valid) and visited by the caller.
void collect_nodes(const pt2::Graph& graph, std::vector<const pt2::Node*>& out, std::deque<pt2::Graph>& storage) {
  for (const auto& node : graph.nodes) {
    out.push_back(&node);
    for (const auto& in : node.inputs)
      if (in.arg.is(pt2::ArgKind::as_graph)) storage.push_back(in.arg.subgraph());
  }
}

std::string fence(const std::string& text) {
  return "```\n" + (text.empty() ? std::string("(none recorded)") : text) + "\n```\n";
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

std::string describe_args(const pt2::Node& node) {
  std::string out;
  for (const auto& in : node.inputs) {
    if (!out.empty()) out += ", ";
    if (in.arg.is(pt2::ArgKind::as_tensor))
      out += "%" + in.arg.tensor_name();
    else if (in.arg.is(pt2::ArgKind::as_graph))
      out += in.name + "=<subgraph>";
    else
      out += in.name + "=" + in.arg.value_text();
  }
  if (out.size() > 160) out = out.substr(0, 157) + "...";
  return out;
}

std::string describe_outputs(const pt2::Node& node) {
  std::string out;
  for (const auto& o : node.outputs) {
    if (!out.empty()) out += ", ";
    if (o.is(pt2::ArgKind::as_tensor))
      out += "%" + o.tensor_name();
    else if (o.is(pt2::ArgKind::as_tensors))
      for (const auto& n : o.tensor_names()) out += (out.empty() || out.back() == ' ' ? "%" : ", %") + n;
    else
      out += o.kind_name();
  }
  return out;
}

// The report's "Graph" section: one line per top-level node, with the user's source line that made it.
void write_graph_listing(std::ostringstream& md, const pt2::Graph& graph) {
  md << "\n## Graph (" << graph.nodes.size() << " nodes)\n\n```\n";
  for (const auto& n : graph.nodes) {
    md << describe_outputs(n) << " = " << registry_key(n.target) << "(" << describe_args(n) << ")";
    const std::string trace = n.stack_trace();
    if (!trace.empty()) {
      // The innermost frame: the user's line that created the node.
      const auto last = trace.rfind("File \"");
      if (last != std::string::npos) md << "  # " << first_line(trace.substr(last));
    }
    md << "\n";
  }
  md << "```\n";
}

}  // namespace

std::string report_path_for(const std::string& onnx_path) {
  const std::string suffix = ".onnx";
  const bool has_suffix = onnx_path.size() > suffix.size() &&
                          onnx_path.compare(onnx_path.size() - suffix.size(), suffix.size(), suffix) == 0;
  return (has_suffix ? onnx_path.substr(0, onnx_path.size() - suffix.size()) : onnx_path) + ".report.md";
}

void write_export_report(const std::string& pt2_path, const ExportOptions& options, const Error* failure,
                         const std::string& report_path) {
  std::ostringstream md;
  md << "# Export report: " << pt2_path << "\n\n";
  md << "- opset: " << (options.opset == kAutoOpset ? std::string("auto") : std::to_string(options.opset)) << "\n";
  if (failure) {
    const auto& c = failure->context();
    md << "- result: **failed** at stage `" << (c.stage.empty() ? "export" : c.stage) << "`";
    if (!c.node.empty()) md << ", node `" << c.node << "`";
    if (!c.op.empty()) md << " (`" << c.op << "`)";
    md << "\n\n" << fence(failure->message());
  } else {
    md << "- result: exported\n";
  }

  pt2::Program program;
  try {
    program = pt2::read_pt2(pt2_path);
  } catch (const Error& e) {
    md << "\nThe archive could not be read, so there is no graph to show:\n\n" << fence(e.message());
    write_file_atomic(report_path, md.str(), "export");
    return;
  }
  std::deque<pt2::Graph> subgraphs;
  std::vector<const pt2::Node*> nodes;
  collect_nodes(program.graph, nodes, subgraphs);
  for (size_t i = 0; i < subgraphs.size(); ++i) collect_nodes(subgraphs[i], nodes, subgraphs);

  std::map<std::string, OpUse> ops;
  for (const pt2::Node* n : nodes) {
    OpUse& use = ops[registry_key(n->target)];
    ++use.count;
    use.nodes.push_back(n);
  }
  auto translated = [&](const std::string& key) {
    auto t = find_translation(key, options.opset);
    if (!t) t = find_complex_translation(key, options.opset);
    return t && t->min_opset <= options.opset;
  };

  md << "\n## Unsupported operators\n\n";
  int missing = 0;
  for (const auto& [key, use] : ops) {
    if (translated(key)) continue;
    if (missing++ == 0) md << "| ATen overload | count | first node |\n|---|---|---|\n";
    md << "| `" << key << "` | " << use.count << " | `" << use.nodes.front()->name << "` |\n";
  }
  if (missing == 0) md << "None: every operator of the program has a translation at opset " << options.opset << ".\n";
  for (const auto& [key, use] : ops) {
    if (translated(key)) continue;
    md << "\n### `" << key << "`\n";
    for (const pt2::Node* n : use.nodes) md << "\nnode `" << n->name << "`:\n\n" << fence(n->stack_trace());
  }

  if (failure && !failure->context().node.empty()) {
    for (const pt2::Node* n : nodes) {
      if (n->name != failure->context().node) continue;
      md << "\n## Failing node `" << n->name << "`\n\n`" << describe_outputs(*n) << " = " << registry_key(n->target)
         << "(" << describe_args(*n) << ")`\n\n"
         << fence(n->stack_trace());
      break;
    }
  }

  md << "\n## Operators\n\n| ATen overload | count | translated |\n|---|---|---|\n";
  for (const auto& [key, use] : ops)
    md << "| `" << key << "` | " << use.count << " | " << (translated(key) ? "yes" : "**no**") << " |\n";

  write_graph_listing(md, program.graph);
  write_file_atomic(report_path, md.str(), "export");
}

}  // namespace parity::exporter
