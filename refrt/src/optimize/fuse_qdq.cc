// The QDQ fusion pass (optimizer.h lists it): the patterns ONNX Runtime's QDQ selectors take
// for Conv, MatMul and Gemm,
//   DequantizeLinear(x_q) ─┐
//   DequantizeLinear(W const int8/uint8, per tensor or per output channel) ─┼─> Conv / MatMul / Gemm
//   [bias: float const, or DequantizeLinear(int32 const)] ─┘      [-> Relu / Clip(const)] -> QuantizeLinear
// become one QConv / QGemm node (qdq_fused.cc) reading x_q and writing the QuantizeLinear's output.
// Activation scales and zero points must be constant scalars. The pass runs on the file's graph
// before constant folding (which would turn DequantizeLinear(W) into float weights); DequantizeLinear
// nodes whose output another node still reads stay. Weights written as QuantizeLinear of a float
// constant (or of its Transpose) are quantized here first (qdq_weights.h). Elementwise float islands
// DequantizeLinear -> Gelu / SiLU / ... -> QuantizeLinear become 256-entry tables last (fuse_qdq_activation.h).
#include <map>
#include <optional>

#include "../activation.h"
#include "fuse_qdq_activation.h"
#include "pass_util.h"
#include "passes.h"
#include "qdq_weights.h"

namespace parity::refrt {
namespace {

struct Index {
  std::map<std::string, size_t> producer;
  std::map<std::string, std::vector<size_t>> readers;
  std::set<std::string> outputs;
  std::map<std::string, const Tensor*> constants;

  explicit Index(const GraphDef& g) {
    for (const auto& [name, t] : g.initializers) constants[name] = &t;
    for (const auto& in : g.inputs) constants.erase(in.name);
    for (const auto& out : g.outputs) outputs.insert(out.name);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const NodeDef& n = g.nodes[i];
      for (const auto& o : n.outputs)
        if (!o.empty()) producer[o] = i;
      for (const auto& v : n.inputs)
        if (!v.empty()) readers[v].push_back(i);
      for (const auto& v : n.implicit_inputs) readers[v].push_back(i);
      // Constant nodes with a tensor value count as constants (exporters write scales that way).
      if (n.domain.empty() && n.op_type == "Constant" && n.outputs.size() == 1)
        if (const Attribute* a = n.attr("value", Attribute::Type::kTensor)) constants[n.outputs[0]] = &a->t;
    }
  }
  const Tensor* constant(const std::string& v) const {
    auto it = constants.find(v);
    return it == constants.end() ? nullptr : it->second;
  }
  // `v` is read only by node `i` and is no graph output.
  bool only_reader(const std::string& v, size_t i) const {
    auto it = readers.find(v);
    return !outputs.count(v) && it != readers.end() && it->second.size() == 1 && it->second[0] == i;
  }
  const NodeDef* made_by(const GraphDef& g, const std::string& v, const char* op, size_t* at = nullptr) const {
    auto it = producer.find(v);
    if (it == producer.end()) return nullptr;
    const NodeDef& n = g.nodes[it->second];
    if (!n.domain.empty() || n.op_type != op) return nullptr;
    if (at) *at = it->second;
    return &n;
  }
};

bool is_8bit(DType t) { return t == DType::kInt8 || t == DType::kUInt8; }

// A QuantizeLinear / DequantizeLinear's constant per-tensor scale and zero point.
struct ScalarQ {
  float scale = 0;
  int32_t zp = 0;
  DType type = DType::kUInt8;
};

std::optional<ScalarQ> scalar_params(const Index& ix, const NodeDef& n) {
  if (n.inputs.size() < 2 || (n.opset >= 21 && n.attr_int("block_size", 0) != 0)) return std::nullopt;
  const Tensor* s = ix.constant(n.inputs[1]);
  if (!s || s->dtype() != DType::kFloat32 || s->numel() != 1 || !(s->data<float>()[0] > 0)) return std::nullopt;
  ScalarQ q;
  q.scale = s->data<float>()[0];
  if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
    const Tensor* z = ix.constant(n.inputs[2]);
    if (!z || z->numel() != 1 || !is_8bit(z->dtype())) return std::nullopt;
    q.type = z->dtype();
    q.zp = z->dtype() == DType::kInt8 ? *z->data<int8_t>() : *z->data<uint8_t>();
  } else if (n.op_type == "QuantizeLinear" && n.opset >= 21) {
    const int64_t t = n.attr_int("output_dtype", 0);
    if (t != 0 && t != static_cast<int64_t>(DType::kUInt8) && t != static_cast<int64_t>(DType::kInt8))
      return std::nullopt;
    if (t != 0) q.type = static_cast<DType>(t);
  }
  return q;
}

// The weights' DequantizeLinear: constant 8-bit W, float32 scale per tensor or along `channel_axis`.
struct WeightQ {
  const Tensor* w = nullptr;
  Tensor scale, zp;
};

