// histogramdd (int[] bins, int bins, Tensor[] bin edges): CompositeImplicitAutograd, kept in a (non-strict)
// program. torch's kernel: each dim's edges are linspace(lo, hi, bins + 1) over `range` or the data's
// min / max (widened by 0.5 when equal), or the given edge tensors; an element falls in the bin of the last
// edge <= it (the last bin closed), elements outside the edges (and NaN) are skipped; the histogram sums
// the weights (or ones), and density divides by the total and the bin widths.
#include "../src/translate.h"

namespace parity::exporter {
namespace {

std::string i64s(TranslateContext& ctx, std::vector<int64_t> v) { return ctx.graph.constant_i64(v); }

// torch's CPU linspace(lo, hi, steps) in dtype t: lo + step i for the first half, hi - step (steps - 1 - i)
// for the second (lo and hi are rank-0 values).
std::string linspace(TranslateContext& ctx, const std::string& lo, const std::string& hi, int64_t steps, DType t) {
  const std::string i =
      ctx.cast_if_needed(ctx.emit1("Range", {ctx.graph.constant_i64({0}, true), ctx.graph.constant_i64({steps}, true),
                                             ctx.graph.constant_i64({1}, true)}),
                         DType::kInt64, t);
  const std::string step =
      ctx.emit1("Div", {ctx.emit1("Sub", {hi, lo}), ctx.constant(static_cast<double>(steps - 1), t)});
  const std::string first = ctx.emit1("Add", {lo, ctx.emit1("Mul", {step, i})});
  const std::string second = ctx.emit1(
      "Sub", {hi, ctx.emit1("Mul", {step, ctx.emit1("Sub", {ctx.constant(static_cast<double>(steps - 1), t), i})})});
  return ctx.emit1("Where", {ctx.emit1("Less", {i, ctx.constant(static_cast<double>(steps / 2), t)}), first, second});
}

// The bin edges of dim d of the [N, D] points.
std::string edges_of(TranslateContext& ctx, const std::string& pts, int64_t d, int64_t bins, DType t) {
  std::string lo, hi;
  if (ctx.has("range")) {
    const auto range = ctx.required("range").as_floats();
    if (range.size() < static_cast<size_t>(2 * (d + 1))) ctx.fail("histogramdd: range needs two values per dim");
    lo = ctx.constant(range[static_cast<size_t>(2 * d)], t);
    hi = ctx.constant(range[static_cast<size_t>(2 * d + 1)], t);
  } else {
    auto* g = ctx.emit("Gather", {pts, ctx.graph.constant_i64({d}, true)}, {ctx.temp("coordinate")});
    set_attr(g, "axis", int64_t{1});
    lo = ctx.temp("min");
    hi = ctx.temp("max");
    emit_reduce(ctx, "ReduceMin", g->output(0), {}, false, lo);
    emit_reduce(ctx, "ReduceMax", g->output(0), {}, false, hi);
    const std::string same = ctx.emit1("Equal", {lo, hi});
    lo = ctx.emit1("Where", {same, ctx.emit1("Sub", {lo, ctx.constant(0.5, t)}), lo});
    hi = ctx.emit1("Where", {same, ctx.emit1("Add", {hi, ctx.constant(0.5, t)}), hi});
  }
  return linspace(ctx, lo, hi, bins + 1, t);
}

void histogramdd(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const auto& in = ctx.input_meta("self").sizes;
  if (in.empty() || !in.back().value) ctx.fail("histogramdd needs a static number of dims (the last size)");
  const int64_t dims = *in.back().value;
  const std::string pts = ctx.emit1("Reshape", {ctx.value("self", t), i64s(ctx, {-1, dims})});
  const pt2::Argument& bins_arg = ctx.required("bins");
  std::vector<std::string> edges;
  std::vector<int64_t> bins;
  if (bins_arg.is(pt2::ArgKind::as_tensors)) {
    edges = ctx.tensors("bins");
    for (size_t d = 0; d < edges.size(); ++d) {
      const auto& meta = ctx.fx_graph.meta(bins_arg.tensor_names()[d], ctx.node.name);
      if (meta.sizes.size() != 1 || !meta.sizes[0].value) ctx.fail("histogramdd: bin edges must be static 1-D tensors");
      bins.push_back(*meta.sizes[0].value - 1);
      edges[d] = ctx.cast_if_needed(edges[d], meta.dtype, t);
    }
  } else {
    bins = bins_arg.is(pt2::ArgKind::as_int) ? std::vector<int64_t>(static_cast<size_t>(dims), bins_arg.as_int())
                                             : bins_arg.as_ints();
    for (int64_t d = 0; d < dims; ++d) edges.push_back(edges_of(ctx, pts, d, bins[static_cast<size_t>(d)], t));
  }
  if (static_cast<int64_t>(bins.size()) != dims) ctx.fail("histogramdd: one bin count per dim is needed");
  // Flat bin index of every point, and whether it is inside every dim's edges.
  std::string flat = ctx.graph.constant_i64({0}, true), inside;
  for (int64_t d = 0; d < dims; ++d) {
    auto* g = ctx.emit("Gather", {pts, ctx.graph.constant_i64({d}, true)}, {ctx.temp("coordinate")});
    set_attr(g, "axis", int64_t{1});
    const std::string x = ctx.emit1("Unsqueeze", {g->output(0), i64s(ctx, {1})});  // [N, 1]
    const std::string e = edges[static_cast<size_t>(d)];
    const int64_t b = bins[static_cast<size_t>(d)];
    const std::string le = ctx.cast_if_needed(ctx.emit1("LessOrEqual", {e, x}), DType::kBool, DType::kInt64);
    const std::string count = ctx.temp("edges_below");
    emit_reduce(ctx, "ReduceSum", le, {1}, false, count);
    const std::string pos = ctx.emit1(
        "Min", {ctx.emit1("Sub", {count, ctx.graph.constant_i64({1}, true)}), ctx.graph.constant_i64({b - 1}, true)});
    auto first = [&](int64_t i) { return ctx.emit1("Gather", {e, ctx.graph.constant_i64({i}, true)}); };
    const std::string xs = ctx.emit1("Squeeze", {x, i64s(ctx, {1})});
    const std::string in_d =
        ctx.emit1("And", {ctx.emit1("GreaterOrEqual", {xs, first(0)}), ctx.emit1("LessOrEqual", {xs, first(b)})});
    inside = inside.empty() ? in_d : ctx.emit1("And", {inside, in_d});
    flat = ctx.emit1("Add", {ctx.emit1("Mul", {flat, ctx.graph.constant_i64({b}, true)}), pos});
  }
  int64_t total = 1;
  for (int64_t b : bins) total *= b;
  std::string w =
      ctx.has("weight") ? ctx.emit1("Reshape", {ctx.value("weight", t), i64s(ctx, {-1})}) : ctx.constant(1, t);
  w = ctx.emit1("Where", {inside, w, ctx.constant(0, t)});
  const std::string cells = ctx.emit1(
      "Range",
      {ctx.graph.constant_i64({0}, true), ctx.graph.constant_i64({total}, true), ctx.graph.constant_i64({1}, true)});
  const std::string hit = ctx.emit1("Equal", {ctx.emit1("Unsqueeze", {flat, i64s(ctx, {1})}), cells});
  const std::string hist = ctx.temp("histogram");
  emit_reduce(ctx, "ReduceSum",
              ctx.emit1("Where", {hit, ctx.emit1("Unsqueeze", {w, i64s(ctx, {1})}), ctx.constant(0, t)}), {0}, false,
              hist);
  std::string h = ctx.emit1("Reshape", {hist, i64s(ctx, bins)});
  if (ctx.bool_arg("density", false)) {
    const std::string sum = ctx.temp("histogram_sum");
    emit_reduce(ctx, "ReduceSum", h, {}, false, sum);
    h = ctx.emit1("Div", {h, sum});
    for (int64_t d = 0; d < dims; ++d) {
      const std::string e = edges[static_cast<size_t>(d)];
      const std::string width =
          ctx.emit1("Sub", {ctx.emit1("Slice", {e, i64s(ctx, {1}), i64s(ctx, {bins[static_cast<size_t>(d)] + 1})}),
                            ctx.emit1("Slice", {e, i64s(ctx, {0}), i64s(ctx, {bins[static_cast<size_t>(d)]})})});
      std::vector<int64_t> lay(static_cast<size_t>(dims), 1);
      lay[static_cast<size_t>(d)] = -1;
      h = ctx.emit1("Div", {h, ctx.emit1("Reshape", {width, i64s(ctx, lay)})});
    }
  }
  ctx.alias_output(0, h);
  for (int64_t d = 0; d < dims && static_cast<size_t>(d + 1) < ctx.output_count(); ++d)
    ctx.emit("Identity", {edges[static_cast<size_t>(d)]}, {ctx.output(static_cast<size_t>(d + 1))});
}

}  // namespace

PARITY_TRANSLATION("aten::histogramdd.default", histogramdd, 18);
PARITY_TRANSLATION("aten::histogramdd.int_bins", histogramdd, 18);
PARITY_TRANSLATION("aten::histogramdd.TensorList_bins", histogramdd, 18);

}  // namespace parity::exporter
