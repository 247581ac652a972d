// CompositeImplicitAutograd losses that torch.export keeps in a (non-strict) program (F.kl_div,
// F.margin_ranking_loss, F.hinge_embedding_loss, ...), each with the formula of torch's composite.
#include <cmath>

#include "../src/translate.h"

namespace parity::exporter {
namespace {

std::string i64s(TranslateContext& ctx, std::vector<int64_t> v) { return ctx.graph.constant_i64(v); }

// A loss's reduction argument: 0 none, 1 mean, 2 sum.
void reduce_loss(TranslateContext& ctx, const std::string& loss) {
  const int64_t reduction = ctx.int_arg("reduction", 1);
  if (reduction == 0) return ctx.alias_output(0, loss);
  emit_reduce(ctx, reduction == 2 ? "ReduceSum" : "ReduceMean", loss, {}, false, ctx.output());
}

std::string clamp_min0(TranslateContext& ctx, const std::string& v, DType t) {
  return ctx.emit1("Max", {v, ctx.constant(0, t)});
}

// margin_ranking_loss(input1, input2, target, margin, reduction) = max(0, -target * (x1 - x2) + margin).
void margin_ranking_loss(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const std::string d = ctx.emit1("Sub", {ctx.value("input1", t), ctx.value("input2", t)});
  const std::string v = ctx.emit1("Mul", {ctx.emit1("Neg", {ctx.value("target", t)}), d});
  reduce_loss(ctx, clamp_min0(ctx, ctx.emit1("Add", {v, ctx.constant(ctx.float_arg("margin", 0), t)}), t));
}

// hinge_embedding_loss(self, target, margin, reduction): where(target != 1, max(0, margin - x), 0) +
// where(target != -1, x, 0).
void hinge_embedding_loss(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const std::string x = ctx.value("self", t), y = ctx.value("target", t), zero = ctx.constant(0, t);
  const std::string margin = clamp_min0(ctx, ctx.emit1("Sub", {ctx.constant(ctx.float_arg("margin", 1.0), t), x}), t);
  const std::string not_pos = ctx.emit1("Not", {ctx.emit1("Equal", {y, ctx.constant(1, t)})});
  const std::string not_neg = ctx.emit1("Not", {ctx.emit1("Equal", {y, ctx.constant(-1, t)})});
  reduce_loss(ctx,
              ctx.emit1("Add", {ctx.emit1("Where", {not_pos, margin, zero}), ctx.emit1("Where", {not_neg, x, zero})}));
}

// kl_div(self, target, reduction, log_target): exp(target) * (target - self) for log targets, else
// xlogy(target, target) - target * self (0 where target is 0).
void kl_div(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const std::string x = ctx.value("self", t), y = ctx.value("target", t);
  if (ctx.bool_arg("log_target", false))
    return reduce_loss(ctx, ctx.emit1("Mul", {ctx.emit1("Exp", {y}), ctx.emit1("Sub", {y, x})}));
  const std::string zero = ctx.constant(0, t);
  const std::string xlogy =
      ctx.emit1("Where", {ctx.emit1("Equal", {y, zero}), zero, ctx.emit1("Mul", {y, ctx.emit1("Log", {y})})});
  reduce_loss(ctx, ctx.emit1("Sub", {xlogy, ctx.emit1("Mul", {y, x})}));
}

// poisson_nll_loss(input, target, log_input, full, eps, reduction): exp(x) - y * x, or x - y * log(x + eps);
// `full` adds Stirling's term y log y - y + log(2 pi y) / 2 where y > 1.
void poisson_nll_loss(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const std::string x = ctx.value("input", t), y = ctx.value("target", t);
  std::string loss;
  if (ctx.bool_arg("log_input", true)) {
    loss = ctx.emit1("Sub", {ctx.emit1("Exp", {x}), ctx.emit1("Mul", {y, x})});
  } else {
    const std::string lx = ctx.emit1("Log", {ctx.emit1("Add", {x, ctx.constant(ctx.float_arg("eps", 1e-8), t)})});
    loss = ctx.emit1("Sub", {x, ctx.emit1("Mul", {y, lx})});
  }
  if (ctx.bool_arg("full", false)) {
    const std::string ylogy = ctx.emit1("Mul", {y, ctx.emit1("Log", {y})});
    const std::string half_log =
        ctx.emit1("Mul", {ctx.constant(0.5, t), ctx.emit1("Log", {ctx.emit1("Mul", {ctx.constant(2 * M_PI, t), y})})});
    const std::string stirling = ctx.emit1("Add", {ctx.emit1("Sub", {ylogy, y}), half_log});
    const std::string small = ctx.emit1("LessOrEqual", {y, ctx.constant(1, t)});
    loss = ctx.emit1("Add", {loss, ctx.emit1("Where", {small, ctx.constant(0, t), stirling})});
  }
  reduce_loss(ctx, loss);
}

// cosine_embedding_loss(input1, input2, target, margin, reduction): cos = sum(x1 x2) / sqrt((sum(x1^2) +
// 1e-12) (sum(x2^2) + 1e-12)) over the last dim; 1 - cos where target is 1, max(0, cos - margin) where -1.
void cosine_embedding_loss(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const std::string a = ctx.value("input1", t), b = ctx.value("input2", t), y = ctx.value("target", t);
  const int64_t dim = std::max(ctx.rank("input1"), ctx.rank("input2")) - 1;
  auto sum_last = [&](const std::string& v) {
    const std::string s = ctx.temp("sum");
    emit_reduce(ctx, "ReduceSum", v, {dim}, false, s);
    return s;
  };
  const std::string eps = ctx.constant(1e-12, t);
  const std::string m1 = ctx.emit1("Add", {sum_last(ctx.emit1("Mul", {a, a})), eps});
  const std::string m2 = ctx.emit1("Add", {sum_last(ctx.emit1("Mul", {b, b})), eps});
  const std::string cos =
      ctx.emit1("Div", {sum_last(ctx.emit1("Mul", {a, b})), ctx.emit1("Sqrt", {ctx.emit1("Mul", {m1, m2})})});
  const std::string zero = ctx.constant(0, t);
  const std::string pos = ctx.emit1("Sub", {ctx.constant(1, t), cos});
  const std::string neg = clamp_min0(ctx, ctx.emit1("Sub", {cos, ctx.constant(ctx.float_arg("margin", 0), t)}), t);
  const std::string out_pos = ctx.emit1("Where", {ctx.emit1("Equal", {y, ctx.constant(1, t)}), pos, zero});
  const std::string out_neg = ctx.emit1("Where", {ctx.emit1("Equal", {y, ctx.constant(-1, t)}), neg, zero});
  reduce_loss(ctx, ctx.emit1("Add", {out_pos, out_neg}));
}

// multilabel_margin_loss(self, target, reduction): per sample, the targets are target's leading entries
// up to the first -1; the loss sums max(0, 1 - x[j] + x[i]) over those targets j and the non-target
// classes i, divided by the class count (as torch's kernel loops).
void multilabel_margin_loss(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const std::string x = ctx.value("self", t), y = ctx.value("target", DType::kInt64);
  const std::string ax = i64s(ctx, {-1});
  const std::string is_end = ctx.emit1("Equal", {y, ctx.graph.constant_i64({-1}, true)});
  auto* cs =
      ctx.emit("CumSum", {ctx.cast_if_needed(is_end, DType::kBool, DType::kInt64), ctx.graph.constant_i64({-1}, true)},
               {ctx.temp("ends_seen")});
  const std::string valid = ctx.emit1("Equal", {cs->output(0), ctx.graph.constant_i64({0}, true)});
  const std::string safe = ctx.emit1("Where", {valid, y, ctx.graph.constant_i64({0}, true)});
  // is_target[..., i]: some valid k has target[k] == i.
  const std::string classes = ctx.emit1(
      "Range",
      {ctx.graph.constant_i64({0}, true),
       ctx.emit1("Squeeze", {ctx.emit1("Slice", {shape_of(ctx, x), ax, i64s(ctx, {INT64_MAX})}), i64s(ctx, {0})}),
       ctx.graph.constant_i64({1}, true)});
  const std::string hit = ctx.emit1(
      "And", {ctx.emit1("Equal", {ctx.emit1("Unsqueeze", {safe, ax}), classes}), ctx.emit1("Unsqueeze", {valid, ax})});
  const std::string is_target = ctx.temp("is_target");
  emit_reduce(ctx, "ReduceMax", ctx.cast_if_needed(hit, DType::kBool, t), {-2}, true, is_target);
  auto* g = ctx.emit("GatherElements", {x, safe}, {ctx.temp("target_scores")});
  set_attr(g, "axis", int64_t{-1});
  // term[..., k, i] = max(0, 1 - x[target[k]] + x[i]) for valid k and non-target i.
  const std::string margin =
      clamp_min0(ctx,
                 ctx.emit1("Add", {ctx.emit1("Sub", {ctx.constant(1, t), ctx.emit1("Unsqueeze", {g->output(0), ax})}),
                                   ctx.emit1("Unsqueeze", {x, i64s(ctx, {-2})})}),
                 t);
  const std::string keep = ctx.emit1("Mul", {ctx.emit1("Unsqueeze", {ctx.cast_if_needed(valid, DType::kBool, t), ax}),
                                             ctx.emit1("Sub", {ctx.constant(1, t), is_target})});
  const std::string total = ctx.temp("total");
  emit_reduce(ctx, "ReduceSum", ctx.emit1("Mul", {margin, keep}), {-2, -1}, false, total);
  const std::string c = ctx.cast_if_needed(
      ctx.emit1("Squeeze", {ctx.emit1("Slice", {shape_of(ctx, x), ax, i64s(ctx, {INT64_MAX})}), i64s(ctx, {0})}),
      DType::kInt64, t);
  reduce_loss(ctx, ctx.emit1("Div", {total, c}));
}

}  // namespace

PARITY_TRANSLATION("aten::margin_ranking_loss.default", margin_ranking_loss, 18);
PARITY_TRANSLATION("aten::hinge_embedding_loss.default", hinge_embedding_loss, 18);
PARITY_TRANSLATION("aten::kl_div.default", kl_div, 18);
PARITY_TRANSLATION("aten::poisson_nll_loss.default", poisson_nll_loss, 18);
PARITY_TRANSLATION("aten::cosine_embedding_loss.default", cosine_embedding_loss, 18);
PARITY_TRANSLATION("aten::multilabel_margin_loss.default", multilabel_margin_loss, 18);
PARITY_ALIAS("aten::nll_loss2d.default", "aten::nll_loss.default");
PARITY_ALIAS("aten::nll_loss_nd.default", "aten::nll_loss.default");

}  // namespace parity::exporter
