// The one translation loop (see driver.h).
#include "driver.h"

#include <functional>
#include <iostream>
#include <mutex>
#include <set>
#include <sstream>

#include "parity/error.h"
#include "parity/exporter/export.h"
#include "plugins.h"
#include "translate.h"

namespace parity::exporter {

std::string relative_stack_trace(const std::string& trace) {
  std::string out;
  std::istringstream in(trace);
  std::string line;
  while (std::getline(in, line)) {
    const std::string key = "File \"";
    auto start = line.find(key);
    if (start != std::string::npos) {
      start += key.size();
      auto end = line.find('"', start);
      if (end != std::string::npos) {
        std::string path = line.substr(start, end - start);
        auto sp = path.find("site-packages/");
        if (sp != std::string::npos)
          path = path.substr(sp + 14);
        else if (auto slash = path.rfind('/'); slash != std::string::npos)
          path = path.substr(slash + 1);
        line = line.substr(0, start) + path + line.substr(end);
      }
    }
    out += (out.empty() ? "" : "\n") + line;
  }
  return out;
}

namespace {

// nn_module_stack "key,path,class;key,path,class" -> (scopes, classes).
std::pair<std::vector<std::string>, std::vector<std::string>> module_stack(const std::string& stack) {
  std::vector<std::string> scopes, classes;
  std::istringstream in(stack);
  std::string entry;
  while (std::getline(in, entry, ';')) {
    auto first = entry.find(',');
    auto last = entry.rfind(',');
    if (first == std::string::npos || last == first) continue;
    scopes.push_back(entry.substr(first + 1, last - first - 1));
    classes.push_back(entry.substr(last + 1));
  }
  return {scopes, classes};
}

std::string py_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", '" : "'") + items[i] + "'";
  return out + "]";
}

std::vector<std::pair<std::string, std::string>> node_metadata(const pt2::Node& node) {
  auto [scopes, classes] =
      module_stack(node.metadata.count("nn_module_stack") ? node.metadata.at("nn_module_stack") : "");
  std::string ns;
  for (size_t i = 0; i < scopes.size(); ++i) ns += (scopes[i].empty() ? "" : scopes[i]) + ": " + classes[i] + "/";
  ns += pt2::OpTarget::parse(node.target).qualified();
  std::vector<std::pair<std::string, std::string>> md = {
      {"namespace", ns},
      {"pkg.torch.onnx.fx_node",
       "%" + node.name + " : call_function[target=" + pt2::OpTarget::parse(node.target).qualified() + "]"},
      {"pkg.torch.onnx.name_scopes", py_list(scopes)},
      {"pkg.torch.onnx.class_hierarchy", py_list(classes)},
  };
  if (!node.stack_trace().empty())
    md.emplace_back("pkg.torch.onnx.stack_trace", relative_stack_trace(node.stack_trace()));
  return md;
}

struct Unsupported {
  int count = 0;
  std::string first_node, first_trace;
};

// The last `File "...", line N, in f` line of a stack trace: where the op was called, not the wrapper
// that called the model.
std::string innermost_frame(const std::string& trace) {
  std::istringstream in(trace);
  std::string line, last;
  while (std::getline(in, line))
    if (line.find("File \"") != std::string::npos) last = line.substr(line.find_first_not_of(' '));
  return last;
}

[[noreturn]] void throw_unsupported(const pt2::Program& program,
                                    const std::map<std::string, Unsupported>& unsupported) {
  std::string msg = "unsupported ATen operator(s):";
  for (const auto& [key, u] : unsupported) {
    msg += "\n  " + key + " x" + std::to_string(u.count) + " (first at node '" + u.first_node + "')";
    if (const std::string site = innermost_frame(u.first_trace); !site.empty()) msg += "\n    " + site;
  }
  msg +=
      "\n  (a program can be re-decomposed with torch's own decompositions for just these ops: "
      "python -m scenarios.decompose MODEL.pt2 -o MODEL.decomposed.pt2)";
  throw Error({"export", program.archive_path, unsupported.begin()->second.first_node, unsupported.begin()->first}, msg,
              ErrorKind::kUnsupported);
}

}  // namespace

std::string registry_key(const std::string& fx_target) { return pt2::OpTarget::parse(fx_target).key(); }

namespace {

std::mutex& diagnostics_mutex() {
  static std::mutex m;
  return m;
}

DiagnosticSink& diagnostic_sink() {
  static DiagnosticSink sink;
  return sink;
}

// One warning per custom op per process, through the caller's sink (default: standard error).
void warn_once(const std::string& target, const std::string& message) {
  std::lock_guard lock(diagnostics_mutex());
  static std::set<std::string> warned;
  if (!warned.insert(target).second) return;
  if (diagnostic_sink())
    diagnostic_sink()(message);
  else
    std::cerr << "parity: warning: " << message << "\n";
}

}  // namespace

void set_diagnostic_sink(DiagnosticSink sink) {
  std::lock_guard lock(diagnostics_mutex());
  diagnostic_sink() = std::move(sink);
}

void translate_nodes(const pt2::Program& program, const pt2::Graph& fx_graph, GraphBuilder& builder, int opset,
                     std::map<std::string, std::string>& values) {
  std::map<std::string, Unsupported> unsupported;
  for (const auto& node : fx_graph.nodes) {
    const std::string key = registry_key(node.target);
    const bool complex = node_touches_complex(fx_graph, node);
    const auto translation = complex ? find_complex_translation(key, opset) : find_translation(key, opset);
    // A custom op (a TORCH_LIBRARY namespace) nobody translates: one node of the op's own domain.
    const auto custom = translation || complex ? std::nullopt : custom_op_of(node.target);
    if (!custom && (!translation || translation->min_opset > opset)) {
      auto& u = unsupported[key + (complex ? " on complex values" : "") +
                            (translation ? " (needs opset " + std::to_string(translation->min_opset) + ")" : "")];
      if (u.count++ == 0) {
        u.first_node = node.name;
        u.first_trace = relative_stack_trace(node.stack_trace());
      }
      continue;
    }
    if (!unsupported.empty()) continue;  // keep scanning for more unsupported ops only
    builder.set_current_node(node.name, node_metadata(node));
    TranslateContext ctx(program, fx_graph, node, builder, opset, values);
    try {
      if (custom) {
        const auto& [domain, op] = *custom;
        builder.use_domain(domain);
        warn_once(node.target, "export: node '" + node.name + "' (" + node.target +
                                   "): no translation, emitted as custom-domain node " + domain + "::" + op +
                                   "; refrt and onnxruntime cannot run it without a kernel");
        emit_custom_domain_node(ctx, domain, op);
      } else {
        translation->run(ctx);
      }
    } catch (const Error& e) {
      throw e.with_context({"export", program.archive_path, node.name, node.target});
    }
  }
  if (!unsupported.empty()) throw_unsupported(program, unsupported);
}

}  // namespace parity::exporter