std::optional<WeightQ> weight_params(const Index& ix, const NodeDef& dq, int64_t channel_axis) {
  if (dq.inputs.size() < 2 || (dq.opset >= 21 && dq.attr_int("block_size", 0) != 0)) return std::nullopt;
  WeightQ q;
  q.w = ix.constant(dq.inputs[0]);
  const Tensor* s = ix.constant(dq.inputs[1]);
  if (!q.w || !s || !is_8bit(q.w->dtype()) || s->dtype() != DType::kFloat32 || q.w->rank() < 2) return std::nullopt;
  const int64_t axis = dq.attr_int("axis", 1), rank = static_cast<int64_t>(q.w->rank());
  const int64_t channels = q.w->dim(static_cast<size_t>(channel_axis));
  if (s->numel() != 1 && (s->rank() != 1 || s->numel() != channels || (axis + rank) % rank != channel_axis))
    return std::nullopt;
  const Tensor* z = dq.inputs.size() > 2 && !dq.inputs[2].empty() ? ix.constant(dq.inputs[2]) : nullptr;
  if (dq.inputs.size() > 2 && !dq.inputs[2].empty() && (!z || z->dtype() != q.w->dtype() || z->numel() != s->numel()))
    return std::nullopt;
  q.scale = s->clone();
  q.zp = z ? z->clone() : Tensor(q.w->dtype(), {1}, true);
  return q;
}

// The bias as float32 [channels] as the unfused graph sees it: a float constant, or DequantizeLinear of
// an int32 constant (computed here exactly as that node would). Absent: an undefined tensor.
std::optional<Tensor> bias_values(const GraphDef& g, const Index& ix, const std::string& v, int64_t channels,
                                  std::vector<size_t>& absorbed) {
  if (v.empty()) return Tensor();
  if (const Tensor* b = ix.constant(v))
    return b->dtype() == DType::kFloat32 && b->rank() == 1 && b->numel() == channels ? std::optional<Tensor>(b->clone())
                                                                                     : std::nullopt;
  size_t at = 0;
  const NodeDef* dq = ix.made_by(g, v, "DequantizeLinear", &at);
  if (!dq || dq->inputs.size() < 2) return std::nullopt;
  const Tensor* b = ix.constant(dq->inputs[0]);
  const Tensor* s = ix.constant(dq->inputs[1]);
  const Tensor* z = dq->inputs.size() > 2 && !dq->inputs[2].empty() ? ix.constant(dq->inputs[2]) : nullptr;
  if (!b || !s || b->dtype() != DType::kInt32 || b->numel() != channels || b->rank() != 1 ||
      s->dtype() != DType::kFloat32 || (s->numel() != 1 && s->numel() != channels) ||
      (dq->inputs.size() > 2 && !dq->inputs[2].empty() && !z))
    return std::nullopt;
  if (z && (z->dtype() != DType::kInt32 || z->numel() != s->numel())) return std::nullopt;
  Tensor out(DType::kFloat32, {channels});
  for (int64_t c = 0; c < channels; ++c) {
    const int64_t k = s->numel() == 1 ? 0 : c;
    const int64_t zp = z ? z->data<int32_t>()[k] : 0;
    out.data<float>()[c] = static_cast<float>(static_cast<int64_t>(b->data<int32_t>()[c]) - zp) * s->data<float>()[k];
  }
  if (ix.only_reader(v, ix.readers.at(v)[0])) absorbed.push_back(at);  // else it stays for its other readers
  return out;
}

// Optional activation between the anchor and the QuantizeLinear: Relu, or Clip with constant bounds.
bool fold_activation(const Index& ix, const NodeDef& act, std::map<std::string, Attribute>& attrs) {
  if (act.op_type == "Relu") {
    attrs["relu"] = int_attribute(1);
    return true;
  }
  if (act.op_type != "Clip" || act.opset < 11) return false;
  for (size_t k = 1; k < act.inputs.size() && k < 3; ++k) {
    if (act.inputs[k].empty()) continue;
    const Tensor* t = ix.constant(act.inputs[k]);
    if (!t || t->dtype() != DType::kFloat32 || t->numel() != 1) return false;
    attrs[k == 1 ? "clip_min" : "clip_max"] = float_attribute(*t->data<float>());
  }
  return act.inputs.size() <= 3;
}

