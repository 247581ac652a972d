// Matrix products: linear, addmm, baddbmm, addbmm, addmv, addr, mm, bmm, mv, dot, matmul, t, einsum.
#include <algorithm>
#include <optional>

#include "../src/translate.h"

namespace parity::exporter {
namespace {

// The input of `v` when a Transpose(perm [1, 0]) of this graph produced it (a dequantized weight that
// dequantize_affine wrote as W^T for MatMul, quantized_torchao.cc): linear reads it without transposing back.
std::optional<std::string> transposed_from(TranslateContext& ctx, const std::string& v) {
  for (const auto& n : ctx.graph.proto()->node()) {
    if (n.output_size() != 1 || n.output(0) != v) continue;
    if (n.op_type() != "Transpose" || !n.domain().empty() || n.input_size() != 1) return std::nullopt;
    for (const auto& a : n.attribute())
      if (a.name() == "perm" && a.ints_size() == 2 && a.ints(0) == 1 && a.ints(1) == 0) return n.input(0);
    return std::nullopt;
  }
  return std::nullopt;
}

// y = x W^T + b. Rank-2 input maps to one Gemm; higher ranks to MatMul on the transposed weight.
void linear(TranslateContext& ctx) {
  const std::string x = ctx.tensor("input");
  const std::string w = ctx.tensor("weight");
  const pt2::Argument* bias = ctx.arg("bias");
  const bool has_bias = bias && !bias->is_none();
  const auto w_t = transposed_from(ctx, w);  // W^T itself, when it was computed transposed
  if (ctx.input_meta("input").sizes.size() == 2) {
    std::vector<std::string> inputs = {x, w_t.value_or(w)};
    if (has_bias) inputs.push_back(ctx.tensor("bias"));
    auto* gemm = ctx.emit("Gemm", inputs, {ctx.output()});
    if (!w_t) set_attr(gemm, "transB", int64_t{1});
    return;
  }
  std::string wt = w_t.value_or("");
  if (!w_t) {
    wt = ctx.temp("weight_t");
    set_attr(ctx.emit("Transpose", {w}, {wt}), "perm", std::vector<int64_t>{1, 0});
  }
  if (!has_bias) {
    ctx.emit("MatMul", {x, wt}, {ctx.output()});
    return;
  }
  const std::string xw = ctx.emit1("MatMul", {x, wt});
  ctx.emit("Add", {xw, ctx.tensor("bias")}, {ctx.output()});
}

// beta * self + alpha * (mat1 @ mat2)
void addmm(TranslateContext& ctx) {
  auto* gemm = ctx.emit("Gemm", {ctx.tensor("mat1"), ctx.tensor("mat2"), ctx.tensor("self")}, {ctx.output()});
  const double alpha = ctx.float_arg("alpha", 1.0), beta = ctx.float_arg("beta", 1.0);
  if (alpha != 1.0) set_attr(gemm, "alpha", static_cast<float>(alpha));
  if (beta != 1.0) set_attr(gemm, "beta", static_cast<float>(beta));
}

// beta * self + alpha * product, the shared tail of baddbmm / addbmm / addmv / addr (torch skips self
// entirely when beta == 0, so NaN in self does not propagate).
void scaled_sum(TranslateContext& ctx, const std::string& product) {
  const DType t = ctx.output_meta().dtype;
  const double alpha = ctx.float_arg("alpha", 1.0), beta = ctx.float_arg("beta", 1.0);
  const std::string scaled = alpha == 1.0 ? product : ctx.emit1("Mul", {product, ctx.constant(alpha, t)});
  if (beta == 0.0) {
    ctx.emit("Expand", {scaled, shape_of(ctx, ctx.emit1("Add", {scaled, ctx.tensor("self")}))}, {ctx.output()});
    return;
  }
  const std::string self =
      beta == 1.0 ? ctx.value("self", t) : ctx.emit1("Mul", {ctx.value("self", t), ctx.constant(beta, t)});
  ctx.emit("Add", {self, scaled}, {ctx.output()});
}

// baddbmm(self, batch1, batch2, beta, alpha): beta * self + alpha * (batch1 @ batch2), batched.
void baddbmm(TranslateContext& ctx) {
  scaled_sum(ctx, ctx.emit1("MatMul", {ctx.tensor("batch1"), ctx.tensor("batch2")}));
}

// addbmm: the batched products summed over the batch.
void addbmm(TranslateContext& ctx) {
  const std::string products = ctx.emit1("MatMul", {ctx.tensor("batch1"), ctx.tensor("batch2")});
  const std::string sum = ctx.temp("sum");
  emit_reduce(ctx, "ReduceSum", products, {0}, false, sum);
  scaled_sum(ctx, sum);
}

// addmv(self, mat, vec): beta * self + alpha * (mat @ vec).
void addmv(TranslateContext& ctx) { scaled_sum(ctx, ctx.emit1("MatMul", {ctx.tensor("mat"), ctx.tensor("vec")})); }

// addr(self, vec1, vec2): beta * self + alpha * outer(vec1, vec2).
void addr(TranslateContext& ctx) {
  const std::string col = ctx.emit1("Unsqueeze", {ctx.tensor("vec1"), ctx.graph.constant_i64({1})});
  const std::string row = ctx.emit1("Unsqueeze", {ctx.tensor("vec2"), ctx.graph.constant_i64({0})});
  scaled_sum(ctx, ctx.emit1("Mul", {col, row}));
}

// dot(self, tensor), vdot(self, other): the same product for real tensors.
void dot(TranslateContext& ctx) {
  ctx.emit("MatMul", {ctx.tensor("self"), ctx.tensor(ctx.has("tensor") ? "tensor" : "other")}, {ctx.output()});
}
void mv(TranslateContext& ctx) { ctx.emit("MatMul", {ctx.tensor("self"), ctx.tensor("vec")}, {ctx.output()}); }

// _weight_norm(v, g, dim): v * g / ||v||, the norm over every dim but `dim` (torch.nn.utils.weight_norm).
void weight_norm(TranslateContext& ctx) {
  const int64_t rank = static_cast<int64_t>(ctx.input_meta("v").sizes.size());
  const int64_t dim = ctx.int_arg("dim", 0);
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < rank; ++i)
    if (dim == -1 || i != ctx.normalized_dim(dim, rank)) axes.push_back(i);  // dim -1: one norm of the whole tensor
  const std::string norm = ctx.temp("norm");
  emit_reduce(ctx, "ReduceL2", ctx.tensor("v"), axes, true, norm);
  ctx.emit("Mul", {ctx.tensor("v"), ctx.emit1("Div", {ctx.tensor("g"), norm})}, {ctx.output()});
}

void mm(TranslateContext& ctx) { ctx.emit("MatMul", {ctx.tensor("self"), ctx.tensor("mat2")}, {ctx.output()}); }
void matmul(TranslateContext& ctx) { ctx.emit("MatMul", {ctx.tensor("self"), ctx.tensor("other")}, {ctx.output()}); }

void t(TranslateContext& ctx) {
  const size_t rank = ctx.input_meta("self").sizes.size();
  if (rank < 2) {
    ctx.alias_output(0, ctx.tensor("self"));
    return;
  }
  set_attr(ctx.emit("Transpose", {ctx.tensor("self")}, {ctx.output()}), "perm", std::vector<int64_t>{1, 0});
}

// einsum(equation, tensors, path): ONNX Einsum takes the same equation (the path is only an optimisation hint).
void einsum(TranslateContext& ctx) {
  const DType out = ctx.output_meta().dtype;
  if (out != DType::kFloat32 && out != DType::kFloat64 && out != DType::kFloat16 && out != DType::kBFloat16 &&
      out != DType::kInt32 && out != DType::kInt64)
    ctx.fail("einsum of dtype " + dtype_name(out) + " has no ONNX Einsum");
  std::string eq = ctx.string_arg("equation", "");
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  set_attr(ctx.emit("Einsum", ctx.tensors("tensors"), {ctx.output()}), "equation", eq);
}

}  // namespace

PARITY_TRANSLATION("aten::linear.default", linear, 18);
PARITY_TRANSLATION("aten::addmm.default", addmm, 18);
PARITY_TRANSLATION("aten::mm.default", mm, 18);
PARITY_TRANSLATION("aten::bmm.default", mm, 18);
PARITY_TRANSLATION("aten::matmul.default", matmul, 18);
PARITY_TRANSLATION("aten::t.default", t, 18);
PARITY_TRANSLATION("aten::baddbmm.default", baddbmm, 18);
PARITY_TRANSLATION("aten::addbmm.default", addbmm, 18);
PARITY_TRANSLATION("aten::addmv.default", addmv, 18);
PARITY_TRANSLATION("aten::addr.default", addr, 18);
PARITY_TRANSLATION("aten::dot.default", dot, 18);
PARITY_TRANSLATION("aten::vdot.default", dot, 18);
PARITY_TRANSLATION("aten::mv.default", mv, 18);
PARITY_TRANSLATION("aten::_weight_norm.default", weight_norm, 18);
PARITY_TRANSLATION("aten::einsum.default", einsum, 18);

}  // namespace parity::exporter
