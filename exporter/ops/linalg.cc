// Matrix products: linear, addmm, mm, bmm, matmul, t, einsum.
#include <algorithm>

#include "../src/translate.h"

namespace parity::exporter {
namespace {

// y = x W^T + b. Rank-2 input maps to one Gemm; higher ranks to MatMul on the transposed weight.
void linear(TranslateContext& ctx) {
  const std::string x = ctx.tensor("input");
  const std::string w = ctx.tensor("weight");
  const pt2::Argument* bias = ctx.arg("bias");
  const bool has_bias = bias && !bias->is_none();
  if (ctx.input_meta("input").sizes.size() == 2) {
    std::vector<std::string> inputs = {x, w};
    if (has_bias) inputs.push_back(ctx.tensor("bias"));
    set_attr(ctx.emit("Gemm", inputs, {ctx.output()}), "transB", int64_t{1});
    return;
  }
  const std::string wt = ctx.temp("weight_t");
  set_attr(ctx.emit("Transpose", {w}, {wt}), "perm", std::vector<int64_t>{1, 0});
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
PARITY_TRANSLATION("aten::einsum.default", einsum, 18);

}  // namespace parity::exporter
