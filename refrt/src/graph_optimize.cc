#include "graph_optimize.h"

#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "activation.h"

namespace parity::refrt {
namespace {

// Who produces and who reads each value of a graph; rebuilt after every rewrite.
struct GraphIndex {
  std::map<std::string, size_t> producer;
  std::map<std::string, std::vector<size_t>> consumers;
  std::set<std::string> outputs;
  std::map<std::string, const Tensor*> constants;  // initializers a graph input cannot override

  explicit GraphIndex(const GraphDef& g) {
    for (const auto& [name, t] : g.initializers) constants[name] = &t;
    for (const auto& in : g.inputs) constants.erase(in.name);
    for (const auto& name : g.outer_names) constants.erase(name);
    for (const auto& out : g.outputs) outputs.insert(out.name);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      for (const auto& out : g.nodes[i].outputs)
        if (!out.empty()) producer[out] = i;
      for (const auto& in : g.nodes[i].inputs)
        if (!in.empty()) consumers[in].push_back(i);
      for (const auto& in : g.nodes[i].implicit_inputs) consumers[in].push_back(i);
    }
  }
  const std::vector<size_t>& readers(const std::string& v) const {
    static const std::vector<size_t> none;
    auto it = consumers.find(v);
    return it == consumers.end() ? none : it->second;
  }
  // `v` is read by exactly `n` nodes and is not a graph output: fusing its readers removes it.
  bool internal(const std::string& v, size_t n) const { return !outputs.count(v) && readers(v).size() == n; }
  const Tensor* constant(const std::string& v) const {
    auto it = constants.find(v);
    return it == constants.end() ? nullptr : it->second;
  }
  // A float32 scalar constant (any rank, one element).
  std::optional<float> scalar(const std::string& v) const {
    const Tensor* t = constant(v);
    if (!t || t->dtype() != DType::kFloat32 || t->numel() != 1) return std::nullopt;
    return *t->data<float>();
  }
};

bool is_op(const NodeDef& n, const char* op) { return n.domain.empty() && n.op_type == op; }

// The plain ai.onnx node reading `v` when it is its only reader (and `v` is no graph output).
const NodeDef* sole_reader(const GraphDef& g, const GraphIndex& ix, const std::string& v, size_t* index = nullptr) {
  if (!ix.internal(v, 1)) return nullptr;
  const size_t i = ix.readers(v)[0];
  if (index) *index = i;
  return g.nodes[i].domain.empty() && g.nodes[i].implicit_inputs.empty() ? &g.nodes[i] : nullptr;
}

// For a binary node with `v` as one operand: the other operand's float32 scalar value.
std::optional<float> other_scalar(const GraphIndex& ix, const NodeDef& n, const std::string& v) {
  if (n.inputs.size() != 2) return std::nullopt;
  if (n.inputs[0] == v && n.inputs[1] != v) return ix.scalar(n.inputs[1]);
  if (n.inputs[1] == v && n.inputs[0] != v) return ix.scalar(n.inputs[0]);
  return std::nullopt;
}

struct Match {
  std::vector<ActStep> steps;
  std::vector<size_t> nodes;  // consumed, in order
  std::string out;            // the value the chain ends in
};

// Clip with constant bounds (inputs from opset 11, attributes before); nullopt otherwise.
std::optional<std::pair<float, float>> clip_bounds(const GraphIndex& ix, const NodeDef& n) {
  float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
  if (n.opset < 11) {
    const Attribute* a = n.attr("min");
    const Attribute* b = n.attr("max");
    if ((a && a->type != Attribute::Type::kFloat) || (b && b->type != Attribute::Type::kFloat)) return std::nullopt;
    return std::make_pair(a ? a->f : std::numeric_limits<float>::lowest(), b ? b->f : std::numeric_limits<float>::max());
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

// x's sole reader i starts an activation: a one-node one, a Clip chain, or clip(x + a, lo, hi) / d.
std::optional<Match> match_one_reader(const GraphDef& g, const GraphIndex& ix, const std::string& x, size_t i) {
  const NodeDef& n = g.nodes[i];
  if (n.inputs.empty() || n.inputs[0] != x || n.outputs.size() != 1) return std::nullopt;
  Match m;
  m.nodes = {i};
  m.out = n.outputs[0];
  if (is_op(n, "Relu")) m.steps = {{ActKind::kRelu}};
  else if (is_op(n, "Sigmoid")) m.steps = {{ActKind::kSigmoid}};
  else if (is_op(n, "HardSwish")) m.steps = {{ActKind::kHardSwish}};
  else if (is_op(n, "HardSigmoid")) m.steps = {{ActKind::kHardSigmoid, {n.attr_float("alpha", 0.2f), n.attr_float("beta", 0.5f)}}};
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
    if (!d || !is_op(*d, "Div") || d->inputs[0] != v) return std::nullopt;
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
  if (!is_op(n0, "Sigmoid") || !is_op(n1, "Mul") || !ix.internal(n0.outputs[0], 1) || ix.readers(n0.outputs[0])[0] != i1 ||
      n1.inputs.size() != 2 || (n1.inputs[0] != x && n1.inputs[1] != x))
    return std::nullopt;
  Match m;
  m.steps = {{ActKind::kSilu}};
  m.nodes = {i0, i1};
  m.out = n1.outputs[0];
  return m;
}

// x * clip(x + a, lo, hi) / d (decomposed hardswish), either order of Mul and Div: x read by Add n0 and Mul n1.
std::optional<Match> match_hardswish(const GraphDef& g, const GraphIndex& ix, const std::string& x, size_t i0, size_t i1) {
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
  const bool mul_reads = n1.inputs.size() == 2 && ((n1.inputs[0] == x && n1.inputs[1] != x) || (n1.inputs[1] == x && n1.inputs[0] != x));
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
  } else if (is_op(*next, "Div") && next->inputs[0] == v && ix.internal(next->outputs[0], 1) &&
             ix.readers(next->outputs[0])[0] == i1 && other == next->outputs[0]) {  // Div(clip, d) then Mul(x, .)
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
std::optional<Match> match_gelu_erf(const GraphDef& g, const GraphIndex& ix, const std::string& x, size_t i0, size_t i1) {
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
  if (!mm || !is_op(*mm, "Mul") || !ix.internal(n1.outputs[0], 1) || ix.readers(n1.outputs[0])[0] != im) return std::nullopt;
  if (!((mm->inputs[0] == n1.outputs[0] && mm->inputs[1] == a->outputs[0]) ||
        (mm->inputs[1] == n1.outputs[0] && mm->inputs[0] == a->outputs[0])))
    return std::nullopt;
  Match m;
  m.steps = {{ActKind::kGeluErf, {*c0, *c1, *c2}}};
  m.nodes = {i0, ie, i1, ia, im};
  m.out = mm->outputs[0];
  return m;
}

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

}  // namespace

void compact(GraphDef& g, const std::vector<bool>& dead) {
  std::vector<NodeDef> kept;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!dead[i]) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
  std::set<std::string> used;
  for (const auto& n : g.nodes) {
    used.insert(n.inputs.begin(), n.inputs.end());
    used.insert(n.implicit_inputs.begin(), n.implicit_inputs.end());
  }
  for (const auto& o : g.outputs) used.insert(o.name);
  std::vector<std::pair<std::string, Tensor>> inits;
  for (auto& [name, t] : g.initializers)
    if (used.count(name)) inits.emplace_back(name, std::move(t));
  g.initializers = std::move(inits);
}

namespace {

void absorb(NodeDef& into, const NodeDef& part) {
  into.fused_from.emplace_back(part.name, part.op_type);
}

// Turns an ai.onnx anchor node into its fused form (same attributes, private domain).
void make_fused(NodeDef& n, const std::string& op) {
  if (n.domain == kFusedDomain) return;
  if (n.fused_from.empty()) n.fused_from.emplace_back(n.name, n.op_type);
  n.op_type = op;
  n.domain = kFusedDomain;
  n.opset = 1;
}

std::string fresh_name(const GraphDef& g, const std::vector<std::pair<std::string, Tensor>>& added, const std::string& base) {
  std::set<std::string> taken;
  for (const auto& [name, _] : added) taken.insert(name);
  for (const auto& [name, _] : g.initializers) taken.insert(name);
  for (const auto& n : g.nodes) taken.insert(n.outputs.begin(), n.outputs.end());
  std::string name = base;
  for (int i = 1; taken.count(name); ++i) name = base + "_" + std::to_string(i);
  return name;
}

// ---- passes: each returns whether it changed the graph

// Optional trailing outputs nobody reads (MaxPool's indices, LayerNormalization's mean and inverse
// std, Dropout's mask, as exporters write them): dropped, so the kernel does not compute them.
bool drop_unused_outputs(GraphDef& g) {
  static const std::set<std::string> ops = {"MaxPool", "LayerNormalization", "Dropout"};
  GraphIndex ix(g);
  bool changed = false;
  for (NodeDef& n : g.nodes) {
    if (!n.domain.empty() || !ops.count(n.op_type)) continue;
    size_t keep = n.outputs.size();
    while (keep > 1 && (n.outputs[keep - 1].empty() || ix.internal(n.outputs[keep - 1], 0))) --keep;
    if (keep == n.outputs.size()) continue;
    n.outputs.resize(keep);
    changed = true;
  }
  return changed;
}

bool fold_batch_norm(GraphDef& g) {
  GraphIndex ix(g);
  std::vector<bool> dead(g.nodes.size(), false);
  bool changed = false;
  std::vector<std::pair<std::string, Tensor>> added;
  for (size_t bi = 0; bi < g.nodes.size(); ++bi) {
    NodeDef& bn = g.nodes[bi];
    if (!is_op(bn, "BatchNormalization") || bn.attr_int("training_mode", 0) != 0 || bn.inputs.size() != 5) continue;
    bool extra_outputs = false;
    for (size_t k = 1; k < bn.outputs.size(); ++k) extra_outputs = extra_outputs || !bn.outputs[k].empty();
    if (extra_outputs || (bn.opset < 9 && bn.attr_int("spatial", 1) == 0)) continue;
    auto p = ix.producer.find(bn.inputs[0]);
    if (p == ix.producer.end() || dead[p->second] || !ix.internal(bn.inputs[0], 1)) continue;
    NodeDef& conv = g.nodes[p->second];
    if (!is_op(conv, "Conv") || conv.outputs.size() != 1) continue;
    const Tensor* w = ix.constant(conv.inputs[1]);
    const Tensor* b = conv.inputs.size() > 2 && !conv.inputs[2].empty() ? ix.constant(conv.inputs[2]) : nullptr;
    if (!w || w->dtype() != DType::kFloat32 || w->rank() < 3 || (conv.inputs.size() > 2 && !conv.inputs[2].empty() && !b)) continue;
    const int64_t m = w->dim(0);
    const Tensor* params[4];
    bool ok = !b || (b->dtype() == DType::kFloat32 && b->numel() == m);
    for (int k = 0; k < 4 && ok; ++k) {
      params[k] = ix.constant(bn.inputs[static_cast<size_t>(k) + 1]);
      ok = params[k] && params[k]->dtype() == DType::kFloat32 && params[k]->rank() == 1 && params[k]->numel() == m;
    }
    if (!ok) continue;
    const float eps = bn.attr_float("epsilon", 1e-5f);
    const float *scale = params[0]->data<float>(), *shift = params[1]->data<float>(), *mean = params[2]->data<float>(),
                *var = params[3]->data<float>();
    Tensor nw(DType::kFloat32, w->shape()), nb(DType::kFloat32, {m});
    const int64_t per = w->numel() / std::max<int64_t>(m, 1);
    for (int64_t o = 0; o < m; ++o) {
      const double s = static_cast<double>(scale[o]) / std::sqrt(static_cast<double>(var[o]) + static_cast<double>(eps));
      for (int64_t j = 0; j < per; ++j) nw.data<float>()[o * per + j] = static_cast<float>(w->data<float>()[o * per + j] * s);
      const double bias = b ? static_cast<double>(b->data<float>()[o]) : 0.0;
      nb.data<float>()[o] = static_cast<float>((bias - static_cast<double>(mean[o])) * s + static_cast<double>(shift[o]));
    }
    // Appended after the loop: growing g.initializers here would move the tensors `ix` points to.
    const std::string wn = fresh_name(g, added, conv.name + ".folded_weight");
    added.emplace_back(wn, std::move(nw));
    const std::string bname = fresh_name(g, added, conv.name + ".folded_bias");
    added.emplace_back(bname, std::move(nb));
    conv.inputs.resize(3);
    conv.inputs[1] = wn;
    conv.inputs[2] = bname;
    if (conv.fused_from.empty()) conv.fused_from.emplace_back(conv.name, conv.op_type);
    absorb(conv, bn);
    conv.outputs[0] = bn.outputs[0];
    dead[bi] = true;
    changed = true;
  }
  for (auto& init : added) g.initializers.push_back(std::move(init));
  if (changed) compact(g, dead);
  return changed;
}

// Conv (BatchNormalization already folded) + Add of another computed tensor (a residual connection):
// the Add becomes the conv's epilogue, input 3 of FusedConv; activations after it can then fuse too.
bool fuse_conv_add(GraphDef& g) {
  GraphIndex ix(g);
  std::vector<bool> dead(g.nodes.size(), false);
  bool changed = false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    NodeDef& conv = g.nodes[i];
    const bool plain = is_op(conv, "Conv") || (conv.domain == kFusedDomain && conv.op_type == "FusedConv" &&
                                               !conv.attr("activations") && conv.inputs.size() <= 3);
    if (dead[i] || !plain || conv.outputs.size() != 1) continue;
    size_t ai = 0;
    const NodeDef* add = sole_reader(g, ix, conv.outputs[0], &ai);
    if (!add || dead[ai] || !is_op(*add, "Add") || add->inputs.size() != 2 || add->inputs[0] == add->inputs[1]) continue;
    const std::string& other = add->inputs[0] == conv.outputs[0] ? add->inputs[1] : add->inputs[0];
    if (ix.constant(other)) continue;  // a constant is a bias, not a residual
    // The other operand must exist before the conv runs: not produced by a node after it that
    // depends on the conv (plan_graph's sort would then find a cycle).
    auto p = ix.producer.find(other);
    if (p != ix.producer.end() && p->second > i) continue;
    make_fused(conv, "FusedConv");
    conv.inputs.resize(4);
    conv.inputs[3] = other;
    absorb(conv, *add);
    conv.outputs[0] = add->outputs[0];
    dead[ai] = true;
    changed = true;
  }
  if (changed) compact(g, dead);
  return changed;
}

bool anchor_op(const NodeDef& n, std::string* fused) {
  static const std::map<std::string, std::string> anchors = {{"Conv", "FusedConv"}, {"Gemm", "FusedGemm"}, {"MatMul", "FusedMatMul"}};
  if (n.domain == kFusedDomain && (n.op_type == "FusedConv" || n.op_type == "FusedGemm" || n.op_type == "FusedMatMul")) {
    *fused = n.op_type;
    return true;
  }
  if (!n.domain.empty() || n.outputs.size() != 1) return false;
  auto it = anchors.find(n.op_type);
  if (it == anchors.end()) return false;
  *fused = it->second;
  return true;
}

// Appends the matched steps to node `i` (turned into `op`) and removes the matched nodes.
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

bool fuse_activation(GraphDef& g) {
  bool any = false;
  for (bool changed = true; changed;) {
    changed = false;
    GraphIndex ix(g);
    std::vector<bool> dead(g.nodes.size(), false);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      std::string op;
      if (dead[i] || !anchor_op(g.nodes[i], &op)) continue;
      auto m = match_activation(g, ix, g.nodes[i].outputs[0]);
      if (!m) continue;
      bool clash = false;
      for (size_t k : m->nodes) clash = clash || dead[k] || k == i;
      if (clash) continue;
      take_match(g, i, op, *m, dead);
      changed = any = true;
    }
    if (changed) compact(g, dead);
  }
  return any;
}

bool fuse_matmul_add(GraphDef& g) {
  GraphIndex ix(g);
  std::vector<bool> dead(g.nodes.size(), false);
  bool changed = false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    NodeDef& mm = g.nodes[i];
    if (!is_op(mm, "MatMul") || mm.inputs.size() != 2) continue;
    const Tensor* b = ix.constant(mm.inputs[1]);
    if (!b || b->rank() != 2 || b->dtype() != DType::kFloat32) continue;
    size_t ai = 0;
    const NodeDef* add = sole_reader(g, ix, mm.outputs[0], &ai);
    if (!add || !is_op(*add, "Add") || add->inputs.size() != 2 || dead[ai]) continue;
    const std::string& other = add->inputs[0] == mm.outputs[0] ? add->inputs[1] : add->inputs[0];
    const Tensor* bias = ix.constant(other);
    if (!bias || bias->dtype() != DType::kFloat32 || bias->rank() < 1 || bias->dim(bias->rank() - 1) != b->dim(1) ||
        bias->numel() != b->dim(1) || bias->rank() > 2)
      continue;
    make_fused(mm, "FusedMatMul");
    mm.inputs.push_back(other);
    absorb(mm, *add);
    mm.outputs[0] = add->outputs[0];
    dead[ai] = true;
    changed = true;
  }
  if (changed) compact(g, dead);
  return changed;
}