// Tries to fuse the chain ending in QuantizeLinear node `qi`; marks the replaced nodes dead.
bool fuse_at(GraphDef& g, const Index& ix, size_t qi, std::vector<bool>& dead) {
  const NodeDef& q = g.nodes[qi];
  const auto yq = scalar_params(ix, q);
  if (!yq || q.outputs.size() != 1) return false;
  std::map<std::string, Attribute> attrs;
  std::vector<size_t> absorbed{qi};
  auto p = ix.producer.find(q.inputs[0]);
  if (p == ix.producer.end() || !ix.only_reader(q.inputs[0], qi)) return false;
  size_t ai = p->second;
  if (g.nodes[ai].domain.empty() && (g.nodes[ai].op_type == "Relu" || g.nodes[ai].op_type == "Clip")) {
    const NodeDef& act = g.nodes[ai];
    if (!fold_activation(ix, act, attrs)) return false;
    absorbed.push_back(ai);
    auto pa = ix.producer.find(act.inputs[0]);
    if (pa == ix.producer.end() || !ix.only_reader(act.inputs[0], ai)) return false;
    ai = pa->second;
  }
  const NodeDef& anchor = g.nodes[ai];
  const bool conv = anchor.op_type == "Conv", gemm = anchor.op_type == "Gemm", matmul = anchor.op_type == "MatMul";
  if (!anchor.domain.empty() || !(conv || gemm || matmul) || anchor.outputs.size() != 1 || anchor.inputs.size() < 2)
    return false;
  if (gemm && (anchor.attr_int("transA", 0) != 0 || anchor.attr_float("alpha", 1) != 1.0f ||
               anchor.attr_float("beta", 1) != 1.0f))
    return false;
  const bool trans_b = gemm && anchor.attr_int("transB", 0) != 0;
  size_t dxi = 0, dwi = 0;
  const NodeDef* dx = ix.made_by(g, anchor.inputs[0], "DequantizeLinear", &dxi);
  const NodeDef* dw = ix.made_by(g, anchor.inputs[1], "DequantizeLinear", &dwi);
  if (!dx || !dw) return false;
  const auto xq = scalar_params(ix, *dx);
  const auto wq = weight_params(ix, *dw, conv || trans_b ? 0 : 1);
  if (!xq || !wq || (matmul && wq->w->rank() != 2)) return false;
  const int64_t channels = wq->w->dim(conv || trans_b ? 0 : 1);
  const std::string bias_name = (conv || gemm) && anchor.inputs.size() > 2 ? anchor.inputs[2] : "";
  std::vector<size_t> bias_nodes;
  auto bias = bias_values(g, ix, bias_name, channels, bias_nodes);
  if (!bias) return false;
  if (ix.only_reader(anchor.inputs[0], ai)) absorbed.push_back(dxi);
  // DequantizeLinear of constants (weights, bias) is folded at load in the unfused plan: it goes away
  // here without a place in fused_from (a profile names the nodes that run).
  std::vector<size_t> folded;
  if (ix.only_reader(anchor.inputs[1], ai)) folded.push_back(dwi);
  NodeDef fused = anchor;
  fused.op_type = conv ? "QConv" : "QGemm";
  fused.domain = kFusedDomain;
  fused.opset = 1;
  fused.inputs = {dx->inputs[0]};
  fused.outputs = {q.outputs[0]};
  if (!conv) fused.attributes.clear();
  for (auto& [k, v] : attrs) fused.attributes[k] = v;
  fused.attributes["w"] = tensor_attribute(wq->w->clone());
  fused.attributes["w_scale"] = tensor_attribute(wq->scale);
  fused.attributes["w_zero_point"] = tensor_attribute(wq->zp);
  if (bias->defined()) fused.attributes["bias"] = tensor_attribute(*bias);
  if (trans_b) fused.attributes["trans_b"] = int_attribute(1);
  fused.attributes["x_scale"] = float_attribute(xq->scale);
  fused.attributes["x_zero_point"] = int_attribute(xq->zp);
  fused.attributes["x_dtype"] = int_attribute(static_cast<int64_t>(xq->type));
  fused.attributes["y_scale"] = float_attribute(yq->scale);
  fused.attributes["y_zero_point"] = int_attribute(yq->zp);
  fused.attributes["y_dtype"] = int_attribute(static_cast<int64_t>(yq->type));
  fused.fused_from = {{anchor.name, anchor.op_type}};
  for (size_t k : absorbed) {
    fused.fused_from.emplace_back(g.nodes[k].name, g.nodes[k].op_type);
    dead[k] = true;
  }
  for (size_t k : folded) dead[k] = true;
  for (size_t k : bias_nodes) dead[k] = true;
  g.nodes[ai] = std::move(fused);
  return true;
}

}  // namespace

bool fuse_qdq(GraphDef& g) {
  const bool folded = quantize_constant_weights(g);
  const Index ix(g);
  std::vector<bool> dead(g.nodes.size(), false);
  bool changed = false;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!dead[i] && g.nodes[i].domain.empty() && g.nodes[i].op_type == "QuantizeLinear")
      changed = fuse_at(g, ix, i, dead) || changed;
  // The 8-bit weights now live in the fused nodes' attributes: their initializers go with the dead nodes.
  if (changed) compact(g, dead);
  // Then the float islands between 8-bit values, folded into the nodes just made where they can be.
  return fuse_qdq_lookup(g) || changed || folded;
}

}  // namespace parity::refrt
