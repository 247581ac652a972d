// Factory, random, scan and counting ATen ops -> ONNX (torch_lib registry coverage): windows, linspace,
// random sampling, cross products, logcumsumexp, histc, bincount, unique.
#include <cmath>
#include <limits>

#include "../src/translate.h"

namespace parity::exporter {
namespace {

std::string scalar_i64(TranslateContext& ctx, int64_t v) { return ctx.graph.constant_i64({v}, true); }
std::string range_of(TranslateContext& ctx, const std::string& n) {
  return ctx.emit1("Range", {scalar_i64(ctx, 0), n, scalar_i64(ctx, 1)});
}

// Generalised cosine windows as torch computes them: M = N + 1 when periodic (the last sample dropped),
// w[n] = sum_k a_k cos(2 pi k n / (M - 1)); N = 1 gives [1], N = 0 an empty window.
void cosine_window(TranslateContext& ctx, const std::vector<double>& a) {
  const DType t = ctx.output_meta().dtype;
  const int64_t n = ctx.int_arg("window_length", 0);
  const bool periodic = ctx.bool_arg("periodic", true);
  if (n <= 1) {
    ctx.emit("Expand", {ctx.constant(1, t), ctx.graph.constant_i64({n})}, {ctx.output()});
    return;
  }
  const int64_t m = periodic ? n + 1 : n;
  const std::string idx =
      ctx.emit1("Range", {ctx.constant(0, t), ctx.constant(static_cast<double>(n), t), ctx.constant(1, t)});
  const std::string base = ctx.emit1("Mul", {idx, ctx.constant(2 * M_PI / static_cast<double>(m - 1), t)});
  std::string w = ctx.emit1("Expand", {ctx.constant(a[0], t), ctx.graph.constant_i64({n})});
  for (size_t k = 1; k < a.size(); ++k) {
    const std::string c =
        ctx.emit1("Cos", {k == 1 ? base : ctx.emit1("Mul", {base, ctx.constant(static_cast<double>(k), t)})});
    w = ctx.emit1("Add", {w, ctx.emit1("Mul", {c, ctx.constant(a[k], t)})});
  }
  ctx.alias_output(0, w);
}
void hann_window(TranslateContext& ctx) { cosine_window(ctx, {0.5, -0.5}); }
void hamming_window(TranslateContext& ctx) {
  cosine_window(ctx, {ctx.float_arg("alpha", 0.54), -ctx.float_arg("beta", 0.46)});
}
void blackman_window(TranslateContext& ctx) { cosine_window(ctx, {0.42, -0.5, 0.08}); }

// linspace(start, end, steps): torch fills the first half forward from start and the second half backward
// from end (start + i step, end - (steps - 1 - i) step); integer outputs are computed in float64, truncated.
void linspace(TranslateContext& ctx) {
  const DType out = ctx.output_meta().dtype;
  const DType t = dtype_is_floating(out) ? out : DType::kFloat64;
  const int64_t steps = ctx.int_arg("steps", 0);
  const std::string start = ctx.emit1("Reshape", {ctx.value("start", t), ctx.graph.constant_i64({})});
  const std::string end = ctx.emit1("Reshape", {ctx.value("end", t), ctx.graph.constant_i64({})});
  if (steps <= 1) {
    ctx.alias_output(0, ctx.cast_if_needed(ctx.emit1("Expand", {start, ctx.graph.constant_i64({steps})}), t, out));
    return;
  }
  const std::string step =
      ctx.emit1("Div", {ctx.emit1("Sub", {end, start}), ctx.constant(static_cast<double>(steps - 1), t)});
  const std::string i =
      ctx.emit1("Range", {ctx.constant(0, t), ctx.constant(static_cast<double>(steps), t), ctx.constant(1, t)});
  const std::string fwd = ctx.emit1("Add", {start, ctx.emit1("Mul", {i, step})});
  const std::string back = ctx.emit1(
      "Sub", {end, ctx.emit1("Mul", {ctx.emit1("Sub", {ctx.constant(static_cast<double>(steps - 1), t), i}), step})});
  const std::string first_half = ctx.emit1("Less", {i, ctx.constant(static_cast<double>(steps / 2), t)});
  ctx.alias_output(0, ctx.cast_if_needed(ctx.emit1("Where", {first_half, fwd, back}), t, out));
}

// Random sampling from RandomUniformLike / RandomNormalLike on a zero tensor of the output's shape.
std::string uniform_like(TranslateContext& ctx, const std::string& shape, DType t) {
  auto* n = ctx.emit("RandomUniformLike", {ctx.emit1("Expand", {ctx.constant(0, t), shape})}, {ctx.temp("uniform")});
  set_attr(n, "dtype", static_cast<int64_t>(t));
  return n->output(0);
}
std::string normal_like(TranslateContext& ctx, const std::string& zeros, DType t) {
  auto* n = ctx.emit("RandomNormalLike", {zeros}, {ctx.temp("normal")});
  set_attr(n, "dtype", static_cast<int64_t>(t));
  return n->output(0);
}

// bernoulli(self) draws with the probabilities in self; bernoulli.p with one probability p.
void bernoulli(TranslateContext& ctx) {
  const DType out = ctx.output_meta().dtype;
  const DType t = dtype_is_floating(out) ? out : DType::kFloat32;
  const std::string x = ctx.tensor("self");
  const std::string p = ctx.has("p") ? ctx.value("p", t) : ctx.value("self", t);
  const std::string hit = ctx.emit1("Less", {uniform_like(ctx, shape_of(ctx, x), t), p});
  ctx.alias_output(0, ctx.cast_if_needed(hit, DType::kBool, out));
}

// normal(mean, std) in its four overloads and normal_functional(self, mean, std): mean + std * N(0, 1),
// shaped as the broadcast of the tensor arguments (or `size`, or self).
void normal(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const std::string mean = ctx.value("mean", t), std_ = ctx.has("std") ? ctx.value("std", t) : ctx.constant(1, t);
  std::string zeros;
  if (ctx.arg("self"))
    zeros = ctx.emit1("Mul", {ctx.value("self", t), ctx.constant(0, t)});
  else if (ctx.has("size"))
    zeros = ctx.emit1("Expand", {ctx.constant(0, t), ctx.int_list_value("size")});
  else
    zeros =
        ctx.emit1("Add", {ctx.emit1("Mul", {mean, ctx.constant(0, t)}), ctx.emit1("Mul", {std_, ctx.constant(0, t)})});
  ctx.emit("Add", {mean, ctx.emit1("Mul", {std_, normal_like(ctx, zeros, t)})}, {ctx.output()});
}

// randint(high, size) / randint.low(low, high, size) / randint_like(self, high) / .low_dtype(self, low, high):
// low + floor(U * (high - low)), sampled in float64 so every integer of the range is reachable.
void randint(TranslateContext& ctx) {
  const DType out = ctx.output_meta().dtype;
  const std::string shape = ctx.arg("self") ? shape_of(ctx, ctx.tensor("self")) : ctx.int_list_value("size");
  const DType f = DType::kFloat64;
  const std::string low = ctx.has("low") ? ctx.value("low", f) : ctx.constant(0, f);
  const std::string span = ctx.emit1("Sub", {ctx.value("high", f), low});
  const std::string v =
      ctx.emit1("Add", {low, ctx.emit1("Floor", {ctx.emit1("Mul", {uniform_like(ctx, shape, f), span})})});
  ctx.alias_output(0, ctx.cast_if_needed(v, f, out));
}

// multinomial(self, num_samples, replacement) on [C] or [B, C] weights. With replacement: inverse CDF of
// the normalised cumulative weights; without: the Gumbel top-k trick (the k largest log w - log(-log U)).
void multinomial(TranslateContext& ctx) {
  const DType f = DType::kFloat32;
  const std::string w = ctx.value("self", f);
  const int64_t rank = ctx.rank("self");
  const std::string k = ctx.emit1("Reshape", {ctx.int_value("num_samples"), ctx.graph.constant_i64({1})});
  std::string idx;
  if (ctx.bool_arg("replacement", false)) {
    auto* cs = ctx.emit("CumSum", {w, scalar_i64(ctx, rank - 1)}, {ctx.temp("cdf")});
    const std::string total = ctx.temp("total");
    emit_reduce(ctx, "ReduceSum", w, {rank - 1}, true, total);
    const std::string cdf = ctx.emit1("Div", {cs->output(0), total});
    const std::string lead =
        ctx.emit1("Slice", {shape_of(ctx, w), ctx.graph.constant_i64({0}), ctx.graph.constant_i64({rank - 1})});
    auto* shape = ctx.emit("Concat", {lead, k}, {ctx.temp("sample_shape")});
    set_attr(shape, "axis", int64_t{0});
    const std::string u =
        ctx.emit1("Unsqueeze", {uniform_like(ctx, shape->output(0), f), ctx.graph.constant_i64({-1})});
    const std::string below =
        ctx.cast_if_needed(ctx.emit1("LessOrEqual", {ctx.emit1("Unsqueeze", {cdf, ctx.graph.constant_i64({-2})}), u}),
                           DType::kBool, DType::kInt64);
    const std::string count = ctx.temp("count");
    emit_reduce(ctx, "ReduceSum", below, {-1}, false, count);
    const std::string last =
        ctx.emit1("Sub", {ctx.emit1("Gather", {shape_of(ctx, w), scalar_i64(ctx, rank - 1)}), scalar_i64(ctx, 1)});
    idx = ctx.emit1("Min", {count, last});
  } else {
    const std::string u = uniform_like(ctx, shape_of(ctx, w), f);
    const std::string gumbel = ctx.emit1("Neg", {ctx.emit1("Log", {ctx.emit1("Neg", {ctx.emit1("Log", {u})})})});
    const std::string keys = ctx.emit1("Add", {ctx.emit1("Log", {w}), gumbel});
    auto* topk = ctx.emit("TopK", {keys, k}, {ctx.temp("keys"), ctx.temp("picked")});
    set_attr(topk, "axis", int64_t{-1});
    idx = topk->output(1);
  }
  ctx.alias_output(0, ctx.cast_if_needed(idx, DType::kInt64, ctx.output_meta().dtype));
}

// cross(self, other, dim?) / linalg_cross(self, other, dim=-1): a x b = a[1,2,0] * b[2,0,1] - a[2,0,1] * b[1,2,0]
// along a dim of size 3; cross without dim takes the first dim of size 3 (torch's deprecated default).
void cross(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const auto& meta = ctx.output_meta();
  const int64_t rank = static_cast<int64_t>(meta.sizes.size());
  int64_t dim = -1;
  if (ctx.has("dim")) {
    dim = ctx.normalized_dim(ctx.int_arg("dim", -1), rank);
  } else if (ctx.node.target.find("linalg_cross") != std::string::npos) {
    dim = rank - 1;
  } else {
    for (int64_t i = 0; i < rank && dim < 0; ++i)
      if (meta.sizes[static_cast<size_t>(i)].value == 3) dim = i;
    if (dim < 0) ctx.fail("cross: no dimension of size 3");
  }
  const std::string a = ctx.value("self", t), b = ctx.value("other", t);
  const std::string i120 = ctx.graph.constant_i64({1, 2, 0}), i201 = ctx.graph.constant_i64({2, 0, 1});
  auto pick = [&](const std::string& v, const std::string& idx, const char* operand) {
    auto* g = ctx.emit("Gather", {v, idx}, {ctx.temp("rot")});
    set_attr(g, "axis", dim - (rank - ctx.rank(operand)));
    return g->output(0);
  };
  const std::string l = ctx.emit1("Mul", {pick(a, i120, "self"), pick(b, i201, "other")});
  const std::string r = ctx.emit1("Mul", {pick(a, i201, "self"), pick(b, i120, "other")});
  ctx.emit("Sub", {l, r}, {ctx.output()});
}

// logcumsumexp(self, dim): out[i] = logsumexp(x[j], j <= i) as a masked [n, n] ReduceLogSumExp, exact for
// any spread of values (a cumulative sum of exp(x - max) underflows for values far below the max).
void logcumsumexp(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const int64_t rank = ctx.rank("self");
  const std::string x = ctx.value("self", t);
  if (rank == 0) return ctx.alias_output(0, x);
  const int64_t dim = ctx.normalized_dim(ctx.int_arg("dim", 0), rank);
  const std::string n = ctx.emit1("Gather", {shape_of(ctx, x), scalar_i64(ctx, dim)});
  const std::string j = range_of(ctx, n);
  const std::string i = ctx.emit1("Unsqueeze", {j, ctx.graph.constant_i64({1})});
  std::string keep = ctx.emit1("LessOrEqual", {j, i});  // [n (i), n (j)]
  std::vector<int64_t> shape = {0, 0};
  for (int64_t d = dim + 1; d < rank; ++d) shape.push_back(1);
  auto* reshape = ctx.emit("Reshape", {keep, ctx.graph.constant_i64(shape)}, {ctx.temp("mask")});
  set_attr(reshape, "allowzero", int64_t{0});
  keep = reshape->output(0);
  const std::string xs = ctx.emit1("Unsqueeze", {x, ctx.graph.constant_i64({dim})});  // j at dim + 1
  const std::string masked = ctx.emit1("Where", {keep, xs, ctx.constant(-std::numeric_limits<double>::infinity(), t)});
  emit_reduce(ctx, "ReduceLogSumExp", masked, {dim + 1}, false, ctx.output());
}

// histc(self, bins, min, max): equal-width bins over [min, max] (the data's range when both are 0, widened
// by 1 each side when empty); bin = trunc((x - min) * bins / (max - min)), x == max in the last bin.
void histc(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const std::string x = ctx.emit1("Reshape", {ctx.value("self", t), ctx.graph.constant_i64({-1})});
  const int64_t bins = ctx.int_arg("bins", 100);
  const double lo_arg = ctx.float_arg("min", 0.0), hi_arg = ctx.float_arg("max", 0.0);
  std::string lo = ctx.constant(lo_arg, t), hi = ctx.constant(hi_arg, t);
  if (lo_arg == hi_arg) {
    if (lo_arg == 0.0) {
      lo = ctx.temp("data_min"), hi = ctx.temp("data_max");
      emit_reduce(ctx, "ReduceMin", x, {}, false, lo);
      emit_reduce(ctx, "ReduceMax", x, {}, false, hi);
    }
    const std::string same = ctx.emit1("Equal", {lo, hi});
    lo = ctx.emit1("Where", {same, ctx.emit1("Sub", {lo, ctx.constant(1, t)}), lo});
    hi = ctx.emit1("Where", {same, ctx.emit1("Add", {hi, ctx.constant(1, t)}), hi});
  }
  const std::string pos_f =
      ctx.emit1("Div", {ctx.emit1("Mul", {ctx.emit1("Sub", {x, lo}), ctx.constant(static_cast<double>(bins), t)}),
                        ctx.emit1("Sub", {hi, lo})});
  std::string pos = ctx.cast_if_needed(ctx.emit1("Floor", {pos_f}), t, DType::kInt64);
  pos = ctx.emit1("Min", {pos, scalar_i64(ctx, bins - 1)});
  const std::string inside =
      ctx.emit1("And", {ctx.emit1("GreaterOrEqual", {x, lo}), ctx.emit1("LessOrEqual", {x, hi})});
  pos = ctx.emit1("Where", {inside, pos, scalar_i64(ctx, -1)});
  const std::string hits = ctx.cast_if_needed(
      ctx.emit1("Equal",
                {ctx.emit1("Unsqueeze", {pos, ctx.graph.constant_i64({1})}), range_of(ctx, scalar_i64(ctx, bins))}),
      DType::kBool, t);
  emit_reduce(ctx, "ReduceSum", hits, {0}, false, ctx.output());
}

// bincount(self, weights?, minlength): length max(max(x) + 1, minlength); counts (or summed weights) per value.
void bincount(TranslateContext& ctx) {
  const DType out = ctx.output_meta().dtype;
  const std::string x = ctx.value("self", DType::kInt64);
  // max over an empty input is -inf-like in ONNX; the length then comes from minlength alone.
  const std::string mx = ctx.temp("max");
  auto* with_floor = ctx.emit("Concat", {x, ctx.graph.constant_i64({-1})}, {ctx.temp("values")});
  set_attr(with_floor, "axis", int64_t{0});
  emit_reduce(ctx, "ReduceMax", with_floor->output(0), {}, false, mx);
  const std::string len = ctx.emit1("Max", {ctx.emit1("Add", {mx, scalar_i64(ctx, 1)}),
                                            ctx.has("minlength") ? ctx.int_value("minlength") : scalar_i64(ctx, 0)});
  const std::string eq =
      ctx.emit1("Equal", {ctx.emit1("Unsqueeze", {x, ctx.graph.constant_i64({1})}), range_of(ctx, len)});
  std::string contrib = ctx.cast_if_needed(eq, DType::kBool, out);
  if (ctx.has("weights"))
    contrib =
        ctx.emit1("Mul", {contrib, ctx.emit1("Unsqueeze", {ctx.value("weights", out), ctx.graph.constant_i64({1})})});
  emit_reduce(ctx, "ReduceSum", contrib, {0}, false, ctx.output());
}

}  // namespace

PARITY_TRANSLATION("aten::hann_window.default", hann_window, 18);
PARITY_TRANSLATION("aten::hann_window.periodic", hann_window, 18);
PARITY_TRANSLATION("aten::hamming_window.default", hamming_window, 18);
PARITY_TRANSLATION("aten::hamming_window.periodic", hamming_window, 18);
PARITY_TRANSLATION("aten::hamming_window.periodic_alpha", hamming_window, 18);
PARITY_TRANSLATION("aten::hamming_window.periodic_alpha_beta", hamming_window, 18);
PARITY_TRANSLATION("aten::blackman_window.default", blackman_window, 18);
PARITY_TRANSLATION("aten::blackman_window.periodic", blackman_window, 18);
PARITY_TRANSLATION("aten::linspace.default", linspace, 18);
PARITY_TRANSLATION("aten::linspace.Tensor_Tensor", linspace, 18);
PARITY_TRANSLATION("aten::linspace.Tensor_Scalar", linspace, 18);
PARITY_TRANSLATION("aten::linspace.Scalar_Tensor", linspace, 18);
PARITY_TRANSLATION("aten::bernoulli.default", bernoulli, 18);
PARITY_TRANSLATION("aten::bernoulli.p", bernoulli, 18);
PARITY_TRANSLATION("aten::normal.Tensor_Tensor", normal, 18);
PARITY_TRANSLATION("aten::normal.Tensor_float", normal, 18);
PARITY_TRANSLATION("aten::normal.float_Tensor", normal, 18);
PARITY_TRANSLATION("aten::normal.float_float", normal, 18);
PARITY_TRANSLATION("aten::normal_functional.default", normal, 18);
PARITY_TRANSLATION("aten::randint.default", randint, 18);
PARITY_TRANSLATION("aten::randint.low", randint, 18);
PARITY_TRANSLATION("aten::randint_like.default", randint, 18);
PARITY_TRANSLATION("aten::randint_like.low_dtype", randint, 18);
PARITY_TRANSLATION("aten::multinomial.default", multinomial, 18);
PARITY_TRANSLATION("aten::cross.default", cross, 18);
PARITY_TRANSLATION("aten::linalg_cross.default", cross, 18);
PARITY_TRANSLATION("aten::logcumsumexp.default", logcumsumexp, 18);
PARITY_TRANSLATION("aten::histc.default", histc, 18);
PARITY_TRANSLATION("aten::bincount.default", bincount, 18);

}  // namespace parity::exporter