// Decomposed multi-node activations that follow no anchor: one FusedActivation node each.
bool fuse_elementwise(GraphDef& g) {
  bool any = false;
  for (bool changed = true; changed;) {
    changed = false;
    GraphIndex ix(g);
    std::vector<bool> dead(g.nodes.size(), false);
    std::vector<NodeDef> made;
    std::set<std::string> starts;
    for (const auto& [v, _] : ix.consumers) starts.insert(v);
    for (const std::string& v : starts) {
      auto m = match_activation(g, ix, v);
      if (!m || m->nodes.size() < 2) continue;  // one ai.onnx node is already one kernel call
      bool clash = false;
      for (size_t k : m->nodes) clash = clash || dead[k];
      if (clash) continue;
      NodeDef n;
      n.name = g.nodes[m->nodes[0]].name;
      n.op_type = "FusedActivation";
      n.domain = kFusedDomain;
      n.opset = 1;
      n.origin = g.nodes[m->nodes[0]].origin;
      n.inputs = {v};
      n.outputs = {m->out};
      store_activations(n, m->steps);
      for (size_t k : m->nodes) {
        absorb(n, g.nodes[k]);
        dead[k] = true;
      }
      made.push_back(std::move(n));
      changed = any = true;
    }
    if (!changed) break;
    // New nodes go last: plan_graph sorts the graph topologically.
    for (auto& n : made) g.nodes.push_back(std::move(n));
    dead.resize(g.nodes.size(), false);
    compact(g, dead);
  }
  return any;
}

