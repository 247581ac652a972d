// Symbolic scalars and guards -> ONNX: operator.* / torch.sym_* / math.* on sym ints and floats become
// rank-0 int64 / double / bool arithmetic; runtime asserts and range hints emit nothing.
#include "../src/translate.h"

namespace parity::exporter {
namespace {

std::string operand(TranslateContext& ctx, size_t i, DType t) { return ctx.value(ctx.positional(i), t); }

DType common_dtype(TranslateContext& ctx) {
  for (const auto& in : ctx.node.inputs)
    if (ctx.dtype_of(in.arg) == DType::kFloat64) return DType::kFloat64;
  return ctx.dtype_of(ctx.positional(0));
}

void sym_binary(TranslateContext& ctx, const std::string& op) {
  const DType t = common_dtype(ctx);
  const std::string r = ctx.emit1(op, {operand(ctx, 0, t), operand(ctx, 1, t)});
  ctx.alias_output(0, ctx.cast_if_needed(r, t, ctx.output_dtype()));
}
void sym_add(TranslateContext& ctx) { sym_binary(ctx, "Add"); }
void sym_sub(TranslateContext& ctx) { sym_binary(ctx, "Sub"); }
void sym_mul(TranslateContext& ctx) { sym_binary(ctx, "Mul"); }
void sym_max(TranslateContext& ctx) { sym_binary(ctx, "Max"); }
void sym_min(TranslateContext& ctx) { sym_binary(ctx, "Min"); }
void sym_pow(TranslateContext& ctx) { sym_binary(ctx, "Pow"); }

void sym_compare(TranslateContext& ctx, const std::string& op, bool negate = false) {
  const DType t = common_dtype(ctx);
  std::string r = ctx.emit1(op, {operand(ctx, 0, t), operand(ctx, 1, t)});
  if (negate) r = ctx.emit1("Not", {r});
  ctx.alias_output(0, ctx.cast_if_needed(r, DType::kBool, ctx.output_dtype()));
}
void sym_eq(TranslateContext& ctx) { sym_compare(ctx, "Equal"); }
void sym_ne(TranslateContext& ctx) { sym_compare(ctx, "Equal", true); }
void sym_lt(TranslateContext& ctx) { sym_compare(ctx, "Less"); }
void sym_le(TranslateContext& ctx) { sym_compare(ctx, "LessOrEqual"); }
void sym_gt(TranslateContext& ctx) { sym_compare(ctx, "Greater"); }
void sym_ge(TranslateContext& ctx) { sym_compare(ctx, "GreaterOrEqual"); }

void sym_logical(TranslateContext& ctx, const std::string& op) {
  ctx.emit(op, {operand(ctx, 0, DType::kBool), operand(ctx, 1, DType::kBool)}, {ctx.output()});
}
void sym_and(TranslateContext& ctx) { sym_logical(ctx, "And"); }
void sym_or(TranslateContext& ctx) { sym_logical(ctx, "Or"); }
void sym_not(TranslateContext& ctx) { ctx.emit("Not", {operand(ctx, 0, DType::kBool)}, {ctx.output()}); }

void sym_neg(TranslateContext& ctx) {
  const DType t = ctx.dtype_of(ctx.positional(0));
  ctx.alias_output(0, ctx.cast_if_needed(ctx.emit1("Neg", {operand(ctx, 0, t)}), t, ctx.output_dtype()));
}

// Python floor division and modulo on ints round toward -inf; on floats floor(a / b).
void sym_floordiv(TranslateContext& ctx) {
  const DType t = common_dtype(ctx);
  const std::string a = operand(ctx, 0, DType::kFloat64), b = operand(ctx, 1, DType::kFloat64);
  // Sizes stay far below 2^53, where float64 division is exact enough for floor.
  const std::string q = ctx.emit1("Floor", {ctx.emit1("Div", {a, b})});
  ctx.alias_output(0, ctx.cast_if_needed(ctx.cast_if_needed(q, DType::kFloat64, t), t, ctx.output_dtype()));
}

void sym_mod(TranslateContext& ctx) {
  const DType t = common_dtype(ctx);
  if (t == DType::kInt64) {
    auto* n = ctx.emit("Mod", {operand(ctx, 0, t), operand(ctx, 1, t)}, {ctx.output()});
    set_attr(n, "fmod", int64_t{0});
    return;
  }
  const std::string a = operand(ctx, 0, t), b = operand(ctx, 1, t);
  const std::string fl = ctx.emit1("Floor", {ctx.emit1("Div", {a, b})});
  ctx.emit("Sub", {a, ctx.emit1("Mul", {fl, b})}, {ctx.output()});
}

void sym_truediv(TranslateContext& ctx) {
  const std::string r = ctx.emit1("Div", {operand(ctx, 0, DType::kFloat64), operand(ctx, 1, DType::kFloat64)});
  ctx.alias_output(0, ctx.cast_if_needed(r, DType::kFloat64, ctx.output_dtype()));
}

// Conversions and rounding: the output kind decides the dtype.
void sym_convert(TranslateContext& ctx) { ctx.alias_output(0, operand(ctx, 0, ctx.output_dtype())); }

void sym_round_with(TranslateContext& ctx, const std::string& op) {
  const std::string x = operand(ctx, 0, DType::kFloat64);
  std::string r;
  if (op == "Trunc")
    r = ctx.emit1("Mul", {ctx.emit1("Sign", {x}), ctx.emit1("Floor", {ctx.emit1("Abs", {x})})});
  else
    r = ctx.emit1(op, {x});
  ctx.alias_output(0, ctx.cast_if_needed(r, DType::kFloat64, ctx.output_dtype()));
}
void math_ceil(TranslateContext& ctx) { sym_round_with(ctx, "Ceil"); }
void math_floor(TranslateContext& ctx) { sym_round_with(ctx, "Floor"); }
void math_trunc(TranslateContext& ctx) { sym_round_with(ctx, "Trunc"); }
void math_sqrt(TranslateContext& ctx) { sym_round_with(ctx, "Sqrt"); }
void sym_int(TranslateContext& ctx) { sym_round_with(ctx, "Trunc"); }

// sym_ite(cond, a, b)
void sym_ite(TranslateContext& ctx) {
  const DType t = ctx.output_dtype();
  ctx.emit("Where", {operand(ctx, 0, DType::kBool), operand(ctx, 1, t), operand(ctx, 2, t)}, {ctx.output()});
}

// _local_scalar_dense(self) (tensor.item()): the single element as a rank-0 value of the sym kind.
void local_scalar_dense(TranslateContext& ctx) {
  const std::string x = ctx.emit1("Reshape", {ctx.tensor("self"), ctx.graph.constant_i64({})}, "item");
  ctx.alias_output(0, ctx.cast_if_needed(x, ctx.input_meta("self").dtype, ctx.output_dtype()));
}

// Guards and hints: torch.export proved them for the traced ranges; ONNX has nothing to check them with.
void no_op(TranslateContext&) {}

}  // namespace

PARITY_TRANSLATION("_operator::add", sym_add, 18);
PARITY_TRANSLATION("_operator::sub", sym_sub, 18);
PARITY_TRANSLATION("_operator::mul", sym_mul, 18);
PARITY_TRANSLATION("_operator::pow", sym_pow, 18);
PARITY_TRANSLATION("_operator::floordiv", sym_floordiv, 18);
PARITY_TRANSLATION("_operator::truediv", sym_truediv, 18);
PARITY_TRANSLATION("_operator::mod", sym_mod, 18);
PARITY_TRANSLATION("_operator::neg", sym_neg, 18);
PARITY_TRANSLATION("_operator::eq", sym_eq, 18);
PARITY_TRANSLATION("_operator::ne", sym_ne, 18);
PARITY_TRANSLATION("_operator::lt", sym_lt, 18);
PARITY_TRANSLATION("_operator::le", sym_le, 18);
PARITY_TRANSLATION("_operator::gt", sym_gt, 18);
PARITY_TRANSLATION("_operator::ge", sym_ge, 18);
PARITY_TRANSLATION("_operator::and_", sym_and, 18);
PARITY_TRANSLATION("_operator::or_", sym_or, 18);
PARITY_TRANSLATION("_operator::not_", sym_not, 18);
PARITY_TRANSLATION("torch::sym_max", sym_max, 18);
PARITY_TRANSLATION("torch::sym_min", sym_min, 18);
PARITY_TRANSLATION("torch::sym_not", sym_not, 18);
PARITY_TRANSLATION("torch::sym_float", sym_convert, 18);
PARITY_TRANSLATION("torch::sym_int", sym_int, 18);
PARITY_TRANSLATION("torch::sym_ite", sym_ite, 18);
PARITY_TRANSLATION("torch::_sym_sqrt", math_sqrt, 18);
PARITY_TRANSLATION("math::ceil", math_ceil, 18);
PARITY_TRANSLATION("math::floor", math_floor, 18);
PARITY_TRANSLATION("math::trunc", math_trunc, 18);
PARITY_TRANSLATION("math::sqrt", math_sqrt, 18);
PARITY_TRANSLATION("aten::_local_scalar_dense.default", local_scalar_dense, 18);
PARITY_TRANSLATION("aten::item.default", local_scalar_dense, 18);
PARITY_TRANSLATION("aten::_assert_scalar.default", no_op, 18);
PARITY_TRANSLATION("aten::_assert_tensor_metadata.default", no_op, 18);
PARITY_TRANSLATION("aten::_assert_async.msg", no_op, 18);
PARITY_TRANSLATION("aten::sym_constrain_range_for_size.default", no_op, 18);
PARITY_TRANSLATION("aten::sym_constrain_range.default", no_op, 18);

}  // namespace parity::exporter
