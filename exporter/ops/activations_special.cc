// Elementwise ATen ops -> ONNX: activations, special functions, predicates and Scalar-first overloads
// of the torch_lib registry. Each follows torch's CPU kernel formula where it differs from the textbook one.
#include <cmath>

#include "../src/translate.h"

namespace parity::exporter {
namespace {

DType out_t(TranslateContext& ctx) { return ctx.output_meta().dtype; }
std::string self_as_out(TranslateContext& ctx) { return ctx.value("self", out_t(ctx)); }

// celu(x, alpha) = max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
void celu(TranslateContext& ctx) {
  const DType t = out_t(ctx);
  const std::string x = self_as_out(ctx);
  const double alpha = ctx.float_arg("alpha", 1.0);
  const std::string e =
      ctx.emit1("Sub", {ctx.emit1("Exp", {ctx.emit1("Div", {x, ctx.constant(alpha, t)})}), ctx.constant(1, t)});
  const std::string neg = ctx.emit1("Min", {ctx.constant(0, t), ctx.emit1("Mul", {e, ctx.constant(alpha, t)})});
  ctx.emit("Add", {ctx.emit1("Max", {ctx.constant(0, t), x}), neg}, {ctx.output()});
}

// selu: ONNX Selu's default alpha and gamma are torch's constants.
void selu(TranslateContext& ctx) { ctx.emit("Selu", {self_as_out(ctx)}, {ctx.output()}); }

// mish(x) = x * tanh(softplus(x))
void mish(TranslateContext& ctx) {
  const std::string x = self_as_out(ctx);
  ctx.emit("Mul", {x, ctx.emit1("Tanh", {ctx.emit1("Softplus", {x})})}, {ctx.output()});
}

// log_sigmoid(x) = min(x, 0) - log1p(exp(-|x|)): no overflow for large |x|.
void log_sigmoid(TranslateContext& ctx) {
  const DType t = out_t(ctx);
  const std::string x = self_as_out(ctx);
  const std::string e = ctx.emit1("Exp", {ctx.emit1("Neg", {ctx.emit1("Abs", {x})})});
  const std::string l = ctx.emit1("Log", {ctx.emit1("Add", {e, ctx.constant(1, t)})});
  ctx.emit("Sub", {ctx.emit1("Min", {x, ctx.constant(0, t)}), l}, {ctx.output()});
}

// logit(x, eps?) = log(z / (1 - z)), z = clamp(x, eps, 1 - eps) when eps is given.
void logit(TranslateContext& ctx) {
  const DType t = out_t(ctx);
  std::string x = self_as_out(ctx);
  if (ctx.has("eps")) {
    const double eps = ctx.float_arg("eps", 0.0);
    x = ctx.emit1("Clip", {x, ctx.constant(eps, t), ctx.constant(1.0 - eps, t)});
  }
  ctx.emit("Log", {ctx.emit1("Div", {x, ctx.emit1("Sub", {ctx.constant(1, t), x})})}, {ctx.output()});
}

// t * exp(P(t)) for z >= 0, t = 1 / (1 + z / 2): the Chebyshev fit of erfc(z) * exp(z^2) (fractional error
// below 1.2e-7 everywhere, Press et al., Numerical Recipes 6.2). 1 - erf(z) would lose every digit for z > 4.
std::string scaled_erfc_abs(TranslateContext& ctx, const std::string& z, DType t) {
  static const double c[] = {-1.26551223, 1.00002368,  0.37409196, 0.09678418,  -0.18628806,
                             0.27886807,  -1.13520398, 1.48851587, -0.82215223, 0.17087277};
  const std::string tt =
      ctx.emit1("Reciprocal", {ctx.emit1("Add", {ctx.constant(1, t), ctx.emit1("Mul", {z, ctx.constant(0.5, t)})})});
  std::string p = ctx.constant(c[9], t);
  for (int i = 8; i >= 0; --i) p = ctx.emit1("Add", {ctx.constant(c[i], t), ctx.emit1("Mul", {tt, p})});
  return ctx.emit1("Mul", {tt, ctx.emit1("Exp", {p})});
}

// erfc(x) = exp(-x^2) * scaled(|x|) for x >= 0, 2 - erfc(-x) for x < 0.
void erfc(TranslateContext& ctx) {
  const DType t = out_t(ctx);
  const std::string x = self_as_out(ctx);
  const std::string z = ctx.emit1("Abs", {x});
  const std::string pos =
      ctx.emit1("Mul", {ctx.emit1("Exp", {ctx.emit1("Neg", {ctx.emit1("Mul", {z, z})})}), scaled_erfc_abs(ctx, z, t)});
  const std::string neg = ctx.emit1("Sub", {ctx.constant(2, t), pos});
  ctx.emit("Where", {ctx.emit1("Less", {x, ctx.constant(0, t)}), neg, pos}, {ctx.output()});
}

// erfcx(x) = exp(x^2) erfc(x): the fit itself for x >= 0, 2 exp(x^2) - erfcx(-x) for x < 0.
void erfcx(TranslateContext& ctx) {
  const DType t = out_t(ctx);
  const std::string x = self_as_out(ctx);
  const std::string pos = scaled_erfc_abs(ctx, ctx.emit1("Abs", {x}), t);
  const std::string neg =
      ctx.emit1("Sub", {ctx.emit1("Mul", {ctx.constant(2, t), ctx.emit1("Exp", {ctx.emit1("Mul", {x, x})})}), pos});
  ctx.emit("Where", {ctx.emit1("Less", {x, ctx.constant(0, t)}), neg, pos}, {ctx.output()});
}

void exp2(TranslateContext& ctx) { ctx.emit("Pow", {ctx.constant(2, out_t(ctx)), self_as_out(ctx)}, {ctx.output()}); }

// frac(x) = x - trunc(x)
void frac(TranslateContext& ctx) {
  const std::string x = self_as_out(ctx);
  const std::string tr = ctx.emit1("Mul", {ctx.emit1("Sign", {x}), ctx.emit1("Floor", {ctx.emit1("Abs", {x})})});
  ctx.emit("Sub", {x, tr}, {ctx.output()});
}

// heaviside(x, values) = x == 0 ? values : (x > 0)
void heaviside(TranslateContext& ctx) {
  const DType t = out_t(ctx);
  const std::string x = self_as_out(ctx);
  const std::string step = ctx.cast_if_needed(ctx.emit1("Greater", {x, ctx.constant(0, t)}), DType::kBool, t);
  ctx.emit("Where", {ctx.emit1("Equal", {x, ctx.constant(0, t)}), ctx.value("values", t), step}, {ctx.output()});
}

// logaddexp(a, b) = max + log1p(exp(-|a - b|)); equal infinities give themselves (the formula gives NaN).
void logaddexp_base(TranslateContext& ctx, bool base2) {
  const DType t = out_t(ctx);
  const std::string a = self_as_out(ctx), b = ctx.value("other", t);
  const std::string m = ctx.emit1("Max", {a, b});
  const std::string d = ctx.emit1("Neg", {ctx.emit1("Abs", {ctx.emit1("Sub", {a, b})})});
  std::string r;
  if (base2) {
    const std::string p = ctx.emit1("Pow", {ctx.constant(2, t), d});
    r = ctx.emit1("Div",
                  {ctx.emit1("Log", {ctx.emit1("Add", {p, ctx.constant(1, t)})}), ctx.constant(std::log(2.0), t)});
  } else {
    r = ctx.emit1("Log", {ctx.emit1("Add", {ctx.emit1("Exp", {d}), ctx.constant(1, t)})});
  }
  const std::string same_inf = ctx.emit1("And", {ctx.emit1("IsInf", {a}), ctx.emit1("Equal", {a, b})});
  ctx.emit("Where", {same_inf, a, ctx.emit1("Add", {m, r})}, {ctx.output()});
}
void logaddexp(TranslateContext& ctx) { logaddexp_base(ctx, false); }
void logaddexp2(TranslateContext& ctx) { logaddexp_base(ctx, true); }

// xlogy(x, y) = NaN if y is NaN, 0 if x == 0, x * log(y) otherwise.
void xlogy(TranslateContext& ctx) {
  const DType t = out_t(ctx);
  const std::string x = self_as_out(ctx), y = ctx.value("other", t);
  const std::string zero = ctx.constant(0, t);
  const std::string r =
      ctx.emit1("Where", {ctx.emit1("Equal", {x, zero}), zero, ctx.emit1("Mul", {x, ctx.emit1("Log", {y})})});
  ctx.emit("Where", {ctx.emit1("IsNaN", {y}), y, r}, {ctx.output()});
}

// Broadcast `value` (bool) to the shape of self.
void all_like_self(TranslateContext& ctx, bool value) {
  ctx.emit("Expand", {ctx.constant(value ? 1 : 0, DType::kBool), shape_of(ctx, ctx.tensor("self"))}, {ctx.output()});
}

void isfinite_(TranslateContext& ctx) {
  if (!dtype_is_floating(ctx.input_meta("self").dtype)) return all_like_self(ctx, true);
  const std::string x = ctx.tensor("self");
  ctx.emit("Not", {ctx.emit1("Or", {ctx.emit1("IsNaN", {x}), ctx.emit1("IsInf", {x})})}, {ctx.output()});
}

void isinf_signed(TranslateContext& ctx, bool positive) {
  if (!dtype_is_floating(ctx.input_meta("self").dtype)) return all_like_self(ctx, false);
  auto* n = ctx.emit("IsInf", {ctx.tensor("self")}, {ctx.output()});
  set_attr(n, "detect_positive", int64_t{positive ? 1 : 0});
  set_attr(n, "detect_negative", int64_t{positive ? 0 : 1});
}
void isposinf(TranslateContext& ctx) { isinf_signed(ctx, true); }
void isneginf(TranslateContext& ctx) { isinf_signed(ctx, false); }

// signbit: x < 0, and -0.0 (1 / -0.0 = -inf) too.
void signbit(TranslateContext& ctx) {
  const DType t = ctx.input_meta("self").dtype;
  const std::string x = ctx.tensor("self");
  if (t == DType::kBool || t == DType::kUInt8) return all_like_self(ctx, false);
  const std::string zero = ctx.constant(0, t);
  std::string r = ctx.emit1("Less", {x, zero});
  if (dtype_is_floating(t)) {
    const std::string neg_zero =
        ctx.emit1("And", {ctx.emit1("Equal", {x, zero}), ctx.emit1("Less", {ctx.emit1("Reciprocal", {x}), zero})});
    r = ctx.emit1("Or", {r, neg_zero});
  }
  ctx.alias_output(0, r);
}

// round(x, decimals): torch scales by 10^d (or divides by 10^-d), rounds half to even, scales back.
void round_decimals(TranslateContext& ctx) {
  const DType t = out_t(ctx);
  const std::string x = self_as_out(ctx);
  const int64_t d = ctx.int_arg("decimals", 0);
  const std::string p = ctx.constant(std::pow(10.0, static_cast<double>(std::llabs(d))), t);
  if (d >= 0)
    ctx.emit("Div", {ctx.emit1("Round", {ctx.emit1("Mul", {x, p})}), p}, {ctx.output()});
  else
    ctx.emit("Mul", {ctx.emit1("Round", {ctx.emit1("Div", {x, p})}), p}, {ctx.output()});
}

// addcmul(self, t1, t2, value) = self + value * t1 * t2; addcdiv: self + value * t1 / t2.
void addc(TranslateContext& ctx, const std::string& op) {
  const DType t = out_t(ctx);
  std::string a = ctx.value("tensor1", t);
  if (const pt2::Argument* v = ctx.arg("value"); v && !v->is_none()) a = ctx.emit1("Mul", {ctx.value(*v, t), a});
  ctx.emit("Add", {self_as_out(ctx), ctx.emit1(op, {a, ctx.value("tensor2", t)})}, {ctx.output()});
}
void addcmul(TranslateContext& ctx) { addc(ctx, "Mul"); }
void addcdiv(TranslateContext& ctx) { addc(ctx, "Div"); }

void deg2rad(TranslateContext& ctx) {
  ctx.emit("Mul", {self_as_out(ctx), ctx.constant(M_PI / 180.0, out_t(ctx))}, {ctx.output()});
}
void rad2deg(TranslateContext& ctx) {
  ctx.emit("Mul", {self_as_out(ctx), ctx.constant(180.0 / M_PI, out_t(ctx))}, {ctx.output()});
}

// sinc(x) = sin(pi x) / (pi x), 1 at 0.
void sinc(TranslateContext& ctx) {
  const DType t = out_t(ctx);
  const std::string x = self_as_out(ctx);
  const std::string px = ctx.emit1("Mul", {x, ctx.constant(M_PI, t)});
  const std::string s = ctx.emit1("Div", {ctx.emit1("Sin", {px}), px});
  ctx.emit("Where", {ctx.emit1("Equal", {x, ctx.constant(0, t)}), ctx.constant(1, t), s}, {ctx.output()});
}

// floor_divide: integers exactly (truncating Div, minus one where the remainder's sign differs from the
// divisor's); floats as torch's div_floor: (a - fmod(a, b)) / b, corrected, floored, rounded to nearest.
void floor_divide(TranslateContext& ctx) {
  const DType t = out_t(ctx);
  const std::string a = self_as_out(ctx), b = ctx.value("other", t);
  const std::string zero = ctx.constant(0, t), one = ctx.constant(1, t);
  auto* mod_node = ctx.emit("Mod", {a, b}, {ctx.temp("fmod")});
  set_attr(mod_node, "fmod", int64_t{1});
  const std::string mod = mod_node->output(0);
  const std::string signs_differ =
      ctx.emit1("And", {ctx.emit1("Not", {ctx.emit1("Equal", {mod, zero})}),
                        ctx.emit1("Xor", {ctx.emit1("Less", {b, zero}), ctx.emit1("Less", {mod, zero})})});
  if (!dtype_is_floating(t)) {
    const std::string q = ctx.emit1("Div", {a, b});
    ctx.emit("Sub", {q, ctx.cast_if_needed(signs_differ, DType::kBool, t)}, {ctx.output()});
    return;
  }
  std::string div = ctx.emit1("Div", {ctx.emit1("Sub", {a, mod}), b});
  div = ctx.emit1("Where", {signs_differ, ctx.emit1("Sub", {div, one}), div});
  const std::string fl = ctx.emit1("Floor", {div});
  const std::string up = ctx.emit1("Greater", {ctx.emit1("Sub", {div, fl}), ctx.constant(0.5, t)});
  std::string r = ctx.emit1("Where", {up, ctx.emit1("Add", {fl, one}), fl});
  // div == 0 keeps the sign of the true quotient (copysign(0, a / b)); b == 0 gives a / b.
  const std::string q = ctx.emit1("Div", {a, b});
  r = ctx.emit1("Where", {ctx.emit1("Equal", {div, zero}), ctx.emit1("Mul", {q, zero}), r});
  ctx.emit("Where", {ctx.emit1("Equal", {b, zero}), q, r}, {ctx.output()});
}

// angle of a real tensor: pi for negatives, 0 otherwise, NaN stays NaN.
void angle(TranslateContext& ctx) {
  const DType t = out_t(ctx);
  const std::string x = self_as_out(ctx);
  const std::string r =
      ctx.emit1("Where", {ctx.emit1("Less", {x, ctx.constant(0, t)}), ctx.constant(M_PI, t), ctx.constant(0, t)});
  ctx.emit("Where", {ctx.emit1("IsNaN", {x}), x, r}, {ctx.output()});
}

// conj / resolve_conj / resolve_neg of a real tensor are the tensor itself (Parity has no complex dtype).
void real_identity(TranslateContext& ctx) { ctx.alias_output(0, ctx.tensor("self")); }

// Shifts. ONNX BitShift is unsigned-only: a left shift is the same bit pattern through uint64; torch's
// right shift of a signed integer is arithmetic: ~(~x >> s) for negative x.
std::string as_u64(TranslateContext& ctx, const std::string& v, DType from) {
  return ctx.cast_if_needed(v, from, DType::kUInt64);
}
void shift(TranslateContext& ctx, bool left) {
  const DType t = out_t(ctx);
  if (dtype_is_floating(t) || t == DType::kBool) ctx.fail("bit shifts need an integer dtype, got " + dtype_name(t));
  const std::string x = self_as_out(ctx), s = ctx.value("other", t);
  const std::string su = as_u64(ctx, s, t);
  auto shifted = [&](const std::string& v) {
    auto* n = ctx.emit("BitShift", {as_u64(ctx, v, t), su}, {ctx.temp("shift")});
    set_attr(n, "direction", std::string(left ? "LEFT" : "RIGHT"));
    return ctx.cast_if_needed(n->output(0), DType::kUInt64, t);
  };
  const bool is_unsigned = t == DType::kUInt8 || t == DType::kUInt16 || t == DType::kUInt32 || t == DType::kUInt64;
  if (left || is_unsigned) return ctx.alias_output(0, shifted(x));
  const std::string neg = ctx.emit1("BitwiseNot", {shifted(ctx.emit1("BitwiseNot", {x}))});
  ctx.emit("Where", {ctx.emit1("Less", {x, ctx.constant(0, t)}), neg, shifted(x)}, {ctx.output()});
}
void left_shift(TranslateContext& ctx) { shift(ctx, true); }
void right_shift(TranslateContext& ctx) { shift(ctx, false); }

// isclose as torch computes it: equal, or both NaN (equal_nan), or a finite |a - b| <= atol + |rtol * b|.
void isclose(TranslateContext& ctx) {
  DType t = promote(ctx, "self", "other");
  if (!dtype_is_floating(t)) t = DType::kFloat64;
  const std::string a = ctx.value("self", t), b = ctx.value("other", t);
  std::string close = ctx.emit1("Equal", {a, b});
  if (ctx.bool_arg("equal_nan", false))
    close = ctx.emit1("Or", {close, ctx.emit1("And", {ctx.emit1("IsNaN", {a}), ctx.emit1("IsNaN", {b})})});
  const std::string allowed =
      ctx.emit1("Add", {ctx.constant(ctx.float_arg("atol", 1e-8), t),
                        ctx.emit1("Abs", {ctx.emit1("Mul", {ctx.constant(ctx.float_arg("rtol", 1e-5), t), b})})});
  const std::string err = ctx.emit1("Abs", {ctx.emit1("Sub", {a, b})});
  const std::string finite =
      ctx.emit1("Not", {ctx.emit1("Or", {ctx.emit1("IsNaN", {err}), ctx.emit1("IsInf", {err})})});
  ctx.emit("Or", {close, ctx.emit1("And", {finite, ctx.emit1("LessOrEqual", {err, allowed})})}, {ctx.output()});
}

// fake_quantize: (clamp(round(x / scale) + zero_point, qmin, qmax) - zero_point) * scale, rounding half to
// even like torch's nearbyint; per-channel scale/zero_point broadcast along `axis`.
void fake_quantize(TranslateContext& ctx, const std::string& scale, const std::string& zp, DType t) {
  const std::string q = ctx.emit1(
      "Add", {ctx.emit1("Round", {ctx.emit1("Mul", {ctx.tensor("self"), ctx.emit1("Reciprocal", {scale})})}), zp});
  const std::string c = ctx.emit1("Clip", {q, ctx.constant(static_cast<double>(ctx.int_arg("quant_min", 0)), t),
                                           ctx.constant(static_cast<double>(ctx.int_arg("quant_max", 255)), t)});
  ctx.emit("Mul", {ctx.emit1("Sub", {c, zp}), scale}, {ctx.output()});
}
void fake_quantize_per_tensor(TranslateContext& ctx) {
  const DType t = out_t(ctx);
  fake_quantize(ctx, ctx.value("scale", t), ctx.value("zero_point", t), t);
}
void fake_quantize_per_channel(TranslateContext& ctx) {
  const DType t = out_t(ctx);
  const int64_t rank = ctx.rank("self"), axis = ctx.normalized_dim(ctx.int_arg("axis", 0), rank);
  std::vector<int64_t> shape(static_cast<size_t>(rank), 1);
  shape[static_cast<size_t>(axis)] = -1;
  const std::string s = ctx.graph.constant_i64(shape);
  fake_quantize(ctx, ctx.emit1("Reshape", {ctx.value("scale", t), s}),
                ctx.emit1("Reshape", {ctx.value("zero_point", t), s}), t);
}

// hardtanh_backward: the gradient passes where min_val < x < max_val.
void hardtanh_backward(TranslateContext& ctx) {
  const DType t = out_t(ctx);
  const std::string x = ctx.value("self", t);
  const std::string outside = ctx.emit1("Or", {ctx.emit1("LessOrEqual", {x, ctx.value("min_val", t)}),
                                               ctx.emit1("GreaterOrEqual", {x, ctx.value("max_val", t)})});
  ctx.emit("Where", {outside, ctx.constant(0, t), ctx.value("grad_output", t)}, {ctx.output()});
}

// _prelu_kernel(self, weight): weight already broadcasts against self.
void prelu_kernel(TranslateContext& ctx) {
  const DType t = out_t(ctx);
  const std::string x = self_as_out(ctx);
  ctx.emit("Where", {ctx.emit1("Greater", {x, ctx.constant(0, t)}), x, ctx.emit1("Mul", {x, ctx.value("weight", t)})},
           {ctx.output()});
}

}  // namespace

PARITY_TRANSLATION("aten::celu.default", celu, 18);
PARITY_TRANSLATION("aten::selu.default", selu, 18);
PARITY_TRANSLATION("aten::mish.default", mish, 18);
PARITY_TRANSLATION("aten::log_sigmoid.default", log_sigmoid, 18);
PARITY_TRANSLATION("aten::logit.default", logit, 18);
PARITY_TRANSLATION("aten::erfc.default", erfc, 18);
PARITY_TRANSLATION("aten::special_erfcx.default", erfcx, 18);
PARITY_TRANSLATION("aten::exp2.default", exp2, 18);
PARITY_TRANSLATION("aten::frac.default", frac, 18);
PARITY_TRANSLATION("aten::heaviside.default", heaviside, 18);
PARITY_TRANSLATION("aten::logaddexp.default", logaddexp, 18);
PARITY_TRANSLATION("aten::logaddexp2.default", logaddexp2, 18);
PARITY_TRANSLATION("aten::xlogy.Tensor", xlogy, 18);
PARITY_TRANSLATION("aten::xlogy.Scalar_Self", xlogy, 18);
PARITY_TRANSLATION("aten::xlogy.Scalar_Other", xlogy, 18);
PARITY_TRANSLATION("aten::isfinite.default", isfinite_, 18);
PARITY_TRANSLATION("aten::isposinf.default", isposinf, 18);
PARITY_TRANSLATION("aten::isneginf.default", isneginf, 18);
PARITY_TRANSLATION("aten::signbit.default", signbit, 18);
PARITY_TRANSLATION("aten::round.decimals", round_decimals, 18);
PARITY_TRANSLATION("aten::addcmul.default", addcmul, 18);
PARITY_TRANSLATION("aten::addcdiv.default", addcdiv, 18);
PARITY_TRANSLATION("aten::deg2rad.default", deg2rad, 18);
PARITY_TRANSLATION("aten::rad2deg.default", rad2deg, 18);
PARITY_TRANSLATION("aten::sinc.default", sinc, 18);
PARITY_TRANSLATION("aten::floor_divide.default", floor_divide, 18);
PARITY_TRANSLATION("aten::floor_divide.Scalar", floor_divide, 18);
PARITY_TRANSLATION("aten::angle.default", angle, 18);
PARITY_TRANSLATION("aten::conj.default", real_identity, 18);
PARITY_TRANSLATION("aten::resolve_conj.default", real_identity, 18);
PARITY_TRANSLATION("aten::resolve_neg.default", real_identity, 18);
PARITY_TRANSLATION("aten::bitwise_left_shift.Tensor", left_shift, 18);
PARITY_TRANSLATION("aten::bitwise_left_shift.Tensor_Scalar", left_shift, 18);
PARITY_TRANSLATION("aten::bitwise_left_shift.Scalar_Tensor", left_shift, 18);
PARITY_TRANSLATION("aten::bitwise_right_shift.Tensor", right_shift, 18);
PARITY_TRANSLATION("aten::bitwise_right_shift.Tensor_Scalar", right_shift, 18);
PARITY_TRANSLATION("aten::bitwise_right_shift.Scalar_Tensor", right_shift, 18);
PARITY_TRANSLATION("aten::isclose.default", isclose, 18);
PARITY_TRANSLATION("aten::fake_quantize_per_tensor_affine.default", fake_quantize_per_tensor, 18);
PARITY_TRANSLATION("aten::fake_quantize_per_tensor_affine.tensor_qparams", fake_quantize_per_tensor, 18);
PARITY_TRANSLATION("aten::fake_quantize_per_channel_affine.default", fake_quantize_per_channel, 18);
PARITY_TRANSLATION("aten::hardtanh_backward.default", hardtanh_backward, 18);
PARITY_TRANSLATION("aten::_prelu_kernel.default", prelu_kernel, 18);

// Same computation and argument names as the target.
PARITY_ALIAS("aten::special_erfc.default", "aten::erfc.default");
PARITY_ALIAS("aten::special_sinc.default", "aten::sinc.default");
PARITY_ALIAS("aten::__lshift__.Scalar", "aten::bitwise_left_shift.Tensor_Scalar");
PARITY_ALIAS("aten::__rshift__.Scalar", "aten::bitwise_right_shift.Tensor_Scalar");
PARITY_ALIAS("aten::bitwise_and.Scalar_Tensor", "aten::bitwise_and.Tensor");
PARITY_ALIAS("aten::bitwise_or.Scalar_Tensor", "aten::bitwise_or.Tensor");
PARITY_ALIAS("aten::bitwise_xor.Scalar_Tensor", "aten::bitwise_xor.Tensor");
PARITY_ALIAS("aten::remainder.Scalar_Tensor", "aten::remainder.Tensor");
PARITY_ALIAS("aten::grid_sampler.default", "aten::grid_sampler_2d.default");

}  // namespace parity::exporter