// x * Reciprocal(Sqrt(ReduceMean(Pow(x, 2), one axis, keepdims) + eps)) [* w]
bool fuse_rms_norm(GraphDef& g) {
  GraphIndex ix(g);
  std::vector<bool> dead(g.nodes.size(), false);
  std::vector<std::pair<size_t, NodeDef>> made;
  bool changed = false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const NodeDef& pw = g.nodes[i];
    if (dead[i] || !is_op(pw, "Pow") || pw.inputs.size() != 2) continue;
    auto two = ix.scalar(pw.inputs[1]);
    if (!two || *two != 2.0f) continue;
    const std::string x = pw.inputs[0];
    size_t ir = 0, ia = 0, is = 0, ic = 0, im = 0;
    const NodeDef* rm = sole_reader(g, ix, pw.outputs[0], &ir);
    if (!rm || !is_op(*rm, "ReduceMean") || rm->attr_int("keepdims", 1) != 1) continue;
    // Axes: the last one only (input from opset 18, attribute before).
    std::vector<int64_t> axes;
    if (rm->opset >= 18) {
      const Tensor* t = rm->inputs.size() > 1 ? ix.constant(rm->inputs[1]) : nullptr;
      if (!t || t->numel() != 1 || (t->dtype() != DType::kInt64)) continue;
      axes = {*t->data<int64_t>()};
    } else {
      axes = rm->attr_ints("axes");
    }
    if (axes.size() != 1) continue;  // one axis (the kernel checks it against the rank at run time)
    const NodeDef* add = sole_reader(g, ix, rm->outputs[0], &ia);
    auto eps = add && is_op(*add, "Add") ? other_scalar(ix, *add, rm->outputs[0]) : std::nullopt;
    if (!eps) continue;
    const NodeDef* sq = sole_reader(g, ix, add->outputs[0], &is);
    if (!sq || !is_op(*sq, "Sqrt")) continue;
    const NodeDef* rc = sole_reader(g, ix, sq->outputs[0], &ic);
    if (!rc || !is_op(*rc, "Reciprocal")) continue;
    const NodeDef* mul = sole_reader(g, ix, rc->outputs[0], &im);
    if (!mul || !is_op(*mul, "Mul") || mul->inputs.size() != 2) continue;
    if (!((mul->inputs[0] == x && mul->inputs[1] == rc->outputs[0]) || (mul->inputs[1] == x && mul->inputs[0] == rc->outputs[0])))
      continue;
    NodeDef n;
    n.name = pw.name;
    n.op_type = "FusedRMSNorm";
    n.domain = kFusedDomain;
    n.opset = 1;
    n.origin = pw.origin;
    n.inputs = {x};
    n.outputs = {mul->outputs[0]};
    n.attributes["epsilon"].type = Attribute::Type::kFloat;
    n.attributes["epsilon"].f = *eps;
    n.attributes["axis"].type = Attribute::Type::kInt;
    n.attributes["axis"].i = axes[0];
    std::vector<size_t> parts{i, ir, ia, is, ic, im};
    // An elementwise weight right after: y * w with w a constant vector over the last axis.
    size_t iw = 0;
    const NodeDef* wm = sole_reader(g, ix, mul->outputs[0], &iw);
    if (wm && is_op(*wm, "Mul") && wm->inputs.size() == 2) {
      const std::string& other = wm->inputs[0] == mul->outputs[0] ? wm->inputs[1] : wm->inputs[0];
      const Tensor* w = ix.constant(other);
      if (w && w->dtype() == DType::kFloat32 && w->rank() == 1 && other != mul->outputs[0]) {
        n.inputs.push_back(other);
        n.outputs = {wm->outputs[0]};
        parts.push_back(iw);
      }
    }
    bool clash = false;
    for (size_t k : parts) clash = clash || dead[k];
    if (clash) continue;
    for (size_t k : parts) {
      absorb(n, g.nodes[k]);
      dead[k] = true;
    }
    made.emplace_back(i, std::move(n));
    changed = true;
  }
  if (!changed) return false;
  for (auto& [_, n] : made) g.nodes.push_back(std::move(n));  // plan_graph sorts topologically
  dead.resize(g.nodes.size(), false);
  compact(g, dead);
  return true;
}

