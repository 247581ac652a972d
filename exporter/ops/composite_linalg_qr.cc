// qr(self, some) and orgqr(self, tau): CompositeImplicitAutograd, kept in a (non-strict) program. The
// Householder QR LAPACK's geqrf computes, unrolled over the static matrix size: reflector k maps column k
// below the diagonal onto beta e_k with beta = -sign(alpha) |x| (alpha = x[k], LAPACK's dlarfg), so R's
// diagonal signs are LAPACK's (and torch's); Q is the product H_0 H_1 ... of the reflectors (orgqr).
#include <algorithm>
#include <utility>

#include "../src/translate.h"

namespace parity::exporter {
namespace {

std::string i64s(TranslateContext& ctx, std::vector<int64_t> v) { return ctx.graph.constant_i64(v); }

std::string range(TranslateContext& ctx, int64_t n) {
  return ctx.emit1("Range", {ctx.graph.constant_i64({0}, true), ctx.graph.constant_i64({n}, true),
                             ctx.graph.constant_i64({1}, true)});
}

// Column k of [..., m, n] as [..., m].
std::string column(TranslateContext& ctx, const std::string& a, int64_t k) {
  auto* g = ctx.emit("Gather", {a, ctx.graph.constant_i64({k}, true)}, {ctx.temp("column")});
  set_attr(g, "axis", int64_t{-1});
  return g->output(0);
}

// x - tau v (v^T x) (left: H x) or x - tau (x v) v^T (right: x H), v [..., m], tau [..., 1].
std::string reflect(TranslateContext& ctx, const std::string& x, const std::string& v, const std::string& tau,
                    bool left) {
  const std::string tau2 = ctx.emit1("Unsqueeze", {tau, i64s(ctx, {-1})});  // [..., 1, 1]
  if (left) {
    const std::string w = ctx.emit1("MatMul", {ctx.emit1("Unsqueeze", {v, i64s(ctx, {-2})}), x});  // [..., 1, n]
    return ctx.emit1(
        "Sub", {x, ctx.emit1("Mul", {tau2, ctx.emit1("Mul", {ctx.emit1("Unsqueeze", {v, i64s(ctx, {-1})}), w})})});
  }
  const std::string w = ctx.emit1("MatMul", {x, ctx.emit1("Unsqueeze", {v, i64s(ctx, {-1})})});  // [..., m, 1]
  return ctx.emit1("Sub",
                   {x, ctx.emit1("Mul", {tau2, ctx.emit1("Mul", {w, ctx.emit1("Unsqueeze", {v, i64s(ctx, {-2})})})})});
}

// The unit-leading reflector vector of step k: 1 at k, `below` (already divided) after it, 0 before.
std::string reflector(TranslateContext& ctx, const std::string& rows, int64_t k, const std::string& below, DType t) {
  const std::string kk = ctx.graph.constant_i64({k}, true);
  return ctx.emit1("Where",
                   {ctx.emit1("Greater", {rows, kk}), below,
                    ctx.emit1("Where", {ctx.emit1("Equal", {rows, kk}), ctx.constant(1, t), ctx.constant(0, t)})});
}

// The identity [m, m] in dtype t.
std::string identity(TranslateContext& ctx, const std::string& rows, DType t) {
  return ctx.cast_if_needed(ctx.emit1("Equal", {ctx.emit1("Unsqueeze", {rows, i64s(ctx, {1})}), rows}), DType::kBool,
                            t);
}

std::pair<int64_t, int64_t> matrix_dims(TranslateContext& ctx, const std::string& arg) {
  const auto& s = ctx.input_meta(arg).sizes;
  if (s.size() < 2 || !s[s.size() - 2].value || !s.back().value) ctx.fail("'" + arg + "' needs static matrix dims");
  if (*s.back().value > 64 || *s[s.size() - 2].value > 64) ctx.fail("matrices larger than 64 are not supported");
  return {*s[s.size() - 2].value, *s.back().value};
}

// qr(self, some=True) -> (Q [m, k or m], R [k or m, n]), k = min(m, n).
void qr(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const auto [m, n] = matrix_dims(ctx, "self");
  const int64_t k = std::min(m, n);
  const std::string rows = range(ctx, m);
  std::string r = ctx.value("self", t), q = identity(ctx, rows, t);
  for (int64_t j = 0; j < k; ++j) {
    const std::string kk = ctx.graph.constant_i64({j}, true);
    const std::string col = column(ctx, r, j);
    auto* ga = ctx.emit("Gather", {col, ctx.graph.constant_i64({j})}, {ctx.temp("alpha")});
    set_attr(ga, "axis", int64_t{-1});
    const std::string alpha = ga->output(0);  // [..., 1]
    const std::string tail = ctx.temp("tail_norm2");
    emit_reduce(
        ctx, "ReduceSum",
        ctx.emit1("Where", {ctx.emit1("Greater", {rows, kk}), ctx.emit1("Mul", {col, col}), ctx.constant(0, t)}), {-1},
        true, tail);
    const std::string norm = ctx.emit1("Sqrt", {ctx.emit1("Add", {ctx.emit1("Mul", {alpha, alpha}), tail})});
    const std::string beta =
        ctx.emit1("Where", {ctx.emit1("GreaterOrEqual", {alpha, ctx.constant(0, t)}), ctx.emit1("Neg", {norm}), norm});
    const std::string trivial = ctx.emit1("Equal", {tail, ctx.constant(0, t)});
    const std::string tau =
        ctx.emit1("Where", {trivial, ctx.constant(0, t), ctx.emit1("Div", {ctx.emit1("Sub", {beta, alpha}), beta})});
    const std::string denom = ctx.emit1("Where", {trivial, ctx.constant(1, t), ctx.emit1("Sub", {alpha, beta})});
    const std::string v = reflector(ctx, rows, j, ctx.emit1("Div", {col, denom}), t);
    r = reflect(ctx, r, v, tau, true);
    q = reflect(ctx, q, v, tau, false);
  }
  auto* upper = ctx.emit("Trilu", {r}, {ctx.temp("r")});
  set_attr(upper, "upper", int64_t{1});
  const bool some = ctx.bool_arg("some", true);
  const int64_t cols = some ? k : m;
  ctx.alias_output(0, cols == m ? q : ctx.emit1("Slice", {q, i64s(ctx, {0}), i64s(ctx, {cols}), i64s(ctx, {-1})}));
  const std::string rr = upper->output(0);
  ctx.alias_output(1, cols == m ? rr : ctx.emit1("Slice", {rr, i64s(ctx, {0}), i64s(ctx, {cols}), i64s(ctx, {-2})}));
}

// orgqr(self, input2 = tau): the first n columns of H_0 ... H_{k-1}, reflector j stored below the
// diagonal of column j of self (unit leading entry implied), k = tau's length.
void orgqr(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const auto [m, n] = matrix_dims(ctx, "self");
  const auto& ts = ctx.input_meta("input2").sizes;
  if (ts.empty() || !ts.back().value) ctx.fail("orgqr needs a static number of reflectors");
  const std::string a = ctx.value("self", t), taus = ctx.value("input2", t);
  const std::string rows = range(ctx, m);
  std::string q = identity(ctx, rows, t);
  for (int64_t j = *ts.back().value - 1; j >= 0; --j) {  // Q = H_0 (H_1 (... I)): left products, last first
    auto* g = ctx.emit("Gather", {taus, ctx.graph.constant_i64({j})}, {ctx.temp("tau")});
    set_attr(g, "axis", int64_t{-1});
    q = reflect(ctx, q, reflector(ctx, rows, j, column(ctx, a, j), t), g->output(0), true);
  }
  ctx.emit("Slice", {q, i64s(ctx, {0}), i64s(ctx, {n}), i64s(ctx, {-1})}, {ctx.output()});
}

}  // namespace

PARITY_TRANSLATION("aten::qr.default", qr, 18);
PARITY_TRANSLATION("aten::orgqr.default", orgqr, 18);

}  // namespace parity::exporter
