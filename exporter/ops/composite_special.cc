// Special functions ONNX has no operator for, behind torch.special's composites (special_i0,
// special_erfinv, special_gammaln, special_digamma / special_psi, special_multigammaln, special_gammainc(c))
// and their ATen targets (i0, erfinv, lgamma, digamma, igamma(c)). Each is evaluated with a convergent
// series, a continued fraction or Newton's method in
// the tensor's own dtype; torch calls libm / Cephes, so the values agree to a few float ulps.
#include <cmath>
#include <limits>

#include "../src/translate.h"

namespace parity::exporter {
namespace {

struct Ops {
  TranslateContext& ctx;
  DType t;
  std::string c(double v) { return ctx.constant(v, t); }
  std::string op(const char* type, const std::string& a) { return ctx.emit1(type, {a}); }
  std::string op(const char* type, const std::string& a, const std::string& b) { return ctx.emit1(type, {a, b}); }
  std::string where(const std::string& cond, const std::string& a, const std::string& b) {
    return ctx.emit1("Where", {cond, a, b});
  }
};

// I0(|x|): the power series sum (x^2/4)^k / (k!)^2 (positive terms, no cancellation) up to 15, the
// asymptotic series e^x / sqrt(2 pi x) (1 + sum prod (2j-1)^2 / (j 8x)) beyond.
std::string bessel_i0(Ops& o, const std::string& x0) {
  const std::string x = o.op("Abs", x0);
  const std::string q = o.op("Mul", o.op("Mul", x, x), o.c(0.25));
  std::string term = o.c(1), sum = o.c(1);
  for (int k = 1; k <= 30; ++k) {
    term = o.op("Mul", o.op("Mul", term, q), o.c(1.0 / (static_cast<double>(k) * k)));
    sum = o.op("Add", sum, term);
  }
  const std::string big_x = o.op("Max", x, o.c(15));  // keeps the unused branch finite
  const std::string inv8x = o.op("Reciprocal", o.op("Mul", big_x, o.c(8)));
  std::string a = o.c(1), series = o.c(1);
  for (int k = 1; k <= 10; ++k) {
    a = o.op("Mul", a, o.op("Mul", inv8x, o.c((2.0 * k - 1) * (2.0 * k - 1) / k)));
    series = o.op("Add", series, a);
  }
  const std::string asym =
      o.op("Mul", o.op("Div", o.op("Exp", big_x), o.op("Sqrt", o.op("Mul", big_x, o.c(2 * M_PI)))), series);
  return o.where(o.op("LessOrEqual", x, o.c(15)), sum, asym);
}

// erfinv(x): Winitzki's closed form (relative error < 2e-3) refined by three Newton steps on erf;
// +-1 give +-inf, |x| > 1 NaN (the logarithm of a negative number).
std::string inverse_erf(Ops& o, const std::string& x) {
  const double a = 0.147;
  const std::string ln = o.op("Log", o.op("Sub", o.c(1), o.op("Mul", x, x)));
  const std::string b = o.op("Add", o.c(2 / (M_PI * a)), o.op("Mul", ln, o.c(0.5)));
  const std::string inner = o.op("Sub", o.op("Mul", b, b), o.op("Mul", ln, o.c(1 / a)));
  std::string y = o.op("Mul", o.op("Sign", x), o.op("Sqrt", o.op("Sub", o.op("Sqrt", inner), b)));
  for (int i = 0; i < 3; ++i) {
    const std::string slope = o.op("Mul", o.c(2 / std::sqrt(M_PI)), o.op("Exp", o.op("Neg", o.op("Mul", y, y))));
    y = o.op("Sub", y, o.op("Div", o.op("Sub", o.op("Erf", y), x), slope));
  }
  const std::string one = o.op("Equal", o.op("Abs", x), o.c(1));
  return o.where(one, o.op("Mul", o.op("Sign", x), o.c(std::numeric_limits<double>::infinity())), y);
}

// lgamma(z) for z >= 1 (no poles): lgamma(z + 8) by Stirling's series minus log z(z+1)...(z+7).
std::string lgamma_positive(Ops& o, const std::string& z) {
  std::string logs = o.op("Log", z);
  for (int k = 1; k < 8; ++k) logs = o.op("Add", logs, o.op("Log", o.op("Add", z, o.c(k))));
  const std::string w = o.op("Add", z, o.c(8)), lw = o.op("Log", w);
  const std::string r = o.op("Reciprocal", w), r2 = o.op("Mul", r, r);
  // 1/(12w) - 1/(360w^3) + 1/(1260w^5) - 1/(1680w^7), Horner in 1/w^2.
  std::string tail = o.c(-1.0 / 1680);
  for (double coef : {1.0 / 1260, -1.0 / 360, 1.0 / 12}) tail = o.op("Add", o.op("Mul", tail, r2), o.c(coef));
  tail = o.op("Mul", tail, r);
  const std::string stirling = o.op("Add", o.op("Sub", o.op("Mul", o.op("Sub", w, o.c(0.5)), lw), w),
                                    o.op("Add", o.c(0.5 * std::log(2 * M_PI)), tail));
  return o.op("Sub", stirling, logs);
}

// lgamma(x): x >= 0.5 directly (shifted by 1 from z = x + 1: lgamma(x) = lgamma(x + 1) - log x), below by
// the reflection log(pi / |sin(pi x)|) - lgamma(1 - x); the poles 0, -1, -2, ... give +inf.
std::string log_gamma(Ops& o, const std::string& x) {
  const std::string reflect = o.op("Less", x, o.c(0.5));
  const std::string z = o.where(reflect, o.op("Sub", o.c(1), x), x);  // >= 0.5
  const std::string lg = o.op("Sub", lgamma_positive(o, o.op("Add", z, o.c(1))), o.op("Log", z));
  const std::string sin = o.op("Abs", o.op("Sin", o.op("Mul", x, o.c(M_PI))));
  const std::string reflected = o.op("Sub", o.op("Log", o.op("Div", o.c(M_PI), sin)), lg);
  const std::string pole = o.op("And", o.op("LessOrEqual", x, o.c(0)), o.op("Equal", x, o.op("Floor", x)));
  return o.where(pole, o.c(std::numeric_limits<double>::infinity()), o.where(reflect, reflected, lg));
}

// digamma(x): psi(z + 10) by its asymptotic series minus sum 1/(z + k), reflected below 0
// (psi(1 - x) - pi / tan(pi x)); psi(0) = -inf, negative integers NaN (torch's values).
std::string psi(Ops& o, const std::string& x) {
  const std::string neg = o.op("Less", x, o.c(0));
  const std::string z = o.where(neg, o.op("Sub", o.c(1), x), x);
  std::string recip = o.op("Reciprocal", z);
  for (int k = 1; k < 10; ++k) recip = o.op("Add", recip, o.op("Reciprocal", o.op("Add", z, o.c(k))));
  const std::string w = o.op("Add", z, o.c(10)), r = o.op("Reciprocal", w), r2 = o.op("Mul", r, r);
  // ln w - 1/(2w) - 1/(12w^2) + 1/(120w^4) - 1/(252w^6) + 1/(240w^8), Horner in 1/w^2.
  std::string tail = o.c(1.0 / 240);
  for (double coef : {-1.0 / 252, 1.0 / 120, -1.0 / 12}) tail = o.op("Add", o.op("Mul", tail, r2), o.c(coef));
  tail = o.op("Mul", tail, r2);
  const std::string psi = o.op("Sub", o.op("Add", o.op("Sub", o.op("Log", w), o.op("Mul", r, o.c(0.5))), tail), recip);
  const std::string px = o.op("Mul", x, o.c(M_PI));
  const std::string reflected = o.op("Sub", psi, o.op("Div", o.op("Mul", o.c(M_PI), o.op("Cos", px)), o.op("Sin", px)));
  const std::string nan = o.c(std::numeric_limits<double>::quiet_NaN());
  std::string v = o.where(neg, o.where(o.op("Equal", x, o.op("Floor", x)), nan, reflected), psi);
  return o.where(o.op("Equal", x, o.c(0)), o.c(-std::numeric_limits<double>::infinity()), v);
}

template <std::string (*F)(Ops&, const std::string&)>
void unary_special(TranslateContext& ctx) {
  Ops o{ctx, ctx.output_meta().dtype};
  ctx.alias_output(0, F(o, ctx.value("self", o.t)));
}

// special_multigammaln(self, p) = sum_{j < p} lgamma(x - j / 2) + p (p - 1) / 4 log(pi).
void multigammaln(TranslateContext& ctx) {
  Ops o{ctx, ctx.output_meta().dtype};
  const std::string x = ctx.value("self", o.t);
  const int64_t p = ctx.int_arg("p", 1);
  if (p < 1) ctx.fail("special_multigammaln needs p >= 1");
  std::string sum = o.c(static_cast<double>(p) * static_cast<double>(p - 1) / 4 * std::log(M_PI));
  for (int64_t j = 0; j < p; ++j)
    sum = o.op("Add", sum, log_gamma(o, o.op("Sub", x, o.c(0.5 * static_cast<double>(j)))));
  ctx.alias_output(0, sum);
}

// The regularized incomplete gamma functions P(a, x) (lower) and Q = 1 - P, split as Cephes (torch)
// splits them: the series x^a e^-x / Gamma(a + 1) sum x^k / ((a + 1)...(a + k)) where x <= 1 or x <= a,
// else Legendre's continued fraction for Q (modified Lentz), each with a fixed number of terms. a < 0 or
// x < 0 give NaN, x = inf gives P = 1.
std::string incomplete_gamma(Ops& o, const std::string& a, const std::string& x, bool upper) {
  std::string term = o.c(1), sum = o.c(1);
  for (int k = 1; k <= 80; ++k) {
    term = o.op("Mul", term, o.op("Div", x, o.op("Add", a, o.c(k))));
    sum = o.op("Add", sum, term);
  }
  const std::string xa = o.op("Sub", o.op("Mul", a, o.op("Log", x)), x);
  const std::string p_series = o.op("Mul", o.op("Exp", o.op("Sub", xa, log_gamma(o, o.op("Add", a, o.c(1))))), sum);
  const std::string tiny = o.c(1e-30);
  auto guard = [&](const std::string& v) { return o.where(o.op("Less", o.op("Abs", v), tiny), tiny, v); };
  std::string b = o.op("Add", o.op("Sub", x, a), o.c(1));
  std::string c = o.c(1e30), d = o.op("Reciprocal", guard(b)), h = d;
  for (int i = 1; i <= 80; ++i) {
    const std::string an = o.op("Mul", o.c(-i), o.op("Sub", o.c(i), a));
    b = o.op("Add", b, o.c(2));
    d = o.op("Reciprocal", guard(o.op("Add", o.op("Mul", an, d), b)));
    c = guard(o.op("Add", b, o.op("Div", an, c)));
    h = o.op("Mul", h, o.op("Mul", d, c));
  }
  const std::string q_fraction = o.op("Mul", o.op("Exp", o.op("Sub", xa, log_gamma(o, a))), h);
  const std::string series = o.op("Or", o.op("LessOrEqual", x, o.c(1)), o.op("LessOrEqual", x, a));
  std::string v = upper ? o.where(series, o.op("Sub", o.c(1), p_series), q_fraction)
                        : o.where(series, p_series, o.op("Sub", o.c(1), q_fraction));
  v = o.where(o.op("IsInf", x), o.c(upper ? 0 : 1), v);
  const std::string bad = o.op("Or", o.op("Less", a, o.c(0)), o.op("Less", x, o.c(0)));
  return o.where(bad, o.c(std::numeric_limits<double>::quiet_NaN()), v);
}

template <bool kUpper>
void gammainc(TranslateContext& ctx) {
  Ops o{ctx, ctx.output_meta().dtype};
  ctx.alias_output(0, incomplete_gamma(o, ctx.value("self", o.t), ctx.value("other", o.t), kUpper));
}

}  // namespace

PARITY_TRANSLATION("aten::special_i0.default", unary_special<bessel_i0>, 18);
PARITY_TRANSLATION("aten::i0.default", unary_special<bessel_i0>, 18);
PARITY_TRANSLATION("aten::special_erfinv.default", unary_special<inverse_erf>, 18);
PARITY_TRANSLATION("aten::erfinv.default", unary_special<inverse_erf>, 18);
PARITY_TRANSLATION("aten::special_gammaln.default", unary_special<log_gamma>, 18);
PARITY_TRANSLATION("aten::lgamma.default", unary_special<log_gamma>, 18);
PARITY_TRANSLATION("aten::special_digamma.default", unary_special<psi>, 18);
PARITY_TRANSLATION("aten::special_psi.default", unary_special<psi>, 18);
PARITY_TRANSLATION("aten::digamma.default", unary_special<psi>, 18);
PARITY_TRANSLATION("aten::special_multigammaln.default", multigammaln, 18);
PARITY_TRANSLATION("aten::special_gammainc.default", gammainc<false>, 18);
PARITY_TRANSLATION("aten::special_gammaincc.default", gammainc<true>, 18);
PARITY_TRANSLATION("aten::igamma.default", gammainc<false>, 18);
PARITY_TRANSLATION("aten::igammac.default", gammainc<true>, 18);

}  // namespace parity::exporter