// Where(Not(Cast(ReduceMax(Cast(Not(Equal(x, -inf))), axis))), zeros, Softmax(x, axis)): softmax whose
// fully masked rows are 0 (torch's _safe_softmax, decomposed) -> FusedSafeSoftmax(x, zeros).
bool fuse_safe_softmax(GraphDef& g) {
  GraphIndex ix(g);
  std::vector<bool> dead(g.nodes.size(), false);
  std::vector<NodeDef> made;
  auto producer = [&](const std::string& v, const char* op) -> const NodeDef* {
    auto it = ix.producer.find(v);
    if (it == ix.producer.end() || dead[it->second] || !is_op(g.nodes[it->second], op) || !ix.internal(v, 1)) return nullptr;
    return &g.nodes[it->second];
  };
  auto index_of = [&](const NodeDef* n) { return static_cast<size_t>(n - g.nodes.data()); };
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const NodeDef& where = g.nodes[i];
    if (dead[i] || !is_op(where, "Where") || where.inputs.size() != 3) continue;
    const NodeDef* sm = producer(where.inputs[2], "Softmax");
    const Tensor* zeros = ix.constant(where.inputs[1]);
    if (!sm || sm->opset < 13 || !zeros || zeros->dtype() != DType::kFloat32) continue;
    bool all_zero = true;
    for (int64_t k = 0; k < zeros->numel() && all_zero; ++k) all_zero = zeros->data<float>()[k] == 0.0f;
    const NodeDef* not2 = producer(where.inputs[0], "Not");
    const NodeDef* cast2 = not2 ? producer(not2->inputs[0], "Cast") : nullptr;
    const NodeDef* rmax = cast2 && cast2->attr_int("to", 0) == 9 ? producer(cast2->inputs[0], "ReduceMax") : nullptr;
    const NodeDef* cast1 = rmax && rmax->attr_int("keepdims", 1) == 1 ? producer(rmax->inputs[0], "Cast") : nullptr;
    const NodeDef* not1 = cast1 ? producer(cast1->inputs[0], "Not") : nullptr;
    const NodeDef* eq = not1 ? producer(not1->inputs[0], "Equal") : nullptr;
    if (!all_zero || !eq || eq->inputs.size() != 2) continue;
    const std::string x = sm->inputs[0];
    const std::string& other = eq->inputs[0] == x ? eq->inputs[1] : eq->inputs[0];
    auto inf = ix.scalar(other);
    if ((eq->inputs[0] != x && eq->inputs[1] != x) || !inf || !(*inf < 0 && std::isinf(*inf))) continue;
    // Both reduce over the one softmax axis, written the same way.
    const int64_t axis = sm->attr_int("axis", -1);
    std::vector<int64_t> axes;
    if (rmax->opset >= 18) {
      const Tensor* t = rmax->inputs.size() > 1 ? ix.constant(rmax->inputs[1]) : nullptr;
      if (!t || t->dtype() != DType::kInt64) continue;
      axes.assign(t->data<int64_t>(), t->data<int64_t>() + t->numel());
    } else {
      axes = rmax->attr_ints("axes");
    }
    if (axes.size() != 1 || axes[0] != axis) continue;
    NodeDef n;
    n.name = sm->name;
    n.op_type = "FusedSafeSoftmax";
    n.domain = kFusedDomain;
    n.opset = 1;
    n.origin = sm->origin;
    n.inputs = {x, where.inputs[1]};
    n.outputs = {where.outputs[0]};
    n.attributes["axis"].type = Attribute::Type::kInt;
    n.attributes["axis"].i = axis;
    for (const NodeDef* part : {sm, eq, not1, cast1, rmax, cast2, not2, &where}) {
      absorb(n, *part);
      dead[index_of(part)] = true;
    }
    made.push_back(std::move(n));
  }
  if (made.empty()) return false;
  for (auto& n : made) g.nodes.push_back(std::move(n));
  dead.resize(g.nodes.size(), false);
  compact(g, dead);
  return true;
}

