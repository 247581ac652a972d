// See fuse_qdq_activation.h.
#include "fuse_qdq_activation.h"

#include <algorithm>
#include <map>
#include <set>

#include "../kernel.h"
#include "pass_util.h"

namespace parity::refrt {
namespace {

// Elementwise ops whose output element i depends on input element i alone (their other operands being
// scalars): what an island may hold.
const std::set<std::string>& elementwise_ops() {
  static const std::set<std::string> ops = {
      "Relu",     "LeakyRelu", "Elu",  "Selu", "Celu", "Gelu", "Sigmoid", "HardSigmoid", "HardSwish",       "Softplus",
      "Softsign", "Mish",      "Tanh", "Erf",  "Exp",  "Neg",  "Abs",     "Identity",    "ThresholdedRelu", "Add",
      "Sub",      "Mul",       "Div",  "Max",  "Min",  "Clip"};
  return ops;
}

bool is_8bit(DType t) { return t == DType::kInt8 || t == DType::kUInt8; }

// A Quantize/DequantizeLinear with constant scalar float32 scale and constant scalar 8-bit zero point (the
// zero point's type is then the 8-bit type on its integer side).
std::optional<DType> scalar_qdq(const GraphIndex& ix, const NodeDef& n) {
  if (n.inputs.size() < 3 || n.inputs[2].empty() || n.outputs.size() != 1) return std::nullopt;
  if (n.opset >= 21 && (n.attr_int("block_size", 0) != 0 || n.attr_int("output_dtype", 0) != 0)) return std::nullopt;
  const Tensor* s = ix.constant(n.inputs[1]);
  const Tensor* z = ix.constant(n.inputs[2]);
  if (!s || !z || s->dtype() != DType::kFloat32 || s->numel() != 1 || z->numel() != 1 || !is_8bit(z->dtype()))
    return std::nullopt;
  return z->dtype();
}

struct Island {
  size_t dq = 0;              // the DequantizeLinear reading x8
  std::vector<size_t> nodes;  // the float ops, in graph order
  DType x_type = DType::kUInt8, y_type = DType::kUInt8;
};

// The island that ends in QuantizeLinear `qi`, if there is one.
std::optional<Island> find_island(const GraphDef& g, const GraphIndex& ix, size_t qi) {
  const NodeDef& q = g.nodes[qi];
  Island is;
  const auto yt = scalar_qdq(ix, q);
  if (!yt || !ix.internal(q.inputs[0], 1)) return std::nullopt;
  is.y_type = *yt;
  std::set<size_t> inside;
  std::optional<size_t> dq;
  std::vector<std::string> todo{q.inputs[0]};
  while (!todo.empty()) {
    const std::string v = todo.back();
    todo.pop_back();
    auto p = ix.producer.find(v);
    if (p == ix.producer.end()) return std::nullopt;  // a graph input or a constant among the island's values
    const NodeDef& n = g.nodes[p->second];
    if (is_op(n, "DequantizeLinear")) {
      if (dq && *dq != p->second) return std::nullopt;  // a second 8-bit source
      const auto xt = scalar_qdq(ix, n);
      if (!xt || ix.constant(n.inputs[0])) return std::nullopt;
      dq = p->second;
      is.x_type = *xt;
      continue;
    }
    if (!n.domain.empty() || !elementwise_ops().count(n.op_type) || n.outputs.size() != 1 ||
        !n.implicit_inputs.empty() || inside.size() >= 16)
      return std::nullopt;
    if (!inside.insert(p->second).second) continue;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const std::string& in = n.inputs[k];
      if (in.empty()) continue;
      if (const Tensor* c = ix.constant(in)) {
        if (c->rank() != 0) return std::nullopt;  // a broadcast operand would change the output's shape
        continue;
      }
      todo.push_back(in);
    }
  }
  if (!dq || inside.empty()) return std::nullopt;
  // Every float value of the island is read inside it only: nothing outside needs it materialized.
  for (size_t i : inside)
    for (size_t r : ix.readers(g.nodes[i].outputs[0]))
      if (!inside.count(r) && r != qi) return std::nullopt;
  for (size_t i : inside)
    if (ix.outputs.count(g.nodes[i].outputs[0])) return std::nullopt;
  is.dq = *dq;
  is.nodes.assign(inside.begin(), inside.end());  // indices ascend: the graph's (topological) order
  return is;
}

// Runs `n` with refrt's own kernel on `values` (by name; constants from ix).
bool run_node(const NodeDef& n, const GraphIndex& ix, std::map<std::string, Tensor>& values) {
  const KernelRegistration* reg = find_kernel(n.op_type, n.domain, n.opset);
  if (!reg) return false;
  std::unique_ptr<Kernel> kernel = reg->factory(n);
  KernelIO io;
  std::vector<const Tensor*> constants;
  for (const std::string& in : n.inputs) {
    const Tensor* t = nullptr;
    if (!in.empty()) {
      auto it = values.find(in);
      t = it != values.end() ? &it->second : ix.constant(in);
      if (!t) return false;
    }
    io.inputs.push_back(t);
    constants.push_back(t && ix.constant(in) ? t : nullptr);
  }
  kernel->prepare(constants);
  io.outputs.resize(n.outputs.size());
  kernel->compute(io);
  values[n.outputs[0]] = std::move(io.outputs[0]);
  return true;
}

// The island's table: y8 of each of the 256 byte patterns of x8, computed by the island's own kernels.
std::optional<Tensor> island_table(const GraphDef& g, const GraphIndex& ix, const Island& is, size_t qi) {
  Tensor x(is.x_type, {256});
  auto* px = static_cast<uint8_t*>(x.mutable_raw());
  for (int i = 0; i < 256; ++i) px[i] = static_cast<uint8_t>(i);
  std::map<std::string, Tensor> values;
  values[g.nodes[is.dq].inputs[0]] = std::move(x);
  std::vector<size_t> order{is.dq};
  order.insert(order.end(), is.nodes.begin(), is.nodes.end());
  order.push_back(qi);
  try {
    for (size_t i : order)
      if (!run_node(g.nodes[i], ix, values)) return std::nullopt;
  } catch (const Error&) {
    return std::nullopt;  // a dtype or operand the kernels refuse: the island stays as it is
  }
  const Tensor& y = values[g.nodes[qi].outputs[0]];
  if (y.dtype() != is.y_type || y.numel() != 256) return std::nullopt;
  for (size_t i : is.nodes) {
    const Tensor& v = values[g.nodes[i].outputs[0]];
    if (v.dtype() != DType::kFloat32 || v.numel() != 256) return std::nullopt;  // not elementwise float32
  }
  return y.clone();
}

// "Gelu", "Sigmoid*Mul": the island's ops for the profile label.
std::string island_name(const GraphDef& g, const Island& is) {
  std::string s;
  for (size_t i : is.nodes) s += (s.empty() ? "" : "*") + g.nodes[i].op_type;
  return s;
}

// The constant scalar scale and zero point of a scalar_qdq node.
std::pair<float, int32_t> qdq_values(const GraphIndex& ix, const NodeDef& n) {
  const Tensor* z = ix.constant(n.inputs[2]);
  const int32_t zp = z->dtype() == DType::kInt8 ? *z->data<int8_t>() : *z->data<uint8_t>();
  return {*ix.constant(n.inputs[1])->data<float>(), zp};
}

// DequantizeLinear -> MaxPool -> QuantizeLinear with the same scale and zero point is MaxPool of the 8-bit
// values (ONNX MaxPool takes int8 / uint8 from opset 12): dequantization is increasing, so the maximum is taken
// at the same element, and Q(DQ(v)) = v (|v - zp| <= 255: the float32 product and quotient are within 2^-15 of
// it). The Indices output must be unread.
bool max_pool_on_bytes(GraphDef& g, const GraphIndex& ix, size_t qi, std::vector<bool>& dead) {
  const NodeDef& q = g.nodes[qi];
  const auto yt = scalar_qdq(ix, q);
  auto p = ix.producer.find(q.inputs[0]);
  if (!yt || p == ix.producer.end() || !ix.internal(q.inputs[0], 1)) return false;
  const size_t mi = p->second;
  const NodeDef& pool = g.nodes[mi];
  if (!is_op(pool, "MaxPool") || pool.opset < 12 || pool.inputs.size() != 1 || dead[mi]) return false;
  if (pool.outputs.size() > 1 && !pool.outputs[1].empty() &&
      (ix.outputs.count(pool.outputs[1]) || !ix.readers(pool.outputs[1]).empty()))
    return false;
  auto d = ix.producer.find(pool.inputs[0]);
  if (d == ix.producer.end() || !is_op(g.nodes[d->second], "DequantizeLinear")) return false;
  const NodeDef& dq = g.nodes[d->second];
  const auto xt = scalar_qdq(ix, dq);
  if (!xt || *xt != *yt || qdq_values(ix, dq) != qdq_values(ix, q)) return false;
  NodeDef fused = pool;
  fused.inputs = {dq.inputs[0]};
  fused.outputs = {q.outputs[0]};
  fused.fused_from = {{pool.name, pool.op_type}};
  // 2-D windows without dilation: refrt's 8-bit pooling (qmax_pool.cc); others: ONNX MaxPool on the bytes.
  const std::vector<int64_t> dilations = pool.attr_ints("dilations");
  if (pool.attr_ints("kernel_shape").size() == 2 &&
      std::all_of(dilations.begin(), dilations.end(), [](int64_t d) { return d == 1; }))
    make_fused(fused, "QMaxPool");
  absorb(fused, dq);
  absorb(fused, q);
  g.nodes[qi] = std::move(fused);  // at the QuantizeLinear's place: after its input's producer
  if (ix.internal(pool.inputs[0], 1)) dead[d->second] = true;
  dead[mi] = true;
  return true;
}

// DequantizeLinear(a8) + DequantizeLinear(b8) [-> Relu] -> QuantizeLinear: a QAdd node (qadd.cc) computing the same
// float32 steps per element, without the float tensors.
bool add_on_bytes(GraphDef& g, const GraphIndex& ix, size_t qi, std::vector<bool>& dead) {
  const NodeDef& q = g.nodes[qi];
  const auto yt = scalar_qdq(ix, q);
  auto p = ix.producer.find(q.inputs[0]);
  if (!yt || p == ix.producer.end() || !ix.internal(q.inputs[0], 1)) return false;
  std::vector<size_t> parts{p->second};
  bool relu = false;
  if (is_op(g.nodes[p->second], "Relu")) {
    relu = true;
    const std::string& in = g.nodes[p->second].inputs[0];
    p = ix.producer.find(in);
    if (p == ix.producer.end() || !ix.internal(in, 1)) return false;
    parts.push_back(p->second);
  }
  const NodeDef& add = g.nodes[p->second];
  if (!is_op(add, "Add") || add.inputs.size() != 2 || add.inputs[0] == add.inputs[1]) return false;
  NodeDef fused;
  fused.name = add.name;
  fused.op_type = "QAdd";
  fused.domain = kFusedDomain;
  fused.opset = 1;
  fused.outputs = {q.outputs[0]};
  fused.fused_from = {{add.name, add.op_type}};
  std::vector<size_t> dqs;
  for (size_t k = 0; k < 2; ++k) {
    auto d = ix.producer.find(add.inputs[k]);
    if (d == ix.producer.end() || !is_op(g.nodes[d->second], "DequantizeLinear")) return false;
    const NodeDef& dq = g.nodes[d->second];
    const auto xt = scalar_qdq(ix, dq);
    if (!xt || ix.constant(dq.inputs[0])) return false;
    const auto [scale, zp] = qdq_values(ix, dq);
    const std::string side = k == 0 ? "a" : "b";
    fused.inputs.push_back(dq.inputs[0]);
    fused.attributes[side + "_scale"] = float_attribute(scale);
    fused.attributes[side + "_zero_point"] = int_attribute(zp);
    fused.attributes[side + "_dtype"] = int_attribute(static_cast<int64_t>(*xt));
    if (ix.internal(add.inputs[k], 1)) dqs.push_back(d->second);
  }
  const auto [scale, zp] = qdq_values(ix, q);
  fused.attributes["y_scale"] = float_attribute(scale);
  fused.attributes["y_zero_point"] = int_attribute(zp);
  fused.attributes["y_dtype"] = int_attribute(static_cast<int64_t>(*yt));
  fused.attributes["relu"] = int_attribute(relu ? 1 : 0);
  for (size_t k : dqs) {
    absorb(fused, g.nodes[k]);
    dead[k] = true;
  }
  for (size_t k : parts) {
    if (k != p->second) absorb(fused, g.nodes[k]);
    dead[k] = true;
  }
  absorb(fused, q);
  g.nodes[qi] = std::move(fused);
  return true;
}

}  // namespace

