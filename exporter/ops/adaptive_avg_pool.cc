// adaptive_avg_pool1d / 2d / 3d and _adaptive_avg_pool2d / 3d (self, output_size), batched [N, C, ...] or
// unbatched [C, ...]: the spatial dims are the last len(output_size).
//
// Output cell i of a spatial axis of length L with o cells averages [floor(i L / o), ceil((i + 1) L / o)).
// The cells of several axes are products of such intervals, each row of a box has the same count, so the
// mean over a box is the mean over one axis of the means over the next: the pooling is separable, one axis
// at a time. Per axis: nothing when o == L (also when o is the symbol of L itself, as sym_size passes it);
// else o Slices (bounds static, or computed from the run-time Shape when L is symbolic), each ReduceMean'd,
// Concat'ed. A batched input of static sizes keeps ONNX's GlobalAveragePool / AveragePool where they are exact.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "../src/translate.h"

namespace parity::exporter {
namespace {

// Output size of one spatial axis: a static count, or "the input's own length" (a SymInt whose expression
// is the input dim's).
struct OutSize {
  std::optional<int64_t> value;
  bool same_as_input = false;
};

std::vector<OutSize> output_sizes(TranslateContext& ctx, const pt2::TensorMeta& in, size_t n) {
  const pt2::Argument& a = ctx.required("output_size");
  std::vector<OutSize> out;
  if (!a.is(pt2::ArgKind::as_sym_ints)) {
    for (int64_t v : ctx.ints_arg("output_size")) out.push_back({v, false});
    if (out.size() == 1 && n > 1) out.assign(n, out[0]);
    return out;
  }
  using Kind = pt2::schema::SymIntArgument::Kind;
  const auto& items = a.typed().as_sym_ints();
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].kind() == Kind::as_int) {
      out.push_back({items[i].as_int(), false});
      continue;
    }
    const std::string& name = items[i].as_name();
    const auto found = ctx.fx_graph.sym_int_values.find(name);
    const auto& dim = in.sizes[in.sizes.size() - items.size() + i];
    const bool same = found != ctx.fx_graph.sym_int_values.end() &&
                      found->second.kind() == pt2::schema::SymInt::Kind::as_expr && !dim.value &&
                      pt2::simplify_sym_expr(found->second.as_expr().expr_str) == dim.expr;
    if (!same)
      ctx.fail("argument 'output_size' element " + std::to_string(i) + " is the symbol " + name +
               ", not the input's own size along that dim: the number of output cells must be static (or the "
               "input's size)");
    out.push_back({std::nullopt, true});
  }
  return out;
}

// Mean over cells of one axis: o Slices between [1] int64 bounds, each ReduceMean'd, Concat'ed.
std::string pool_axis(TranslateContext& ctx, const std::string& x, int64_t axis, const std::optional<int64_t>& len,
                      int64_t o) {
  const std::string ax = ctx.graph.constant_i64({axis});
  if (o == 1) {
    const std::string m = ctx.temp("axis_mean");
    emit_reduce(ctx, "ReduceMean", x, {axis}, true, m);
    return m;
  }
  std::string length;
  if (!len) length = ctx.emit1("Slice", {shape_of(ctx, x), ax, ctx.graph.constant_i64({axis + 1})}, "length");
  const std::string cells = ctx.graph.constant_i64({o});
  // floor(i L / o) and ceil((i + 1) L / o) = floor(((i + 1) L + o - 1) / o); L, o >= 0.
  const auto bound = [&](int64_t i, bool up) {
    if (len) return ctx.graph.constant_i64({(i * *len + (up ? o - 1 : 0)) / o});
    std::string num = ctx.emit1("Mul", {length, ctx.graph.constant_i64({i})});
    if (up) num = ctx.emit1("Add", {num, ctx.graph.constant_i64({o - 1})});
    return ctx.emit1("Div", {num, cells}, up ? "end" : "start");
  };
  std::vector<std::string> means;
  for (int64_t i = 0; i < o; ++i) {
    const std::string cell = ctx.emit1("Slice", {x, bound(i, false), bound(i + 1, true), ax}, "cell");
    const std::string m = ctx.temp("cell_mean");
    emit_reduce(ctx, "ReduceMean", cell, {axis}, true, m);
    means.push_back(m);
  }
  auto* cat = ctx.emit("Concat", means, {ctx.temp("pooled")});
  set_attr(cat, "axis", axis);
  return cat->output(0);
}

void adaptive_avg_pool(TranslateContext& ctx) {
  const auto& meta = ctx.input_meta("self");
  const int64_t r = ctx.rank("self");
  const size_t listed = ctx.required("output_size").list_length();
  // adaptive_avg_pool1d's int[1] and a single value for every dim: the op's own spatial count.
  const std::string& target = ctx.node.target;
  const size_t n_op = target.find("1d") != std::string::npos ? 1 : target.find("3d") != std::string::npos ? 3 : 2;
  const size_t n = std::max(listed, n_op);
  if (static_cast<int64_t>(n) > r - 1)
    ctx.fail("input of rank " + std::to_string(r) + " has no " + std::to_string(n) + " spatial dims after a channel");
  const auto out = output_sizes(ctx, meta, n);
  if (out.size() != n)
    ctx.fail("argument 'output_size' has " + std::to_string(out.size()) + " values for " + std::to_string(n) +
             " spatial dims");
  std::vector<std::optional<int64_t>> in;
  for (size_t i = 0; i < n; ++i) in.push_back(meta.sizes[meta.sizes.size() - n + i].value);

  const bool batched = r == static_cast<int64_t>(n) + 2;
  const bool all_static = std::all_of(in.begin(), in.end(), [](const auto& v) { return v.has_value(); }) &&
                          std::all_of(out.begin(), out.end(), [](const OutSize& o) { return o.value.has_value(); });
  if (batched && all_static) {
    bool ones = true, divisible = true;
    std::vector<int64_t> k;
    for (size_t i = 0; i < n; ++i) {
      ones = ones && *out[i].value == 1;
      divisible = divisible && *out[i].value > 0 && *in[i] % *out[i].value == 0;
      if (divisible) k.push_back(*in[i] / *out[i].value);
    }
    if (ones) return (void)ctx.emit("GlobalAveragePool", {ctx.tensor("self")}, {ctx.output()});
    if (divisible) {
      auto* node = ctx.emit("AveragePool", {ctx.tensor("self")}, {ctx.output()});
      set_attr(node, "kernel_shape", k);
      set_attr(node, "strides", k);
      return;
    }
  }
  std::string x = ctx.tensor("self");
  for (size_t i = 0; i < n; ++i) {
    if (out[i].same_as_input || (in[i] && out[i].value == in[i])) continue;
    if (*out[i].value <= 0) ctx.fail("argument 'output_size' must be positive");
    x = pool_axis(ctx, x, r - static_cast<int64_t>(n) + static_cast<int64_t>(i), in[i], *out[i].value);
  }
  ctx.alias_output(0, x);
}

}  // namespace

PARITY_TRANSLATION("aten::_adaptive_avg_pool2d.default", adaptive_avg_pool, 18);
PARITY_TRANSLATION("aten::_adaptive_avg_pool3d.default", adaptive_avg_pool, 18);
PARITY_TRANSLATION("aten::adaptive_avg_pool1d.default", adaptive_avg_pool, 18);
PARITY_TRANSLATION("aten::adaptive_avg_pool2d.default", adaptive_avg_pool, 18);

}  // namespace parity::exporter