// Which operand of a Mul (either) or Div (the divisor) is a constant float scalar while the other is
// not; -1 when the node is not such a scaling.
int scalar_operand(const GraphIndex& ix, const NodeDef& n) {
  if (n.inputs.size() != 2 || n.inputs[0] == n.inputs[1]) return -1;
  const bool s0 = ix.scalar(n.inputs[0]).has_value(), s1 = ix.scalar(n.inputs[1]).has_value();
  if (n.op_type == "Mul" && s0 != s1) return s0 ? 0 : 1;
  if (n.op_type == "Div" && s1 && !s0) return 1;
  return -1;
}

// MatMul(A, Transpose(X) [-> Mul/Div by a constant scalar, Identity, one Reshape]) with the Transpose
// swapping the last two axes (the key of an attention, K^T): the scalar ops move before the
// Transpose, which disappears into a FusedMatMul with transB = 1 reading X as it is; the Reshape's
// shape goes along as b_shape (the kernel checks at run time that it keeps the last two dims, and
// otherwise materialises the transpose as the graph would).
bool fold_transpose_matmul(GraphDef& g) {
  GraphIndex ix(g);
  std::vector<bool> dead(g.nodes.size(), false);
  bool changed = false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    NodeDef& mm = g.nodes[i];
    const bool fused = mm.domain == kFusedDomain && mm.op_type == "FusedMatMul";
    if ((!is_op(mm, "MatMul") && !fused) || mm.inputs.size() < 2 || mm.attr_int("transB", 0) != 0) continue;
    std::vector<size_t> scalars, absorbed;  // scalar ops nearest the MatMul first; Identity/Reshape/Transpose
    const NodeDef* reshape = nullptr;
    const NodeDef* transpose = nullptr;
    std::string v = mm.inputs[1];
    for (;;) {
      auto it = ix.producer.find(v);
      if (it == ix.producer.end() || dead[it->second] || !ix.internal(v, 1)) break;
      const NodeDef& p = g.nodes[it->second];
      if (!p.domain.empty() || p.outputs.size() != 1) break;
      if (p.op_type == "Transpose") {
        const auto perm = p.attr_ints("perm");
        bool swap_last = perm.size() >= 2;
        for (size_t d = 0; d + 2 < perm.size() && swap_last; ++d) swap_last = perm[d] == static_cast<int64_t>(d);
        const int64_t r = static_cast<int64_t>(perm.size());
        if (swap_last && perm[perm.size() - 2] == r - 1 && perm.back() == r - 2) {
          transpose = &p;
          absorbed.push_back(it->second);
        }
        break;
      }
      if (p.op_type == "Identity") {
        absorbed.push_back(it->second);
      } else if (p.op_type == "Reshape" && !reshape && p.inputs.size() == 2 && p.attr_int("allowzero", 0) == 0) {
        const Tensor* shape = ix.constant(p.inputs[1]);
        if (!shape || shape->dtype() != DType::kInt64 || shape->numel() < 2) break;
        reshape = &p;
        absorbed.push_back(it->second);
      } else if (scalar_operand(ix, p) >= 0) {
        scalars.push_back(it->second);
      } else {
        break;
      }
      // The chain goes on through the operand that is not the scalar (input 0 of the others).
      v = p.inputs[scalar_operand(ix, p) == 0 ? 1 : 0];
    }
    if (!transpose) continue;
    // Rewire: X -> scalar ops (in graph order) -> MatMul.
    std::string prev = transpose->inputs[0];
    for (auto k = scalars.rbegin(); k != scalars.rend(); ++k) {
      NodeDef& op = g.nodes[*k];
      op.inputs[scalar_operand(ix, op) == 0 ? 1 : 0] = prev;
      prev = op.outputs[0];
    }
    std::vector<int64_t> b_shape;
    if (reshape) {
      const Tensor* shape = ix.constant(reshape->inputs[1]);
      b_shape.assign(shape->data<int64_t>(), shape->data<int64_t>() + shape->numel());
    }
    make_fused(mm, "FusedMatMul");
    mm.inputs[1] = prev;
    mm.attributes["transB"].type = Attribute::Type::kInt;
    mm.attributes["transB"].i = 1;
    if (reshape) {
      mm.attributes["b_shape"].type = Attribute::Type::kInts;
      mm.attributes["b_shape"].ints = b_shape;
    }
    for (size_t k : absorbed) {
      absorb(mm, g.nodes[k]);
      dead[k] = true;
    }
    changed = true;
  }
  if (changed) compact(g, dead);
  return changed;
}

using Pass = bool (*)(GraphDef&);
const std::vector<std::pair<std::string, Pass>>& passes() {
  static const std::vector<std::pair<std::string, Pass>> all = {
      {"fuse_qdq", fuse_qdq}, {"drop_unused_outputs", drop_unused_outputs}, {"fold_batch_norm", fold_batch_norm}, {"fuse_matmul_add", fuse_matmul_add}, {"fuse_conv_add", fuse_conv_add},
      {"fuse_activation", fuse_activation},
      {"fuse_elementwise", fuse_elementwise}, {"fuse_rms_norm", fuse_rms_norm},
      {"fuse_safe_softmax", fuse_safe_softmax}, {"fold_transpose_matmul", fold_transpose_matmul}};
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
