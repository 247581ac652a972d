#include "activation_match.h"

namespace parity::refrt {
namespace {

// Clip with constant bounds (inputs from opset 11, attributes before); nullopt otherwise.
std::optional<std::pair<float, float>> clip_bounds(const GraphIndex& ix, const NodeDef& n) {
  float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
  if (n.opset < 11) {
    const Attribute* a = n.attr("min");
    const Attribute* b = n.attr("max");
    if ((a && a->type != Attribute::Type::kFloat) || (b && b->type != Attribute::Type::kFloat)) return std::nullopt;
    return std::make_pair(a ? a->f : std::numeric_limits<float>::lowest(),
                          b ? b->f : std::numeric_limits<float>::max());
  }
  if (n.inputs.size() > 1 && !n.inputs[1].empty()) {
    auto v = ix.scalar(n.inputs[1]);
    if (!v) return std::nullopt;
    lo = *v;
  }
  if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
    auto v = ix.scalar(n.inputs[2]);
    if (!v) return std::nullopt;
    hi = *v;
  }
  if (n.inputs.size() > 3) return std::nullopt;
  return std::make_pair(lo, hi);
}

// One or two Clips in a row from `v` (two merge when their ranges overlap: clip(clip(x,a,b),c,d)
// = clip(x, max(a,c), min(b,d)) then). Returns the bounds and advances `v`.
std::optional<std::pair<float, float>> clip_chain(const GraphDef& g, const GraphIndex& ix, std::string& v,
                                                  std::vector<size_t>& nodes) {
  size_t i = 0;
  const NodeDef* c = sole_reader(g, ix, v, &i);
  if (!c || !is_op(*c, "Clip") || c->inputs[0] != v) return std::nullopt;
  auto b = clip_bounds(ix, *c);
  if (!b) return std::nullopt;
  nodes.push_back(i);
  v = c->outputs[0];
  size_t j = 0;
  const NodeDef* c2 = sole_reader(g, ix, v, &j);
  if (c2 && is_op(*c2, "Clip") && c2->inputs[0] == v) {
    auto b2 = clip_bounds(ix, *c2);
    if (b2 && std::max(b->first, b2->first) <= std::min(b->second, b2->second)) {
      b = std::make_pair(std::max(b->first, b2->first), std::min(b->second, b2->second));
      nodes.push_back(j);
      v = c2->outputs[0];
    }
  }
  return b;
}

// A Gelu node (opset 20) computing the exact form: no `approximate`, or "none".
bool exact_gelu(const NodeDef& n) {
  const Attribute* a = n.attr("approximate");
  return !a || (a->type == Attribute::Type::kString && a->s == "none");
}

// x's sole reader i starts an activation: a one-node one, a Clip chain, or clip(x + a, lo, hi) / d.
std::optional<Match> match_one_reader(const GraphDef& g, const GraphIndex& ix, const std::string& x, size_t i) {
  const NodeDef& n = g.nodes[i];
  if (n.inputs.empty() || n.inputs[0] != x || n.outputs.size() != 1) return std::nullopt;
  Match m;
  m.nodes = {i};
  m.out = n.outputs[0];
  if (is_op(n, "Relu"))
    m.steps = {{ActKind::kRelu}};
  else if (is_op(n, "Sigmoid"))
    m.steps = {{ActKind::kSigmoid}};
  else if (is_op(n, "HardSwish"))
    m.steps = {{ActKind::kHardSwish}};
  else if (is_op(n, "Gelu") && exact_gelu(n))  // opset 20's Gelu node, the exact form
    m.steps = {{ActKind::kGeluErf, {0.70710678118654752f, 0.5f, 1.0f}}};
  else if (is_op(n, "HardSigmoid"))
    m.steps = {{ActKind::kHardSigmoid, {n.attr_float("alpha", 0.2f), n.attr_float("beta", 0.5f)}}};
  else if (is_op(n, "Clip")) {
    std::string v = x;
    m.nodes.clear();
    auto b = clip_chain(g, ix, v, m.nodes);
    if (!b) return std::nullopt;
    m.steps = {{ActKind::kClip, {b->first, b->second}}};
    m.out = v;
  } else if (is_op(n, "Add")) {  // clip(x + a, lo, hi) / d  (decomposed hardsigmoid)
    auto a = other_scalar(ix, n, x);
    if (!a) return std::nullopt;
    std::string v = n.outputs[0];
    auto b = clip_chain(g, ix, v, m.nodes);
    size_t k = 0;
    const NodeDef* d = b ? sole_reader(g, ix, v, &k) : nullptr;
    if (!d || !is_op(*d, "Div") || d->inputs.size() != 2 || d->inputs[0] != v) return std::nullopt;
    auto dv = ix.scalar(d->inputs[1]);
    if (!dv) return std::nullopt;
    m.nodes.push_back(k);
    m.steps = {{ActKind::kAddClipDiv, {*a, b->first, b->second, *dv}}};
    m.out = d->outputs[0];
  } else {
    return std::nullopt;
  }
  return m;
}

// x * sigmoid(x): x read by Sigmoid n0 (index i0) and by Mul n1 (index i1).
std::optional<Match> match_silu(const GraphDef& g, const GraphIndex& ix, const std::string& x, size_t i0, size_t i1) {
  const NodeDef& n0 = g.nodes[i0];
  const NodeDef& n1 = g.nodes[i1];
  if (!is_op(n0, "Sigmoid") || !is_op(n1, "Mul") || !ix.internal(n0.outputs[0], 1) ||
      ix.readers(n0.outputs[0])[0] != i1 || n1.inputs.size() != 2 || (n1.inputs[0] != x && n1.inputs[1] != x))
    return std::nullopt;
  Match m;
  m.steps = {{ActKind::kSilu}};
  m.nodes = {i0, i1};
  m.out = n1.outputs[0];
  return m;
}

// x * clip(x + a, lo, hi) / d (decomposed hardswish), either order of Mul and Div: x read by Add n0 and Mul n1.
std::optional<Match> match_hardswish(const GraphDef& g, const GraphIndex& ix, const std::string& x, size_t i0,
                                     size_t i1) {
  const NodeDef& n0 = g.nodes[i0];
  const NodeDef& n1 = g.nodes[i1];
  if (!is_op(n0, "Add") || !is_op(n1, "Mul")) return std::nullopt;
  auto a = other_scalar(ix, n0, x);
  if (!a) return std::nullopt;
  std::vector<size_t> nodes{i0};
  std::string v = n0.outputs[0];
  auto b = clip_chain(g, ix, v, nodes);
  if (!b) return std::nullopt;
  size_t k = 0;
  const NodeDef* next = sole_reader(g, ix, v, &k);
  if (!next) return std::nullopt;
  const bool mul_reads =
      n1.inputs.size() == 2 && ((n1.inputs[0] == x && n1.inputs[1] != x) || (n1.inputs[1] == x && n1.inputs[0] != x));
  if (!mul_reads) return std::nullopt;
  const std::string other = n1.inputs[0] == x ? n1.inputs[1] : n1.inputs[0];
  Match m;
  if (k == i1 && other == v) {  // Mul(x, clip) then Div(d)
    size_t j = 0;
    const NodeDef* d = sole_reader(g, ix, n1.outputs[0], &j);
    auto dv = d && is_op(*d, "Div") && d->inputs[0] == n1.outputs[0] ? ix.scalar(d->inputs[1]) : std::nullopt;
    if (!dv) return std::nullopt;
    nodes.push_back(i1);
    nodes.push_back(j);
    m.steps = {{ActKind::kMulAddClipDiv, {*a, b->first, b->second, *dv}}};
    m.out = d->outputs[0];
  } else if (is_op(*next, "Div") && next->inputs.size() == 2 && next->inputs[0] == v &&
             ix.internal(next->outputs[0], 1) && ix.readers(next->outputs[0])[0] == i1 &&
             other == next->outputs[0]) {  // Div(clip, d) then Mul(x, .)
    auto dv = ix.scalar(next->inputs[1]);
    if (!dv) return std::nullopt;
    nodes.push_back(k);
    nodes.push_back(i1);
    m.steps = {{ActKind::kMulAddClipDiv2, {*a, b->first, b->second, *dv}}};
    m.out = n1.outputs[0];
  } else {
    return std::nullopt;
  }
  m.nodes = nodes;
  return m;
}

// (x * c1) * (erf(x * c0) + c2), exact GELU as decompositions write it: x read by Muls n0 (erf side) and n1.
std::optional<Match> match_gelu_erf(const GraphDef& g, const GraphIndex& ix, const std::string& x, size_t i0,
                                    size_t i1) {
  const NodeDef& n0 = g.nodes[i0];
  const NodeDef& n1 = g.nodes[i1];
  if (!is_op(n0, "Mul") || !is_op(n1, "Mul")) return std::nullopt;
  auto c0 = other_scalar(ix, n0, x), c1 = other_scalar(ix, n1, x);
  if (!c0 || !c1) return std::nullopt;
  size_t ie = 0, ia = 0, im = 0;
  const NodeDef* e = sole_reader(g, ix, n0.outputs[0], &ie);
  if (!e || !is_op(*e, "Erf")) return std::nullopt;
  const NodeDef* a = sole_reader(g, ix, e->outputs[0], &ia);
  if (!a || !is_op(*a, "Add")) return std::nullopt;
  auto c2 = other_scalar(ix, *a, e->outputs[0]);
  const NodeDef* mm = c2 ? sole_reader(g, ix, a->outputs[0], &im) : nullptr;
  if (!mm || !is_op(*mm, "Mul") || mm->inputs.size() != 2 || !ix.internal(n1.outputs[0], 1) ||
      ix.readers(n1.outputs[0])[0] != im)
    return std::nullopt;
  if (!((mm->inputs[0] == n1.outputs[0] && mm->inputs[1] == a->outputs[0]) ||
        (mm->inputs[1] == n1.outputs[0] && mm->inputs[0] == a->outputs[0])))
    return std::nullopt;
  Match m;
  m.steps = {{ActKind::kGeluErf, {*c0, *c1, *c2}}};
  m.nodes = {i0, ie, i1, ia, im};
  m.out = mm->outputs[0];
  return m;
}

}  // namespace

