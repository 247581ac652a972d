// See qdq_weights.h. Only the weight-side chain is folded: a QuantizeLinear whose output is a graph
// output, or whose parameters are not constants, stays.
#include "qdq_weights.h"

#include <algorithm>
#include <cmath>

#include "pass_util.h"

namespace parity::refrt {
namespace {

bool is_8bit(DType t) { return t == DType::kInt8 || t == DType::kUInt8; }

// x transposed by `perm` (perm empty: reversed dims); nullopt when perm is not a permutation of x's dims.
std::optional<Tensor> transposed(const Tensor& x, std::vector<int64_t> perm) {
  const size_t r = x.rank();
  if (perm.empty())
    for (size_t d = 0; d < r; ++d) perm.push_back(static_cast<int64_t>(r - 1 - d));
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t d = 0; d < sorted.size(); ++d)
    if (sorted.size() != r || sorted[d] != static_cast<int64_t>(d)) return std::nullopt;
  std::vector<int64_t> in_stride(r, 1);
  for (size_t d = r; d-- > 1;) in_stride[d - 1] = in_stride[d] * x.dim(d);
  Shape out_shape(r);
  for (size_t d = 0; d < r; ++d) out_shape[d] = x.dim(static_cast<size_t>(perm[d]));
  Tensor y(DType::kFloat32, out_shape);
  std::vector<int64_t> idx(r, 0);
  const float* px = x.data<float>();
  float* py = y.data<float>();
  if (r == 2 && perm[0] == 1) {  // a Linear's weights: a plain 2-D transpose
    for (int64_t i = 0; i < out_shape[0]; ++i)
      for (int64_t j = 0; j < out_shape[1]; ++j) py[i * out_shape[1] + j] = px[j * out_shape[0] + i];
    return y;
  }
  for (int64_t i = 0; i < y.numel(); ++i) {
    int64_t src = 0;
    for (size_t d = 0; d < r; ++d) src += idx[d] * in_stride[static_cast<size_t>(perm[d])];
    py[i] = px[src];
    for (size_t d = r; d-- > 0;) {  // next output index
      if (++idx[d] < out_shape[d]) break;
      idx[d] = 0;
    }
  }
  return y;
}

// saturate(rint(x / scale) + zp) as the QuantizeLinear kernel: float32 quotient, halves to even, NaN -> low end.
int32_t quantize_one(float x, float scale, int32_t zp, int32_t lo, int32_t hi) {
  const float q = x / scale;
  if (std::isnan(q)) return lo;
  const float a = static_cast<float>(lo - zp - 1), b = static_cast<float>(hi - zp + 1);
  const int32_t v = static_cast<int32_t>(std::nearbyint(std::clamp(q, a, b))) + zp;
  return std::clamp(v, lo, hi);
}

// The quantized tensor of float32 `x` with constant `scale` / `zp` (zp may be null: uint8 zero).
std::optional<Tensor> quantized(const NodeDef& q, const Tensor& x, const Tensor& scale, const Tensor* zp) {
  const DType out = zp ? zp->dtype() : DType::kUInt8;
  if (!is_8bit(out) || scale.dtype() != DType::kFloat32 || (zp && zp->numel() != scale.numel())) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(x.rank()), axis = q.attr_int("axis", 1);
  int64_t inner = x.numel(), len = 1;
  if (scale.numel() != 1) {  // per axis
    if (q.opset < 13 || scale.rank() != 1 || axis < -rank || axis >= rank) return std::nullopt;
    const size_t a = static_cast<size_t>(axis < 0 ? axis + rank : axis);
    len = x.dim(a);
    if (len != scale.numel()) return std::nullopt;
    inner = 1;
    for (size_t d = a + 1; d < x.rank(); ++d) inner *= x.dim(d);
  }
  const int32_t lo = out == DType::kInt8 ? -128 : 0, hi = out == DType::kInt8 ? 127 : 255;
  Tensor y(out, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t c = (i / inner) % len;
    const int32_t z = zp ? (out == DType::kInt8 ? zp->data<int8_t>()[c] : zp->data<uint8_t>()[c]) : 0;
    const int32_t v = quantize_one(x.data<float>()[i], scale.data<float>()[c], z, lo, hi);
    if (out == DType::kInt8)
      y.data<int8_t>()[i] = static_cast<int8_t>(v);
    else
      y.data<uint8_t>()[i] = static_cast<uint8_t>(v);
  }
  return y;
}

}  // namespace

bool quantize_constant_weights(GraphDef& g) {
  const GraphIndex ix(g);
  std::vector<bool> dead(g.nodes.size(), false);
  std::vector<std::pair<std::string, Tensor>> added;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const NodeDef& q = g.nodes[i];
    if (!is_op(q, "QuantizeLinear") || q.inputs.size() < 2 || q.outputs.size() != 1 || ix.outputs.count(q.outputs[0]))
      continue;
    if ((q.opset >= 21 && (q.attr_int("block_size", 0) != 0 || q.attr_int("output_dtype", 0) != 0))) continue;
    const Tensor* scale = ix.constant(q.inputs[1]);
    const bool has_zp = q.inputs.size() > 2 && !q.inputs[2].empty();
    const Tensor* zp = has_zp ? ix.constant(q.inputs[2]) : nullptr;
    if (!scale || (has_zp && !zp)) continue;
    const Tensor* w = ix.constant(q.inputs[0]);
    std::optional<Tensor> wt;
    auto p = ix.producer.find(q.inputs[0]);
    size_t ti = 0;
    if (!w && p != ix.producer.end() && is_op(g.nodes[p->second], "Transpose")) {
      ti = p->second;
      const Tensor* src = ix.constant(g.nodes[ti].inputs.empty() ? "" : g.nodes[ti].inputs[0]);
      if (src && src->dtype() == DType::kFloat32) wt = transposed(*src, g.nodes[ti].attr_ints("perm"));
      if (!wt) continue;
      w = &*wt;
    }
    if (!w || w->dtype() != DType::kFloat32) continue;
    std::optional<Tensor> y = quantized(q, *w, *scale, zp);
    if (!y) continue;
    added.emplace_back(q.outputs[0], std::move(*y));
    dead[i] = true;
    if (wt && ix.internal(q.inputs[0], 1)) dead[ti] = true;
  }
  if (added.empty()) return false;
  for (auto& a : added) g.initializers.push_back(std::move(a));
  compact(g, dead);
  return true;
}

}  // namespace parity::refrt
