// CompositeImplicitAutograd numerical helpers that torch.export keeps in a (non-strict) program:
// trapezoid integration, finite-difference gradients, quantiles, covariances, fft shifts, the normal CDF
// and Sobol draws, each
// with the formula of torch's composite.
#include <cmath>
#include <limits>

#include "../src/translate.h"

namespace parity::exporter {
namespace {

constexpr int64_t kEnd = std::numeric_limits<int64_t>::max();

std::string i64s(TranslateContext& ctx, std::vector<int64_t> v) { return ctx.graph.constant_i64(v); }

std::string slice_axis(TranslateContext& ctx, const std::string& x, int64_t axis, int64_t start, int64_t end) {
  return ctx.emit1("Slice", {x, i64s(ctx, {start}), i64s(ctx, {end}), i64s(ctx, {axis})});
}

// The node's (static) output shape as a constant.
std::string shape_of_output(TranslateContext& ctx) {
  std::vector<int64_t> shape;
  for (const auto& d : ctx.output_meta().sizes) {
    if (!d.value) ctx.fail("needs a static output shape");
    shape.push_back(*d.value);
  }
  return i64s(ctx, shape);
}

// x's spacing along `dim` of y: a 1-D x is laid along dim, an x of y's rank differs along dim itself.
std::string spacing_from_x(TranslateContext& ctx, int64_t dim, int64_t rank, DType t) {
  std::string x = ctx.value("x", t);
  int64_t xdim = dim;
  if (ctx.rank("x") == 1) {
    std::vector<int64_t> lay(static_cast<size_t>(rank), 1);
    lay[static_cast<size_t>(dim)] = -1;
    x = ctx.emit1("Reshape", {x, i64s(ctx, lay)});
  } else if (ctx.rank("x") != rank) {
    ctx.fail("trapezoid: x must be 1-D or of y's rank");
  }
  return ctx.emit1("Sub", {slice_axis(ctx, x, xdim, 1, kEnd), slice_axis(ctx, x, xdim, 0, -1)});
}

// trapezoid.x / trapz.x: sum(dx * (y[1:] + y[:-1])) / 2 along dim.
// trapezoid.dx / trapz.dx: (sum(y) - (y[0] + y[-1]) * 0.5) * dx.
void trapezoid(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const int64_t rank = ctx.rank("y"), dim = ctx.normalized_dim(ctx.int_arg("dim", -1), rank);
  const std::string y = ctx.value("y", t);
  if (ctx.has("x")) {
    const std::string pairs = ctx.emit1("Add", {slice_axis(ctx, y, dim, 1, kEnd), slice_axis(ctx, y, dim, 0, -1)});
    const std::string s = ctx.temp("sum");
    emit_reduce(ctx, "ReduceSum", ctx.emit1("Mul", {spacing_from_x(ctx, dim, rank, t), pairs}), {dim}, false, s);
    return (void)ctx.emit("Div", {s, ctx.constant(2, t)}, {ctx.output()});
  }
  const std::string s = ctx.temp("sum");
  emit_reduce(ctx, "ReduceSum", y, {dim}, false, s);
  const std::string ends = ctx.emit1(
      "Squeeze",
      {ctx.emit1("Add", {slice_axis(ctx, y, dim, 0, 1), slice_axis(ctx, y, dim, -1, kEnd)}), i64s(ctx, {dim})});
  const std::string inner = ctx.emit1("Sub", {s, ctx.emit1("Mul", {ends, ctx.constant(0.5, t)})});
  ctx.emit("Mul", {inner, ctx.value("dx", t)}, {ctx.output()});
}

// cumulative_trapezoid.x: cumsum((y[:-1] + y[1:]) * dx) / 2; .dx: cumsum(dx / 2 * (y[:-1] + y[1:])).
void cumulative_trapezoid(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const int64_t rank = ctx.rank("y"), dim = ctx.normalized_dim(ctx.int_arg("dim", -1), rank);
  const std::string y = ctx.value("y", t);
  const std::string pairs = ctx.emit1("Add", {slice_axis(ctx, y, dim, 0, -1), slice_axis(ctx, y, dim, 1, kEnd)});
  const std::string axis = ctx.graph.constant_i64({dim}, true);
  if (ctx.has("x")) {
    const std::string c = ctx.emit1("CumSum", {ctx.emit1("Mul", {pairs, spacing_from_x(ctx, dim, rank, t)}), axis});
    return (void)ctx.emit("Div", {c, ctx.constant(2, t)}, {ctx.output()});
  }
  const std::string half_dx = ctx.emit1("Div", {ctx.value("dx", t), ctx.constant(2, t)});
  ctx.emit("CumSum", {ctx.emit1("Mul", {half_dx, pairs}), axis}, {ctx.output()});
}

// The dims a gradient overload differentiates along (`dim` int, int list or absent = all).
std::vector<int64_t> gradient_dims(TranslateContext& ctx, int64_t rank) {
  std::vector<int64_t> dims;
  const pt2::Argument* a = ctx.arg("dim");
  if (!a || a->is_none()) {
    for (int64_t d = 0; d < rank; ++d) dims.push_back(d);
  } else if (a->is(pt2::ArgKind::as_int)) {
    dims.push_back(a->as_int());
  } else {
    dims = a->as_ints();
  }
  for (auto& d : dims) d = ctx.normalized_dim(d, rank);
  return dims;
}

// A Scalar or Scalar[] spacing as one double per differentiated dim.
std::vector<double> scalar_spacing(TranslateContext& ctx, size_t n) {
  const pt2::Argument* a = ctx.arg("spacing");
  std::vector<double> h;
  if (!a || a->is_none())
    h.assign(n, 1.0);
  else if (a->is(pt2::ArgKind::as_floats))
    h = a->as_floats();
  else if (a->is(pt2::ArgKind::as_ints))
    for (int64_t v : a->as_ints()) h.push_back(static_cast<double>(v));
  else
    h.assign(n, a->as_float());
  if (h.size() != n) ctx.fail("gradient: " + std::to_string(h.size()) + " spacings for " + std::to_string(n) + " dims");
  return h;
}

// Uniform spacing h along dim: (x[2:] - x[:-2]) / h / 2 inside; one-sided differences of edge_order 1 or 2
// at both ends.
std::string gradient_uniform(TranslateContext& ctx, const std::string& x, int64_t dim, double h, int64_t order,
                             DType t) {
  const std::string hc = ctx.constant(h, t);
  auto s = [&](int64_t a, int64_t b) { return slice_axis(ctx, x, dim, a, b); };
  auto scaled = [&](double k, const std::string& v) { return ctx.emit1("Mul", {ctx.constant(k, t), v}); };
  const std::string center =
      ctx.emit1("Div", {ctx.emit1("Div", {ctx.emit1("Sub", {s(2, kEnd), s(0, -2)}), hc}), ctx.constant(2, t)});
  std::string pre, app;
  if (order == 1) {
    pre = ctx.emit1("Div", {ctx.emit1("Sub", {s(1, 2), s(0, 1)}), hc});
    app = ctx.emit1("Div", {ctx.emit1("Sub", {s(-1, kEnd), s(-2, -1)}), hc});
  } else {
    pre = ctx.emit1("Sub", {ctx.emit1("Add", {scaled(-1.5, s(0, 1)), scaled(2, s(1, 2))}), scaled(0.5, s(2, 3))});
    app =
        ctx.emit1("Add", {ctx.emit1("Sub", {scaled(0.5, s(-3, -2)), scaled(2, s(-2, -1))}), scaled(1.5, s(-1, kEnd))});
    pre = ctx.emit1("Div", {pre, hc});
    app = ctx.emit1("Div", {app, hc});
  }
  return concat(ctx, {pre, center, app}, dim, "gradient");
}

// Coordinates c (1-D) along dim, edge_order 1: a * x[:-2] + b * x[1:-1] + c * x[2:] inside with torch's
// non-uniform weights, one-sided differences at the ends.
std::string gradient_coordinates(TranslateContext& ctx, const std::string& x, const std::string& coord, int64_t dim,
                                 int64_t rank, DType t) {
  auto s = [&](int64_t a, int64_t b) { return slice_axis(ctx, x, dim, a, b); };
  const std::string dx = ctx.emit1("Sub", {slice_axis(ctx, coord, 0, 1, kEnd), slice_axis(ctx, coord, 0, 0, -1)});
  const std::string d1 = slice_axis(ctx, dx, 0, 0, -1), d2 = slice_axis(ctx, dx, 0, 1, kEnd);
  std::vector<int64_t> lay(static_cast<size_t>(rank), 1);
  lay[static_cast<size_t>(dim)] = -1;
  auto laid = [&](const std::string& v) { return ctx.emit1("Reshape", {v, i64s(ctx, lay)}); };
  const std::string sum = ctx.emit1("Add", {d1, d2});
  const std::string a = laid(ctx.emit1("Div", {ctx.emit1("Neg", {d2}), ctx.emit1("Mul", {d1, sum})}));
  const std::string b = laid(ctx.emit1("Div", {ctx.emit1("Sub", {d2, d1}), ctx.emit1("Mul", {d1, d2})}));
  const std::string c = laid(ctx.emit1("Div", {d1, ctx.emit1("Mul", {d2, sum})}));
  const std::string center =
      ctx.emit1("Add", {ctx.emit1("Add", {ctx.emit1("Mul", {a, s(0, -2)}), ctx.emit1("Mul", {b, s(1, -1)})}),
                        ctx.emit1("Mul", {c, s(2, kEnd)})});
  const std::string pre = ctx.emit1("Div", {ctx.emit1("Sub", {s(1, 2), s(0, 1)}), slice_axis(ctx, dx, 0, 0, 1)});
  const std::string app =
      ctx.emit1("Div", {ctx.emit1("Sub", {s(-1, kEnd), s(-2, -1)}), slice_axis(ctx, dx, 0, -1, kEnd)});
  return concat(ctx, {pre, center, app}, dim, "gradient");
}

// gradient(self, spacing?, dim?, edge_order): one output per differentiated dim.
void gradient(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const int64_t rank = ctx.rank("self"), order = ctx.int_arg("edge_order", 1);
  if (order != 1 && order != 2) ctx.fail("gradient: edge_order must be 1 or 2");
  const std::string x = ctx.value("self", t);
  const auto dims = gradient_dims(ctx, rank);
  const pt2::Argument* sp = ctx.arg("spacing");
  if (sp && sp->is(pt2::ArgKind::as_tensors)) {
    if (order != 1) ctx.fail("gradient with coordinate tensors and edge_order 2 is not supported");
    const auto coords = ctx.tensors("spacing");
    if (coords.size() != dims.size()) ctx.fail("gradient: one coordinate tensor per dim is needed");
    for (size_t i = 0; i < dims.size(); ++i) {
      const auto& meta = ctx.fx_graph.meta(sp->tensor_names()[i], ctx.node.name);
      if (meta.sizes.size() != 1) ctx.fail("gradient: coordinate tensors must be 1-D");
      const std::string c = ctx.cast_if_needed(coords[i], meta.dtype, t);
      ctx.alias_output(i, gradient_coordinates(ctx, x, c, dims[i], rank, t));
    }
    return;
  }
  const auto h = scalar_spacing(ctx, dims.size());
  for (size_t i = 0; i < dims.size(); ++i) ctx.alias_output(i, gradient_uniform(ctx, x, dims[i], h[i], order, t));
}

// quantile / nanquantile (self, q, dim?, keepdim, interpolation): sort along the reduced dim (moved last;
// NaN sorted as +inf), ranks q * (count - 1) with count the row length (quantile: a row holding NaN gives
// NaN) or its non-NaN count (nanquantile: an all-NaN row gives NaN), then torch's interpolation.
struct Sorted {
  std::string values, nan_count, n;  // n: row length as t, nan_count [.., 1] as t
};
Sorted sorted_rows(TranslateContext& ctx, const std::string& x, DType t) {
  const std::string isnan = ctx.emit1("IsNaN", {x});
  const std::string clean = ctx.emit1("Where", {isnan, ctx.constant(std::numeric_limits<double>::infinity(), t), x});
  const std::string len = ctx.emit1("Slice", {shape_of(ctx, x), i64s(ctx, {-1}), i64s(ctx, {kEnd})});
  auto* topk = ctx.emit("TopK", {clean, len}, {ctx.temp("sorted"), ctx.temp("order")});
  set_attr(topk, "largest", int64_t{0});
  set_attr(topk, "axis", int64_t{-1});
  const std::string nans = ctx.temp("nan_count");
  emit_reduce(ctx, "ReduceSum", ctx.cast_if_needed(isnan, DType::kBool, t), {-1}, true, nans);
  return {topk->output(0), nans, ctx.cast_if_needed(len, DType::kInt64, t)};
}

// The rows to take quantiles of: self flattened (no dim) or with dim moved last.
std::string quantile_rows(TranslateContext& ctx, bool all, int64_t dim, int64_t rank) {
  const std::string x = ctx.tensor("self");
  if (all || rank == 0) return ctx.emit1("Reshape", {x, i64s(ctx, {-1})});
  if (dim == rank - 1) return x;
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    if (d != dim) perm.push_back(d);
  perm.push_back(dim);
  const std::string out = ctx.temp("rows");
  set_attr(ctx.emit("Transpose", {x}, {out}), "perm", perm);
  return out;
}

// torch's lerp: start + w (end - start) for |w| < 0.5, else end - (end - start)(1 - w).
std::string lerp(TranslateContext& ctx, const std::string& a, const std::string& b, const std::string& w, DType t) {
  const std::string diff = ctx.emit1("Sub", {b, a});
  const std::string low = ctx.emit1("Add", {a, ctx.emit1("Mul", {w, diff})});
  const std::string high = ctx.emit1("Sub", {b, ctx.emit1("Mul", {diff, ctx.emit1("Sub", {ctx.constant(1, t), w})})});
  return ctx.emit1("Where", {ctx.emit1("Less", {ctx.emit1("Abs", {w}), ctx.constant(0.5, t)}), low, high});
}

void quantile_of(TranslateContext& ctx, bool ignore_nan) {
  const DType t = ctx.output_meta().dtype;
  const int64_t rank = ctx.rank("self");
  const bool all = !ctx.has("dim"), keep = ctx.bool_arg("keepdim", false);
  const int64_t dim = all || rank == 0 ? 0 : ctx.normalized_dim(ctx.int_arg("dim", 0), rank);
  const Sorted s = sorted_rows(ctx, quantile_rows(ctx, all, dim, rank), t);
  const pt2::Argument& qa = ctx.required("q");
  const bool q_vector = qa.is_tensor() && ctx.rank("q") == 1;
  const int64_t row_rank = all || rank == 0 ? 1 : rank;
  std::string q = qa.is_tensor() ? ctx.value("q", t) : ctx.constant(qa.as_float(), t);
  std::string values = s.values;
  if (q_vector) {  // q on a new leading dim, the sorted rows repeated along it
    std::vector<int64_t> lay(static_cast<size_t>(row_rank + 1), 1);
    lay[0] = -1;
    q = ctx.emit1("Reshape", {q, i64s(ctx, lay)});
    values = ctx.emit1("Expand", {ctx.emit1("Unsqueeze", {values, i64s(ctx, {0})}),
                                  concat(ctx, {shape_of(ctx, ctx.tensor("q")), shape_of(ctx, values)}, 0)});
  }
  const std::string zero = ctx.constant(0, t);
  const std::string count = ignore_nan ? ctx.emit1("Sub", {s.n, s.nan_count}) : s.n;
  // ranks [Q?, rows..., 1] = q * (count - 1), at least 0 (an all-NaN row of nanquantile).
  // (+ 0 * nan_count: the row shape, which a row length alone does not carry)
  const std::string ranks =
      ctx.emit1("Add", {ctx.emit1("Max", {ctx.emit1("Mul", {q, ctx.emit1("Sub", {count, ctx.constant(1, t)})}), zero}),
                        ctx.emit1("Mul", {s.nan_count, zero})});
  const std::string interp = ctx.string_arg("interpolation", "linear");
  std::string lo_rank = ctx.emit1("Floor", {ranks}), hi_rank = ctx.emit1("Ceil", {ranks});
  if (interp == "lower")
    hi_rank = lo_rank;
  else if (interp == "higher")
    lo_rank = hi_rank;
  else if (interp == "nearest")
    lo_rank = hi_rank = ctx.emit1("Round", {ranks});
  else if (interp != "linear" && interp != "midpoint")
    ctx.fail("quantile: unknown interpolation '" + interp + "'");
  auto pick = [&](const std::string& r) {
    auto* g = ctx.emit("GatherElements", {values, ctx.cast_if_needed(r, t, DType::kInt64)}, {ctx.temp("picked")});
    set_attr(g, "axis", int64_t{-1});
    return g->output(0);
  };
  std::string v = pick(lo_rank);
  if (interp == "linear" || interp == "midpoint")
    v = lerp(ctx, v, pick(hi_rank), interp == "midpoint" ? ctx.constant(0.5, t) : ctx.emit1("Sub", {ranks, lo_rank}),
             t);
  const std::string nan_rows =
      ignore_nan ? ctx.emit1("Equal", {count, zero}) : ctx.emit1("Greater", {s.nan_count, zero});
  v = ctx.emit1("Where", {nan_rows, ctx.constant(std::numeric_limits<double>::quiet_NaN(), t), v});
  // v is [Q?, rows..., 1]: drop the 1, or put it where dim was (one element: a Reshape keeps the order).
  if (!keep) return (void)ctx.emit("Squeeze", {v, i64s(ctx, {q_vector ? row_rank : row_rank - 1})}, {ctx.output()});
  std::string kept;
  if (all || rank == 0) {
    kept = i64s(ctx, std::vector<int64_t>(static_cast<size_t>(rank), 1));
  } else {
    kept = ctx.emit1("ScatterElements", {shape_of(ctx, ctx.tensor("self")), i64s(ctx, {dim}), i64s(ctx, {1})});
  }
  if (q_vector) kept = concat(ctx, {i64s(ctx, {-1}), kept}, 0);
  ctx.emit("Reshape", {v, kept}, {ctx.output()});
}
void quantile(TranslateContext& ctx) { quantile_of(ctx, false); }
void nanquantile(TranslateContext& ctx) { quantile_of(ctx, true); }

// cov(self, correction, fweights?, aweights?): variables in rows (a 1-D input is one variable);
// w = fweights * aweights, mean = sum(x w) / sum(w), cov = (x - mean) w (x - mean)^T / (sum(w) -
// correction * sum(w aweights) / sum(w)) (without weights: N - correction), squeezed as torch does.
std::string covariance(TranslateContext& ctx, DType t) {
  std::string x = ctx.value("self", t);
  if (ctx.rank("self") < 2) x = ctx.emit1("Reshape", {x, i64s(ctx, {1, -1})});
  const double correction = static_cast<double>(ctx.int_arg("correction", 1));
  std::string w;
  if (ctx.has("fweights")) w = ctx.value("fweights", t);
  if (ctx.has("aweights")) w = w.empty() ? ctx.value("aweights", t) : ctx.emit1("Mul", {w, ctx.value("aweights", t)});
  std::string mean, norm;
  if (w.empty()) {
    mean = ctx.temp("mean");
    emit_reduce(ctx, "ReduceMean", x, {1}, true, mean);
    const std::string n =
        ctx.cast_if_needed(ctx.emit1("Slice", {shape_of(ctx, x), i64s(ctx, {1}), i64s(ctx, {2})}), DType::kInt64, t);
    norm = ctx.emit1("Sub", {ctx.emit1("Squeeze", {n, i64s(ctx, {0})}), ctx.constant(correction, t)});
  } else {
    const std::string wsum = ctx.temp("weight_sum"), xw = ctx.temp("weighted_sum");
    emit_reduce(ctx, "ReduceSum", w, {}, false, wsum);
    emit_reduce(ctx, "ReduceSum", ctx.emit1("Mul", {x, w}), {1}, true, xw);
    mean = ctx.emit1("Div", {xw, wsum});
    std::string corr = ctx.constant(correction, t);
    if (ctx.has("aweights")) {
      const std::string wa = ctx.temp("weighted_aweights");
      emit_reduce(ctx, "ReduceSum", ctx.emit1("Mul", {w, ctx.value("aweights", t)}), {}, false, wa);
      corr = ctx.emit1("Mul", {corr, ctx.emit1("Div", {wa, wsum})});
    }
    norm = ctx.emit1("Sub", {wsum, corr});
  }
  norm = ctx.emit1("Max", {norm, ctx.constant(0, t)});  // torch clamps a negative divisor to 0
  const std::string xm = ctx.emit1("Sub", {x, mean});
  const std::string xt = ctx.temp("centered_t");
  set_attr(ctx.emit("Transpose", {xm}, {xt}), "perm", std::vector<int64_t>{1, 0});
  const std::string lhs = w.empty() ? xm : ctx.emit1("Mul", {xm, w});
  return ctx.emit1("Div", {ctx.emit1("MatMul", {lhs, xt}), norm});
}
void cov(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const std::string c = covariance(ctx, t);
  ctx.emit("Reshape", {c, shape_of_output(ctx)}, {ctx.output()});
}

// corrcoef(self) = cov / (stddev_i stddev_j), clipped to [-1, 1]; one variable gives c / c.
void corrcoef(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const std::string c = covariance(ctx, t);
  if (ctx.rank("self") < 2 || ctx.output_meta().sizes.empty())
    return (void)ctx.emit("Reshape", {ctx.emit1("Div", {c, c}), shape_of_output(ctx)}, {ctx.output()});
  const std::string rows = ctx.emit1(
      "Range",
      {ctx.graph.constant_i64({0}, true),
       ctx.emit1("Squeeze", {ctx.emit1("Slice", {shape_of(ctx, c), i64s(ctx, {0}), i64s(ctx, {1})}), i64s(ctx, {0})}),
       ctx.graph.constant_i64({1}, true)});
  const std::string eye = ctx.emit1("Equal", {ctx.emit1("Unsqueeze", {rows, i64s(ctx, {1})}), rows});
  const std::string d = ctx.temp("variances");
  emit_reduce(ctx, "ReduceSum", ctx.emit1("Where", {eye, c, ctx.constant(0, t)}), {1}, false, d);
  const std::string sd = ctx.emit1("Sqrt", {d});
  const std::string r = ctx.emit1("Div", {ctx.emit1("Div", {c, ctx.emit1("Unsqueeze", {sd, i64s(ctx, {1})})}),
                                          ctx.emit1("Unsqueeze", {sd, i64s(ctx, {0})})});
  ctx.emit("Clip", {r, ctx.constant(-1, t), ctx.constant(1, t)}, {ctx.output()});
}

// fft_fftshift / fft_ifftshift (self, dim?): a roll by n // 2 (fftshift) or -(n // 2) along each dim.
void fft_shift(TranslateContext& ctx, bool inverse) {
  const int64_t rank = ctx.rank("self");
  std::vector<int64_t> dims = ctx.has("dim") ? ctx.ints_arg("dim") : std::vector<int64_t>{};
  if (!ctx.has("dim"))
    for (int64_t d = 0; d < rank; ++d) dims.push_back(d);
  std::string x = ctx.tensor("self");
  for (int64_t d0 : dims) {
    const int64_t d = ctx.normalized_dim(d0, rank);
    const std::string n = ctx.emit1("Slice", {shape_of(ctx, x), i64s(ctx, {d}), i64s(ctx, {d + 1})});
    // The split point: the first n - shift elements move to the end.
    const std::string half = ctx.emit1("Div", {n, i64s(ctx, {2})});
    const std::string at = inverse ? half : ctx.emit1("Sub", {n, half});
    const std::string axis = i64s(ctx, {d});
    x = concat(
        ctx, {ctx.emit1("Slice", {x, at, i64s(ctx, {kEnd}), axis}), ctx.emit1("Slice", {x, i64s(ctx, {0}), at, axis})},
        d, "shifted");
  }
  ctx.alias_output(0, dims.empty() ? ctx.emit1("Identity", {x}) : x);
}
void fft_fftshift(TranslateContext& ctx) { fft_shift(ctx, false); }
void fft_ifftshift(TranslateContext& ctx) { fft_shift(ctx, true); }

// _sobol_engine_draw(quasi, n, sobolstate, dimension, num_generated, dtype) -> (n points, the new quasi):
// draw i xors column l of sobolstate into quasi, l the lowest zero bit of num_generated + i (static), and
// emits quasi * 2^-30, as torch's SobolEngine.
void sobol_engine_draw(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const int64_t n = ctx.int_arg("n", 1), start = ctx.int_arg("num_generated", 0);
  std::string quasi = ctx.value("quasi", DType::kInt64);
  const std::string state = ctx.value("sobolstate", DType::kInt64);
  std::vector<std::string> rows;
  for (int64_t i = 0; i < n; ++i) {
    int64_t l = 0;
    for (int64_t g = start + i; g & 1; g >>= 1) ++l;
    auto* col = ctx.emit("Gather", {state, ctx.graph.constant_i64({l}, true)}, {ctx.temp("direction")});
    set_attr(col, "axis", int64_t{1});
    quasi = ctx.emit1("BitwiseXor", {quasi, col->output(0)});
    rows.push_back(ctx.emit1("Unsqueeze", {quasi, i64s(ctx, {0})}));
  }
  if (rows.empty()) ctx.fail("_sobol_engine_draw of no points");
  const std::string points = rows.size() == 1 ? rows[0] : concat(ctx, rows, 0, "points");
  ctx.emit("Mul", {ctx.cast_if_needed(points, DType::kInt64, t), ctx.constant(1.0 / (1 << 30), t)}, {ctx.output(0)});
  ctx.alias_output(1, ctx.emit1("Identity", {quasi}));
}

// special_ndtr(self) = (1 + erf(x / sqrt(2))) * 0.5, torch's composite.
void special_ndtr(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const std::string e = ctx.emit1("Erf", {ctx.emit1("Mul", {ctx.value("self", t), ctx.constant(M_SQRT1_2, t)})});
  ctx.emit("Mul", {ctx.emit1("Add", {ctx.constant(1, t), e}), ctx.constant(0.5, t)}, {ctx.output()});
}

}  // namespace

PARITY_TRANSLATION("aten::trapezoid.x", trapezoid, 18);
PARITY_TRANSLATION("aten::trapezoid.dx", trapezoid, 18);
PARITY_TRANSLATION("aten::trapz.x", trapezoid, 18);
PARITY_TRANSLATION("aten::trapz.dx", trapezoid, 18);
PARITY_TRANSLATION("aten::cumulative_trapezoid.x", cumulative_trapezoid, 18);
PARITY_TRANSLATION("aten::cumulative_trapezoid.dx", cumulative_trapezoid, 18);
PARITY_TRANSLATION("aten::gradient.scalarint", gradient, 18);
PARITY_TRANSLATION("aten::gradient.scalararray", gradient, 18);
PARITY_TRANSLATION("aten::gradient.array", gradient, 18);
PARITY_TRANSLATION("aten::gradient.scalarrayint", gradient, 18);
PARITY_TRANSLATION("aten::gradient.scalarrayarray", gradient, 18);
PARITY_TRANSLATION("aten::gradient.tensorarrayint", gradient, 18);
PARITY_TRANSLATION("aten::gradient.tensorarray", gradient, 18);
PARITY_TRANSLATION("aten::quantile.default", quantile, 18);
PARITY_TRANSLATION("aten::quantile.scalar", quantile, 18);
PARITY_TRANSLATION("aten::nanquantile.default", nanquantile, 18);
PARITY_TRANSLATION("aten::nanquantile.scalar", nanquantile, 18);
PARITY_TRANSLATION("aten::cov.default", cov, 18);
PARITY_TRANSLATION("aten::corrcoef.default", corrcoef, 18);
PARITY_TRANSLATION("aten::fft_fftshift.default", fft_fftshift, 18);
PARITY_TRANSLATION("aten::fft_ifftshift.default", fft_ifftshift, 18);
PARITY_TRANSLATION("aten::special_ndtr.default", special_ndtr, 18);
PARITY_TRANSLATION("aten::_sobol_engine_draw.default", sobol_engine_draw, 18);

}  // namespace parity::exporter
