// Elementwise arithmetic ATen ops -> ONNX. Type promotion follows the FX output dtype: inputs are cast to it.
#include <cmath>

#include "../src/translate.h"

namespace parity::exporter {

// atan2(y, x) = atan(y/x) corrected into the right quadrant.
void emit_atan2(TranslateContext& ctx, const std::string& y, const std::string& x, DType out,
                const std::string& result) {
  const std::string base = ctx.emit1("Atan", {ctx.emit1("Div", {y, x})});
  const std::string zero = ctx.constant(0, out);
  const std::string pi = ctx.constant(M_PI, out), minus_pi = ctx.constant(-M_PI, out);
  const std::string shift = ctx.emit1(
      "Where",
      {ctx.emit1("Less", {x, zero}), ctx.emit1("Where", {ctx.emit1("GreaterOrEqual", {y, zero}), pi, minus_pi}), zero},
      "shift");
  const std::string r = ctx.emit1("Add", {base, shift});
  // atan2(0, 0) is 0 in torch, NaN in the formula.
  const std::string both_zero = ctx.emit1("And", {ctx.emit1("Equal", {x, zero}), ctx.emit1("Equal", {y, zero})});
  ctx.emit("Where", {both_zero, zero, r}, {result});
}

namespace {

void binary(TranslateContext& ctx, const std::string& op_type) {
  const DType out = ctx.output_meta().dtype;
  std::string a = ctx.value("self", out);
  std::string b = ctx.value("other", out);
  // add/sub carry alpha: self + alpha * other.
  if (const pt2::Argument* alpha = ctx.arg("alpha"); alpha && !alpha->is_none() && alpha->as_float() != 1.0) {
    b = ctx.emit1("Mul", {b, ctx.constant(alpha->as_float(), out)}, "alpha");
  }
  ctx.emit(op_type, {a, b}, {ctx.output()});
}

void add(TranslateContext& ctx) { binary(ctx, "Add"); }
void sub(TranslateContext& ctx) { binary(ctx, "Sub"); }
void mul(TranslateContext& ctx) { binary(ctx, "Mul"); }
void maximum(TranslateContext& ctx) { binary(ctx, "Max"); }
void minimum(TranslateContext& ctx) { binary(ctx, "Min"); }

// rsub(self, other, alpha) = other - alpha * self
void rsub(TranslateContext& ctx) {
  const DType out = ctx.output_meta().dtype;
  std::string a = ctx.value("self", out);
  if (const pt2::Argument* alpha = ctx.arg("alpha"); alpha && !alpha->is_none() && alpha->as_float() != 1.0)
    a = ctx.emit1("Mul", {a, ctx.constant(alpha->as_float(), out)}, "alpha");
  ctx.emit("Sub", {ctx.value("other", out), a}, {ctx.output()});
}

// Integer floor division, exact: truncating Div, minus one where the remainder's sign differs from b's.
std::string int_floor_div(TranslateContext& ctx, const std::string& a, const std::string& b, DType t) {
  const std::string q = ctx.emit1("Div", {a, b}, "trunc_div");
  const std::string r = ctx.emit1("Sub", {a, ctx.emit1("Mul", {q, b})}, "rem");
  const std::string zero = ctx.constant(0, t);
  const std::string nonzero = ctx.emit1("Not", {ctx.emit1("Equal", {r, zero})});
  const std::string signs_differ =
      ctx.emit1("Xor", {ctx.emit1("Less", {r, zero}), ctx.emit1("Less", {b, zero})}, "signs_differ");
  const std::string adjust = ctx.cast_if_needed(ctx.emit1("And", {nonzero, signs_differ}), DType::kBool, t);
  return ctx.emit1("Sub", {q, adjust}, "floor_div");
}

void div(TranslateContext& ctx) {
  const std::string mode = ctx.string_arg("rounding_mode", "");
  const DType out = ctx.output_meta().dtype;
  if (mode.empty()) {
    binary(ctx, "Div");
    return;
  }
  const std::string a = ctx.value("self", out), b = ctx.value("other", out);
  if (!dtype_is_floating(out)) {
    if (mode == "trunc")
      ctx.emit("Div", {a, b}, {ctx.output()});  // ONNX integer Div truncates
    else
      ctx.emit("Identity", {int_floor_div(ctx, a, b, out)}, {ctx.output()});
    return;
  }
  const std::string q = ctx.emit1("Div", {a, b});
  if (mode == "floor") {
    ctx.emit("Floor", {q}, {ctx.output()});
    return;
  }
  if (mode != "trunc") ctx.fail("unknown rounding_mode '" + mode + "'");
  // trunc(q) = sign(q) * floor(|q|)
  ctx.emit("Mul", {ctx.emit1("Sign", {q}), ctx.emit1("Floor", {ctx.emit1("Abs", {q})})}, {ctx.output()});
}

// fmod keeps the dividend's sign: ONNX Mod with fmod=1 (valid for every type).
void fmod_(TranslateContext& ctx) {
  const DType out = ctx.output_meta().dtype;
  auto* n = ctx.emit("Mod", {ctx.value("self", out), ctx.value("other", out)}, {ctx.output()});
  set_attr(n, "fmod", int64_t{1});
}

// remainder keeps the divisor's sign: Mod fmod=0 for integers; a - floor(a/b)*b for floats.
void remainder(TranslateContext& ctx) {
  const DType out = ctx.output_meta().dtype;
  const std::string a = ctx.value("self", out), b = ctx.value("other", out);
  if (!dtype_is_floating(out)) {
    set_attr(ctx.emit("Mod", {a, b}, {ctx.output()}), "fmod", int64_t{0});
    return;
  }
  const std::string fl = ctx.emit1("Floor", {ctx.emit1("Div", {a, b})});
  ctx.emit("Sub", {a, ctx.emit1("Mul", {fl, b})}, {ctx.output()});
}

void pow_(TranslateContext& ctx) {
  const DType out = ctx.output_meta().dtype;
  ctx.emit("Pow", {ctx.value("self", out), ctx.value("exponent", out)}, {ctx.output()});
}

void atan2_(TranslateContext& ctx) {
  const DType out = ctx.output_meta().dtype;
  emit_atan2(ctx, ctx.value("self", out), ctx.value("other", out), out, ctx.output());
}

void unary(TranslateContext& ctx, const std::string& op_type) {
  const DType out = ctx.output_meta().dtype;
  ctx.emit(op_type, {ctx.value("self", out)}, {ctx.output()});
}

#define PARITY_UNARY(name, op) \
  void name(TranslateContext& ctx) { unary(ctx, op); }
PARITY_UNARY(relu, "Relu")
PARITY_UNARY(sigmoid, "Sigmoid")
PARITY_UNARY(tanh_, "Tanh")
PARITY_UNARY(exp_, "Exp")
PARITY_UNARY(log_, "Log")
PARITY_UNARY(neg, "Neg")
PARITY_UNARY(abs_, "Abs")
PARITY_UNARY(sqrt_, "Sqrt")
PARITY_UNARY(acos_, "Acos")
PARITY_UNARY(acosh_, "Acosh")
PARITY_UNARY(asin_, "Asin")
PARITY_UNARY(asinh_, "Asinh")
PARITY_UNARY(atan_, "Atan")
PARITY_UNARY(atanh_, "Atanh")
PARITY_UNARY(ceil_, "Ceil")
PARITY_UNARY(floor_, "Floor")
PARITY_UNARY(cos_, "Cos")
PARITY_UNARY(cosh_, "Cosh")
PARITY_UNARY(sin_, "Sin")
PARITY_UNARY(sinh_, "Sinh")
PARITY_UNARY(tan_, "Tan")
PARITY_UNARY(erf_, "Erf")
PARITY_UNARY(reciprocal, "Reciprocal")
PARITY_UNARY(round_, "Round")  // both round half to even
PARITY_UNARY(sign_, "Sign")
#undef PARITY_UNARY

void trunc_(TranslateContext& ctx) {
  const std::string x = ctx.tensor("self");
  if (!dtype_is_floating(ctx.output_meta().dtype)) return ctx.alias_output(0, x);
  ctx.emit("Mul", {ctx.emit1("Sign", {x}), ctx.emit1("Floor", {ctx.emit1("Abs", {x})})}, {ctx.output()});
}

void rsqrt(TranslateContext& ctx) {
  const DType out = ctx.output_meta().dtype;
  ctx.emit("Reciprocal", {ctx.emit1("Sqrt", {ctx.value("self", out)})}, {ctx.output()});
}

void expm1(TranslateContext& ctx) {
  const DType out = ctx.output_meta().dtype;
  ctx.emit("Sub", {ctx.emit1("Exp", {ctx.value("self", out)}), ctx.constant(1, out)}, {ctx.output()});
}

void log1p(TranslateContext& ctx) {
  const DType out = ctx.output_meta().dtype;
  ctx.emit("Log", {ctx.emit1("Add", {ctx.value("self", out), ctx.constant(1, out)})}, {ctx.output()});
}

void log_base(TranslateContext& ctx, double base) {
  const DType out = ctx.output_meta().dtype;
  ctx.emit("Div", {ctx.emit1("Log", {ctx.value("self", out)}), ctx.constant(std::log(base), out)}, {ctx.output()});
}
void log2_(TranslateContext& ctx) { log_base(ctx, 2.0); }
void log10_(TranslateContext& ctx) { log_base(ctx, 10.0); }

// clamp(self, min?, max?) with scalars -> Clip; with tensors -> Max/Min (Clip wants scalar bounds).
void clamp(TranslateContext& ctx) {
  const DType out = ctx.output_meta().dtype;
  std::string x = ctx.value("self", out);
  if (ctx.node.target.find(".Tensor") != std::string::npos) {
    if (ctx.has("min")) x = ctx.emit1("Max", {x, ctx.value("min", out)}, "clamp_min");
    if (ctx.has("max")) x = ctx.emit1("Min", {x, ctx.value("max", out)}, "clamp_max");
    return ctx.alias_output(0, x);
  }
  std::vector<std::string> inputs = {x, ctx.has("min") ? ctx.value("min", out) : std::string()};
  if (ctx.has("max")) inputs.push_back(ctx.value("max", out));
  ctx.emit("Clip", inputs, {ctx.output()});
}

void clamp_min(TranslateContext& ctx) {
  const DType out = ctx.output_meta().dtype;
  ctx.emit("Max", {ctx.value("self", out), ctx.value("min", out)}, {ctx.output()});
}
void clamp_max(TranslateContext& ctx) {
  const DType out = ctx.output_meta().dtype;
  ctx.emit("Min", {ctx.value("self", out), ctx.value("max", out)}, {ctx.output()});
}

// where(condition, self, other)
void where(TranslateContext& ctx) {
  const DType out = ctx.output_meta().dtype;
  ctx.emit("Where", {ctx.value("condition", DType::kBool), ctx.value("self", out), ctx.value("other", out)},
           {ctx.output()});
}

// masked_fill(self, mask, value)
void masked_fill(TranslateContext& ctx) {
  const DType out = ctx.output_meta().dtype;
  ctx.emit("Where", {ctx.value("mask", DType::kBool), ctx.value("value", out), ctx.tensor("self")}, {ctx.output()});
}

// lerp(self, end, weight) = self + weight * (end - self)
void lerp(TranslateContext& ctx) {
  const DType out = ctx.output_meta().dtype;
  const std::string a = ctx.value("self", out);
  const std::string d = ctx.emit1("Sub", {ctx.value("end", out), a});
  ctx.emit("Add", {a, ctx.emit1("Mul", {ctx.value("weight", out), d})}, {ctx.output()});
}

// _to_copy / to.dtype / type conversions: a Cast to the output dtype (Identity when it already matches).
void to_copy(TranslateContext& ctx) {
  const DType out = ctx.output_meta().dtype;
  // A number as `self`: torch wraps it as a 0-d tensor (vmap's batching rule leaves `_to_copy(1, dtype=...)`
  // for the `+ 1` of a batched `x * y + 1`), so the converted value is that number in the output dtype.
  if (!ctx.required("self").is_tensor()) return ctx.alias_output(0, ctx.value("self", out));
  const DType in = ctx.input_meta("self").dtype;
  if (in == out) return ctx.alias_output(0, ctx.tensor("self"));
  set_attr(ctx.emit("Cast", {ctx.tensor("self")}, {ctx.output()}), "to", static_cast<int64_t>(out));
}

// copy(self, src): src broadcast to self's shape, in self's dtype.
void copy(TranslateContext& ctx) {
  const DType out = ctx.output_meta().dtype;
  ctx.emit("Expand", {ctx.value("src", out), shape_of(ctx, ctx.tensor("self"))}, {ctx.output()});
}

// fill.Scalar / fill.Tensor (self, value)
void fill(TranslateContext& ctx) {
  const DType out = ctx.output_meta().dtype;
  ctx.emit("Expand", {ctx.value("value", out), shape_of(ctx, ctx.tensor("self"))}, {ctx.output()});
}

}  // namespace

PARITY_TRANSLATION("aten::add.Tensor", add, 18);
PARITY_TRANSLATION("aten::add.Scalar", add, 18);
PARITY_TRANSLATION("aten::sub.Tensor", sub, 18);
PARITY_TRANSLATION("aten::sub.Scalar", sub, 18);
PARITY_TRANSLATION("aten::rsub.Tensor", rsub, 18);
PARITY_TRANSLATION("aten::rsub.Scalar", rsub, 18);
PARITY_TRANSLATION("aten::mul.Tensor", mul, 18);
PARITY_TRANSLATION("aten::mul.Scalar", mul, 18);
PARITY_TRANSLATION("aten::div.Tensor", div, 18);
PARITY_TRANSLATION("aten::div.Scalar", div, 18);
PARITY_TRANSLATION("aten::div.Tensor_mode", div, 18);
PARITY_TRANSLATION("aten::div.Scalar_mode", div, 18);
PARITY_TRANSLATION("aten::fmod.Tensor", fmod_, 18);
PARITY_TRANSLATION("aten::fmod.Scalar", fmod_, 18);
PARITY_TRANSLATION("aten::remainder.Tensor", remainder, 18);
PARITY_TRANSLATION("aten::remainder.Scalar", remainder, 18);
PARITY_TRANSLATION("aten::pow.Tensor_Tensor", pow_, 18);
PARITY_TRANSLATION("aten::pow.Tensor_Scalar", pow_, 18);
PARITY_TRANSLATION("aten::pow.Scalar", pow_, 18);
PARITY_TRANSLATION("aten::maximum.default", maximum, 18);
PARITY_TRANSLATION("aten::minimum.default", minimum, 18);
PARITY_TRANSLATION("aten::atan2.default", atan2_, 18);
PARITY_TRANSLATION("aten::atan2.out", atan2_, 18);  // tagged core; functional graphs never hold it
PARITY_TRANSLATION("aten::relu.default", relu, 18);
PARITY_TRANSLATION("aten::sigmoid.default", sigmoid, 18);
PARITY_TRANSLATION("aten::tanh.default", tanh_, 18);
PARITY_TRANSLATION("aten::exp.default", exp_, 18);
PARITY_TRANSLATION("aten::log.default", log_, 18);
PARITY_TRANSLATION("aten::neg.default", neg, 18);
PARITY_TRANSLATION("aten::abs.default", abs_, 18);
PARITY_TRANSLATION("aten::sqrt.default", sqrt_, 18);
PARITY_TRANSLATION("aten::acos.default", acos_, 18);
PARITY_TRANSLATION("aten::acosh.default", acosh_, 18);
PARITY_TRANSLATION("aten::asin.default", asin_, 18);
PARITY_TRANSLATION("aten::asinh.default", asinh_, 18);
PARITY_TRANSLATION("aten::atan.default", atan_, 18);
PARITY_TRANSLATION("aten::atanh.default", atanh_, 18);
PARITY_TRANSLATION("aten::ceil.default", ceil_, 18);
PARITY_TRANSLATION("aten::floor.default", floor_, 18);
PARITY_TRANSLATION("aten::cos.default", cos_, 18);
PARITY_TRANSLATION("aten::cosh.default", cosh_, 18);
PARITY_TRANSLATION("aten::sin.default", sin_, 18);
PARITY_TRANSLATION("aten::sinh.default", sinh_, 18);
PARITY_TRANSLATION("aten::tan.default", tan_, 18);
PARITY_TRANSLATION("aten::erf.default", erf_, 18);
PARITY_TRANSLATION("aten::reciprocal.default", reciprocal, 18);
PARITY_TRANSLATION("aten::round.default", round_, 18);
PARITY_TRANSLATION("aten::sign.default", sign_, 18);
PARITY_TRANSLATION("aten::trunc.default", trunc_, 18);
PARITY_TRANSLATION("aten::rsqrt.default", rsqrt, 18);
PARITY_TRANSLATION("aten::expm1.default", expm1, 18);
PARITY_TRANSLATION("aten::log1p.default", log1p, 18);
PARITY_TRANSLATION("aten::log2.default", log2_, 18);
PARITY_TRANSLATION("aten::log10.default", log10_, 18);
PARITY_TRANSLATION("aten::clamp.default", clamp, 18);
PARITY_TRANSLATION("aten::clamp.Tensor", clamp, 18);
PARITY_TRANSLATION("aten::clamp_min.default", clamp_min, 18);
PARITY_TRANSLATION("aten::clamp_max.default", clamp_max, 18);
PARITY_TRANSLATION("aten::where.self", where, 18);
PARITY_TRANSLATION("aten::masked_fill.Scalar", masked_fill, 18);
PARITY_TRANSLATION("aten::masked_fill.Tensor", masked_fill, 18);
PARITY_TRANSLATION("aten::lerp.Scalar", lerp, 18);
PARITY_TRANSLATION("aten::lerp.Tensor", lerp, 18);
PARITY_TRANSLATION("aten::_to_copy.default", to_copy, 18);
PARITY_TRANSLATION("aten::to.dtype", to_copy, 18);
PARITY_TRANSLATION("aten::to.dtype_layout", to_copy, 18);
PARITY_TRANSLATION("aten::type_as.default", to_copy, 18);
PARITY_TRANSLATION("aten::copy.default", copy, 18);
PARITY_TRANSLATION("aten::fill.Scalar", fill, 18);
PARITY_TRANSLATION("aten::fill.Tensor", fill, 18);
PARITY_TRANSLATION("aten::add_.Tensor", in_place<add>, 18);
PARITY_TRANSLATION("aten::sub_.Tensor", in_place<sub>, 18);
PARITY_TRANSLATION("aten::mul_.Tensor", in_place<mul>, 18);
PARITY_TRANSLATION("aten::div_.Tensor", in_place<div>, 18);
PARITY_TRANSLATION("aten::fill_.Scalar", in_place<fill>, 18);
PARITY_TRANSLATION("aten::fill_.Tensor", in_place<fill>, 18);
PARITY_TRANSLATION("aten::copy_.default", in_place<copy>, 18);
PARITY_TRANSLATION("aten::masked_fill_.Scalar", in_place<masked_fill>, 18);

}  // namespace parity::exporter