// The activation pattern that starts at value `x` (its readers), if any.
std::optional<Match> match_activation(const GraphDef& g, const GraphIndex& ix, const std::string& x) {
  if (ix.outputs.count(x)) return std::nullopt;
  const auto& readers = ix.readers(x);
  auto plain = [&](size_t i) { return g.nodes[i].domain.empty() && g.nodes[i].implicit_inputs.empty(); };
  for (size_t i : readers)
    if (!plain(i)) return std::nullopt;
  if (readers.size() == 1) return match_one_reader(g, ix, x, readers[0]);
  if (readers.size() != 2 || readers[0] == readers[1]) return std::nullopt;
  for (int flip = 0; flip < 2; ++flip) {
    const size_t i0 = readers[flip], i1 = readers[1 - flip];
    for (auto matcher : {match_silu, match_hardswish, match_gelu_erf})
      if (auto m = matcher(g, ix, x, i0, i1)) return m;
  }
  return std::nullopt;
}

bool anchor_op(const NodeDef& n, std::string* fused) {
  static const std::map<std::string, std::string> anchors = {{"Conv", "FusedConv"},
                                                             {"Gemm", "FusedGemm"},
                                                             {"MatMul", "FusedMatMul"},
                                                             {"BatchNormalization", "FusedBatchNormalization"}};
  if (n.domain == kFusedDomain && (n.op_type == "FusedConv" || n.op_type == "FusedGemm" || n.op_type == "FusedMatMul" ||
                                   n.op_type == "FusedBatchNormalization")) {
    *fused = n.op_type;
    return true;
  }
  if (!n.domain.empty() || n.outputs.size() != 1) return false;
  // BatchNormalization in inference only (one output; the fused kernel keeps no statistics), not opset 7's
  // spatial=0.
  if (n.op_type == "BatchNormalization" &&
      (n.attr_int("training_mode", 0) != 0 || (n.opset < 9 && n.attr_int("spatial", 1) == 0)))
    return false;
  auto it = anchors.find(n.op_type);
  if (it == anchors.end()) return false;
  *fused = it->second;
  return true;
}

void take_match(GraphDef& g, size_t i, const std::string& op, const Match& m, std::vector<bool>& dead) {
  NodeDef& n = g.nodes[i];
  make_fused(n, op);
  std::vector<ActStep> steps = parse_activations(n);
  steps.insert(steps.end(), m.steps.begin(), m.steps.end());
  store_activations(n, steps);
  for (size_t k : m.nodes) {
    absorb(n, g.nodes[k]);
    dead[k] = true;
  }
  n.outputs[0] = m.out;
}

}  // namespace parity::refrt
