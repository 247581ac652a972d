// Weight-only quantized products (torchao's int4 / int8 weight-only schemes, ONNX Runtime's MatMulNBits
// pattern):
//   DequantizeLinear(W const int8/uint8 [K, N], scale const float32, zero point const?) -> MatMul / Gemm (as B)
// with W quantized per block of K rows (axis 0, block_size), per column (axis 1) or per tensor becomes one
// WeightOnlyMatMul (kernels/weight_only.cc) that reads the 8-bit weights (4-bit INT4 / UINT4 files are read
// unpacked, one value per byte) and never builds the float weight matrix. Runs before constant folding,
// which would turn the DequantizeLinear of constants into a float initializer.
#include <cstdlib>
#include <cstring>

#include "../activation.h"
#include "optimizer.h"
#include "pass_util.h"
#include "passes.h"

namespace parity::refrt {
namespace {

// The weight's scale and zero point as [blocks, N] with the block size along K; nullopt when the
// DequantizeLinear's layout is none of the three.
struct Blocked {
  Tensor scale, zero_point;  // zero_point undefined when absent
  int64_t block = 0;
};

std::optional<Blocked> blocked_qparams(const NodeDef& dq, const Tensor& w, const Tensor& scale, const Tensor* zp) {
  const int64_t k = w.dim(0), n = w.dim(1);
  int64_t axis = dq.attr_int("axis", 1);
  if (axis < 0) axis += 2;
  const int64_t block = dq.opset >= 21 ? dq.attr_int("block_size", 0) : 0;
  Blocked b;
  int64_t blocks = 1;
  bool per_column = false;
  if (scale.numel() == 1 && block == 0) {  // per tensor
    b.block = k;
  } else if (block > 0 && axis == 0 && scale.rank() == 2 && scale.dim(1) == n &&
             scale.dim(0) == (k + block - 1) / block) {
    b.block = block;
    blocks = scale.dim(0);
  } else if (block == 0 && axis == 1 && scale.rank() == 1 && scale.dim(0) == n) {
    b.block = k;
    per_column = true;
  } else {
    return std::nullopt;
  }
  if (zp && zp->shape() != scale.shape()) return std::nullopt;
  // Expanded to [blocks, N] so the kernel has one layout.
  auto expand = [&](const Tensor& t) {
    Tensor out(t.dtype(), {blocks, n});
    const size_t es = dtype_size(t.dtype());
    auto* dst = static_cast<uint8_t*>(out.mutable_raw());
    const auto* src = static_cast<const uint8_t*>(t.raw());
    for (int64_t i = 0; i < blocks * n; ++i) {
      const int64_t from = t.numel() == 1 ? 0 : (per_column ? i % n : i);
      std::memcpy(dst + i * es, src + from * es, es);
    }
    return out;
  };
  b.scale = expand(scale);
  if (zp) b.zero_point = expand(*zp);
  return b;
}

}  // namespace

bool fuse_weight_only(GraphDef& g) {
  GraphIndex ix(g);
  std::vector<bool> dead(g.nodes.size(), false);
  bool changed = false;
  for (size_t di = 0; di < g.nodes.size(); ++di) {
    const NodeDef& dq = g.nodes[di];
    if (!is_op(dq, "DequantizeLinear") || dq.inputs.size() < 2 || dq.outputs.size() != 1) continue;
    const Tensor* w = ix.constant(dq.inputs[0]);
    const Tensor* scale = ix.constant(dq.inputs[1]);
    const Tensor* zp = dq.inputs.size() > 2 && !dq.inputs[2].empty() ? ix.constant(dq.inputs[2]) : nullptr;
    if (!w || !scale || w->rank() != 2 || (w->dtype() != DType::kInt8 && w->dtype() != DType::kUInt8) ||
        scale->dtype() != DType::kFloat32 || (dq.inputs.size() > 2 && !dq.inputs[2].empty() && !zp) ||
        (zp && zp->dtype() != w->dtype()) || dq.attr_int("output_dtype", 0) > 1)
      continue;
    size_t mi = 0;
    const NodeDef* mm = sole_reader(g, ix, dq.outputs[0], &mi);
    if (!mm || dead[mi] || mm->inputs.size() < 2 || mm->inputs[1] != dq.outputs[0] || mm->inputs[0] == mm->inputs[1])
      continue;
    const bool gemm = is_op(*mm, "Gemm");
    if (!gemm && !is_op(*mm, "MatMul")) continue;
    const int64_t n = w->dim(1);
    Tensor bias;
    if (gemm) {
      if (mm->attr_int("transA", 0) != 0 || mm->attr_int("transB", 0) != 0 || mm->attr_float("alpha", 1.0f) != 1.0f ||
          mm->attr_float("beta", 1.0f) != 1.0f)
        continue;
      if (mm->inputs.size() > 2 && !mm->inputs[2].empty()) {  // C: a constant row of N
        const Tensor* c = ix.constant(mm->inputs[2]);
        if (!c || c->dtype() != DType::kFloat32 || c->numel() != n || c->shape().back() != n) continue;
        bias = c->clone();
      }
    }
    auto qparams = blocked_qparams(dq, *w, *scale, zp);
    if (!qparams) continue;
    NodeDef fused = *mm;
    fused.op_type = "WeightOnlyMatMul";
    fused.domain = kFusedDomain;
    fused.opset = 1;
    fused.inputs = {mm->inputs[0]};
    fused.attributes.clear();
    fused.attributes["gemm"] = int_attribute(gemm ? 1 : 0);
    fused.attributes["w"] = tensor_attribute(*w);
    fused.attributes["w_scale"] = tensor_attribute(std::move(qparams->scale));
    if (qparams->zero_point.defined())
      fused.attributes["w_zero_point"] = tensor_attribute(std::move(qparams->zero_point));
    fused.attributes["block_size"] = int_attribute(qparams->block);
    if (bias.defined()) fused.attributes["bias"] = tensor_attribute(std::move(bias));
    // The DequantizeLinear of constants is folded at load in the unfused plan: it has no place in
    // fused_from (a profile names the nodes that run).
    fused.fused_from = {{mm->name, mm->op_type}};
    g.nodes[mi] = std::move(fused);
    dead[di] = true;
    changed = true;
  }
  if (changed) compact(g, dead);
  return changed;
}

// ONNX Runtime fuses the same pattern into MatMulNBits with accuracy_level = its session entry
// session.qdq_matmulnbits_accuracy_level (default 4) and computes with int8 activations only at level 4 (where MLAS
// has the int8 kernel), in float32 at every other level. refrt takes the same numbers with the other default:
// exact unless asked for 4.
void set_weight_only_accuracy(GraphDef& g, int level) {
  for (NodeDef& node : g.nodes)
    if (node.domain == kFusedDomain && node.op_type == "WeightOnlyMatMul")
      node.attributes["accuracy_level"] = int_attribute(level);
}

int resolve_weight_only_accuracy(int option, const std::string& origin) {
  std::string from = "SessionOptions::weight_only_accuracy";
  if (option < 0) {
    const char* v = std::getenv("PARITY_REFRT_WEIGHT_ONLY_ACCURACY");
    if (v == nullptr || *v == '\0') return 0;
    from = "PARITY_REFRT_WEIGHT_ONLY_ACCURACY";
    char* end = nullptr;
    const long parsed = std::strtol(v, &end, 10);
    option = *end == '\0' && parsed >= 0 && parsed <= 4 ? static_cast<int>(parsed) : 99;
  }
  if (option > 4)
    throw Error({"refrt", origin},
                from + " must be 0 (exact float products) to 4 (int8 activations), got " +
                    (from == "SessionOptions::weight_only_accuracy"
                         ? std::to_string(option)
                         : std::string("'") + std::getenv("PARITY_REFRT_WEIGHT_ONLY_ACCURACY") + "'"),
                ErrorKind::kUsage);
  return option;
}

}  // namespace parity::refrt
