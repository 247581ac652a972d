// Comparison, logical, bitwise and floating-point classification ATen ops -> ONNX.
#include "../src/translate.h"

namespace parity::exporter {
namespace {

void compare(TranslateContext& ctx, const std::string& op_type, bool negate = false) {
  const DType common = promote(ctx, "self", "other");
  const std::string a = ctx.value("self", common), b = ctx.value("other", common);
  if (!negate) {
    ctx.emit(op_type, {a, b}, {ctx.output()});
    return;
  }
  ctx.emit("Not", {ctx.emit1(op_type, {a, b})}, {ctx.output()});
}

void eq(TranslateContext& ctx) { compare(ctx, "Equal"); }
void ne(TranslateContext& ctx) { compare(ctx, "Equal", true); }
void lt(TranslateContext& ctx) { compare(ctx, "Less"); }
void le(TranslateContext& ctx) { compare(ctx, "LessOrEqual"); }
void gt(TranslateContext& ctx) { compare(ctx, "Greater"); }
void ge(TranslateContext& ctx) { compare(ctx, "GreaterOrEqual"); }

// logical_*: operands as bool; the output may be another dtype (out= variants never reach here).
void logical(TranslateContext& ctx, const std::string& op_type) {
  const std::string r = ctx.emit1(op_type, {ctx.value("self", DType::kBool), ctx.value("other", DType::kBool)});
  ctx.alias_output(0, ctx.cast_if_needed(r, DType::kBool, ctx.output_meta().dtype));
}
void logical_and(TranslateContext& ctx) { logical(ctx, "And"); }
void logical_or(TranslateContext& ctx) { logical(ctx, "Or"); }
void logical_xor(TranslateContext& ctx) { logical(ctx, "Xor"); }

void logical_not(TranslateContext& ctx) {
  const std::string r = ctx.emit1("Not", {ctx.value("self", DType::kBool)});
  ctx.alias_output(0, ctx.cast_if_needed(r, DType::kBool, ctx.output_meta().dtype));
}

// bitwise_*: And/Or/Xor on bool, BitwiseAnd/Or/Xor (opset 18) on integers.
void bitwise(TranslateContext& ctx, const std::string& logical_op, const std::string& bitwise_op) {
  const DType out = ctx.output_meta().dtype;
  const std::string a = ctx.value("self", out), b = ctx.value("other", out);
  ctx.emit(out == DType::kBool ? logical_op : bitwise_op, {a, b}, {ctx.output()});
}
void bitwise_and(TranslateContext& ctx) { bitwise(ctx, "And", "BitwiseAnd"); }
void bitwise_or(TranslateContext& ctx) { bitwise(ctx, "Or", "BitwiseOr"); }
void bitwise_xor(TranslateContext& ctx) { bitwise(ctx, "Xor", "BitwiseXor"); }

void bitwise_not(TranslateContext& ctx) {
  const DType out = ctx.output_meta().dtype;
  ctx.emit(out == DType::kBool ? "Not" : "BitwiseNot", {ctx.tensor("self")}, {ctx.output()});
}

void isnan_(TranslateContext& ctx) {
  if (!dtype_is_floating(ctx.input_meta("self").dtype)) {
    ctx.emit("Expand", {ctx.constant(0, DType::kBool), shape_of(ctx, ctx.tensor("self"))}, {ctx.output()});
    return;
  }
  ctx.emit("IsNaN", {ctx.tensor("self")}, {ctx.output()});
}

void isinf_(TranslateContext& ctx) {
  if (!dtype_is_floating(ctx.input_meta("self").dtype)) {
    ctx.emit("Expand", {ctx.constant(0, DType::kBool), shape_of(ctx, ctx.tensor("self"))}, {ctx.output()});
    return;
  }
  ctx.emit("IsInf", {ctx.tensor("self")}, {ctx.output()});
}

}  // namespace

PARITY_TRANSLATION("aten::eq.Tensor", eq, 18);
PARITY_TRANSLATION("aten::eq.Scalar", eq, 18);
PARITY_TRANSLATION("aten::ne.Tensor", ne, 18);
PARITY_TRANSLATION("aten::ne.Scalar", ne, 18);
PARITY_TRANSLATION("aten::lt.Tensor", lt, 18);
PARITY_TRANSLATION("aten::lt.Scalar", lt, 18);
PARITY_TRANSLATION("aten::le.Tensor", le, 18);
PARITY_TRANSLATION("aten::le.Scalar", le, 18);
PARITY_TRANSLATION("aten::gt.Tensor", gt, 18);
PARITY_TRANSLATION("aten::gt.Scalar", gt, 18);
PARITY_TRANSLATION("aten::ge.Tensor", ge, 18);
PARITY_TRANSLATION("aten::ge.Scalar", ge, 18);
PARITY_TRANSLATION("aten::logical_and.default", logical_and, 18);
PARITY_TRANSLATION("aten::logical_or.default", logical_or, 18);
PARITY_TRANSLATION("aten::logical_xor.default", logical_xor, 18);
PARITY_TRANSLATION("aten::logical_not.default", logical_not, 18);
PARITY_TRANSLATION("aten::bitwise_and.Tensor", bitwise_and, 18);
PARITY_TRANSLATION("aten::bitwise_and.Scalar", bitwise_and, 18);
PARITY_TRANSLATION("aten::bitwise_or.Tensor", bitwise_or, 18);
PARITY_TRANSLATION("aten::bitwise_or.Scalar", bitwise_or, 18);
PARITY_TRANSLATION("aten::bitwise_xor.Tensor", bitwise_xor, 18);
PARITY_TRANSLATION("aten::bitwise_xor.Scalar", bitwise_xor, 18);
PARITY_TRANSLATION("aten::bitwise_not.default", bitwise_not, 18);
PARITY_TRANSLATION("aten::isnan.default", isnan_, 18);
PARITY_TRANSLATION("aten::isinf.default", isinf_, 18);

}  // namespace parity::exporter