bool fuse_qdq_lookup(GraphDef& g) {
  const GraphIndex ix(g);
  std::vector<bool> dead(g.nodes.size(), false);
  bool changed = false;
  for (size_t qi = 0; qi < g.nodes.size(); ++qi) {
    if (dead[qi] || !is_op(g.nodes[qi], "QuantizeLinear")) continue;
    const auto is = find_island(g, ix, qi);
    if (!is || dead[is->dq]) continue;
    const auto table = island_table(g, ix, *is, qi);
    if (!table) continue;
    const NodeDef& dq = g.nodes[is->dq];
    const std::string& x8 = dq.inputs[0];
    // The DequantizeLinear goes when the island is all that reads it.
    bool dq_internal = !ix.outputs.count(dq.outputs[0]);
    for (size_t r : ix.readers(dq.outputs[0]))
      dq_internal = dq_internal && std::binary_search(is->nodes.begin(), is->nodes.end(), r);
    auto p = ix.producer.find(x8);
    const bool fold = dq_internal && p != ix.producer.end() && !dead[p->second] && ix.internal(x8, 1) &&
                      g.nodes[p->second].domain == kFusedDomain &&
                      (g.nodes[p->second].op_type == "QGemm" || g.nodes[p->second].op_type == "QConv") &&
                      !g.nodes[p->second].attr("lut");
    const NodeDef q_was = g.nodes[qi];
    NodeDef* into = nullptr;
    if (fold) {
      into = &g.nodes[p->second];
      into->outputs = {g.nodes[qi].outputs[0]};
    } else {
      NodeDef lookup;
      lookup.name = g.nodes[qi].name;
      lookup.op_type = "QLookup";
      lookup.domain = kFusedDomain;
      lookup.opset = 1;
      lookup.inputs = {x8};
      lookup.outputs = {g.nodes[qi].outputs[0]};
      lookup.fused_from = {{g.nodes[is->nodes[0]].name, g.nodes[is->nodes[0]].op_type}};
      lookup.attributes["x_dtype"] = int_attribute(static_cast<int64_t>(is->x_type));
      g.nodes[qi] = std::move(lookup);
      into = &g.nodes[qi];
    }
    into->attributes["lut"] = tensor_attribute(*table);
    into->attributes["lut_ops"] = Attribute{Attribute::Type::kString, 0, 0, island_name(g, *is)};
    if (dq_internal) {
      absorb(*into, dq);
      dead[is->dq] = true;
    }
    for (size_t i : is->nodes) {
      if (fold || i != is->nodes[0]) absorb(*into, g.nodes[i]);
      dead[i] = true;
    }
    absorb(*into, q_was);
    if (fold) dead[qi] = true;
    changed = true;
  }
  if (changed) compact(g, dead);
  return fuse_qdq_pool_add(g) || changed;
}

bool fuse_qdq_pool_add(GraphDef& g) {
  const GraphIndex ix(g);
  std::vector<bool> dead(g.nodes.size(), false);
  bool changed = false;
  for (size_t qi = 0; qi < g.nodes.size(); ++qi)
    if (!dead[qi] && is_op(g.nodes[qi], "QuantizeLinear"))
      changed = max_pool_on_bytes(g, ix, qi, dead) || add_on_bytes(g, ix, qi, dead) || changed;
  if (changed) compact(g, dead);
  return changed;
}

}  // namespace parity::refrt
