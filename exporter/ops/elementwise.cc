// Elementwise ATen ops -> ONNX. Type promotion follows the FX output dtype: inputs are cast to it.
#include "../src/translate.h"

namespace parity::exporter {
namespace {

// other: a tensor or a Python scalar (the .Scalar overloads), converted to the output dtype.
std::string operand(TranslateContext& ctx, const std::string& name, DType out_dtype) {
  const pt2::Argument& a = ctx.required(name);
  if (a.is_tensor()) return ctx.cast_if_needed(ctx.tensor(name), ctx.input_meta(name).dtype, out_dtype);
  const std::string c = ctx.graph.constant_scalar(a.as_float(), out_dtype);
  const bool narrow = out_dtype != DType::kFloat32 && out_dtype != DType::kFloat64 && out_dtype != DType::kInt64 &&
                      out_dtype != DType::kInt32 && out_dtype != DType::kBool;
  return narrow ? ctx.cast_if_needed(c, DType::kFloat32, out_dtype) : c;
}

void binary(TranslateContext& ctx, const std::string& op_type) {
  const DType out = ctx.output_meta().dtype;
  std::string a = operand(ctx, "self", out);
  std::string b = operand(ctx, "other", out);
  // add/sub carry alpha: self + alpha * other.
  if (const pt2::Argument* alpha = ctx.arg("alpha"); alpha && !alpha->is_none() && alpha->as_float() != 1.0) {
    b = ctx.emit1("Mul", {b, ctx.graph.constant_scalar(alpha->as_float(), out)}, "alpha");
  }
  ctx.emit(op_type, {a, b}, {ctx.output()});
}

void add(TranslateContext& ctx) { binary(ctx, "Add"); }
void sub(TranslateContext& ctx) { binary(ctx, "Sub"); }
void mul(TranslateContext& ctx) { binary(ctx, "Mul"); }
void div(TranslateContext& ctx) {
  const pt2::Argument* mode = ctx.arg("rounding_mode");
  if (mode && !mode->is_none()) ctx.fail("div with rounding_mode is not supported yet");
  binary(ctx, "Div");
}

void unary(TranslateContext& ctx, const std::string& op_type) {
  ctx.emit(op_type, {ctx.tensor("self")}, {ctx.output()});
}

void relu(TranslateContext& ctx) { unary(ctx, "Relu"); }
void sigmoid(TranslateContext& ctx) { unary(ctx, "Sigmoid"); }
void tanh_(TranslateContext& ctx) { unary(ctx, "Tanh"); }
void exp_(TranslateContext& ctx) { unary(ctx, "Exp"); }
void log_(TranslateContext& ctx) { unary(ctx, "Log"); }
void neg(TranslateContext& ctx) { unary(ctx, "Neg"); }
void abs_(TranslateContext& ctx) { unary(ctx, "Abs"); }
void sqrt_(TranslateContext& ctx) { unary(ctx, "Sqrt"); }

}  // namespace

PARITY_TRANSLATION("aten::add.Tensor", add, 18);
PARITY_TRANSLATION("aten::add.Scalar", add, 18);
PARITY_TRANSLATION("aten::sub.Tensor", sub, 18);
PARITY_TRANSLATION("aten::sub.Scalar", sub, 18);
PARITY_TRANSLATION("aten::mul.Tensor", mul, 18);
PARITY_TRANSLATION("aten::mul.Scalar", mul, 18);
PARITY_TRANSLATION("aten::div.Tensor", div, 18);
PARITY_TRANSLATION("aten::div.Scalar", div, 18);
PARITY_TRANSLATION("aten::relu.default", relu, 18);
PARITY_TRANSLATION("aten::sigmoid.default", sigmoid, 18);
PARITY_TRANSLATION("aten::tanh.default", tanh_, 18);
PARITY_TRANSLATION("aten::exp.default", exp_, 18);
PARITY_TRANSLATION("aten::log.default", log_, 18);
PARITY_TRANSLATION("aten::neg.default", neg, 18);
PARITY_TRANSLATION("aten::abs.default", abs_, 18);
PARITY_TRANSLATION("aten::sqrt.default", sqrt_, 18);

}  // namespace parity::exporter
