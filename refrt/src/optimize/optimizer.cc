#include "optimizer.h"

#include <utility>

#include "passes.h"

namespace parity::refrt {
namespace {

// The registry: every pass with its name, in the order they run (an activation fuses into the conv that
// BatchNormalization and a residual Add were folded into first). fuse_qdq and fuse_weight_only run before
// constant folding (optimize_graph_before_folding) and again here on what folding exposed.
using Pass = bool (*)(GraphDef&);
const std::vector<std::pair<std::string, Pass>>& passes() {
  static const std::vector<std::pair<std::string, Pass>> all = {
      {"fuse_qdq", fuse_qdq},
      {"fuse_weight_only", fuse_weight_only},
      {"drop_unused_outputs", drop_unused_outputs},
      {"fold_batch_norm", fold_batch_norm},
      {"fuse_matmul_add", fuse_matmul_add},
      {"fuse_conv_add", fuse_conv_add},
      {"fuse_activation", fuse_activation},
      {"fuse_elementwise", fuse_elementwise},
      {"fuse_rms_norm", fuse_rms_norm},
      {"fuse_safe_softmax", fuse_safe_softmax},
      {"fuse_attention", fuse_attention},
      {"fold_transpose_matmul", fold_transpose_matmul},
      {"group_sibling_matmuls", group_sibling_matmuls},
      {"keep_conv_blocks", keep_conv_blocks},
      {"keep_widened", keep_widened},
  };
  return all;
}

}  // namespace

const std::vector<std::string>& optimization_passes() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& [name, _] : passes()) v.push_back(name);
    return v;
  }();
  return names;
}

void optimize_graph_before_folding(GraphDef& graph, const std::set<std::string>& disabled) {
  if (!disabled.count("fuse_qdq")) fuse_qdq(graph);
  if (!disabled.count("fuse_weight_only")) fuse_weight_only(graph);
}

void optimize_graph(GraphDef& graph, const std::set<std::string>& disabled, const std::string& origin) {
  for (const auto& name : disabled) {
    bool known = false;
    for (const auto& [n, _] : passes()) known = known || n == name;
    if (!known) throw Error({"refrt", origin}, "unknown optimization pass '" + name + "'", ErrorKind::kUsage);
  }
  for (const auto& [name, pass] : passes())
    if (!disabled.count(name)) pass(graph);
}

}  // namespace parity::refrt
