// unique ATen ops -> ONNX without the Unique op (refrt lacks it): rows compared pairwise, so values, sorted
// order, inverse indices and counts all come from [n, n] comparisons (quadratic in the element count).
#include <limits>

#include "../src/translate.h"

namespace parity::exporter {
namespace {

std::string i64(TranslateContext& ctx, const std::vector<int64_t>& v, bool scalar = false) {
  return ctx.graph.constant_i64(v, scalar);
}
std::string to_i64(TranslateContext& ctx, const std::string& b) {
  return ctx.cast_if_needed(b, DType::kBool, DType::kInt64);
}
std::string reduce(TranslateContext& ctx, const std::string& op, const std::string& x, std::vector<int64_t> axes,
                   bool keep = false) {
  const std::string out = ctx.temp(op);
  emit_reduce(ctx, op, x, axes, keep, out);
  return out;
}
std::string empty_i64(TranslateContext& ctx) { return ctx.emit1("Expand", {i64(ctx, {0}, true), i64(ctx, {0})}); }

struct UniqueRows {
  std::string order;    // [K] index of the first occurrence of each distinct row, in ascending row order
  std::string inverse;  // [n] rank of each row among the distinct rows
  std::string counts;   // [K] occurrences of each distinct row
};

// Distinct rows of x [n, D] in lexicographic order. Row i < row j when, at the first column where they
// differ, x[i] < x[j]: "all columns before are equal" is an exclusive CumSum of the inequalities being 0.
UniqueRows unique_rows(TranslateContext& ctx, const std::string& x) {
  const std::string a = ctx.emit1("Unsqueeze", {x, i64(ctx, {1})}), b = ctx.emit1("Unsqueeze", {x, i64(ctx, {0})});
  const std::string eq = ctx.emit1("Equal", {a, b});  // [n, n, D]
  auto* before =
      ctx.emit("CumSum", {to_i64(ctx, ctx.emit1("Not", {eq})), i64(ctx, {2}, true)}, {ctx.temp("differs_before")});
  set_attr(before, "exclusive", int64_t{1});
  const std::string decides =
      ctx.emit1("And", {ctx.emit1("Less", {a, b}), ctx.emit1("Equal", {before->output(0), i64(ctx, {0}, true)})});
  const std::string less = reduce(ctx, "ReduceMax", to_i64(ctx, decides), {2});  // [n, n]: row i < row j
  const std::string same = reduce(ctx, "ReduceMin", to_i64(ctx, eq), {2});       // [n, n]: row i == row j
  const std::string n = ctx.emit1("Gather", {shape_of(ctx, x), i64(ctx, {0}, true)});
  const std::string idx = ctx.emit1("Range", {i64(ctx, {0}, true), n, i64(ctx, {1}, true)});
  const std::string earlier =
      to_i64(ctx, ctx.emit1("Less", {ctx.emit1("Unsqueeze", {idx, i64(ctx, {1})}), idx}));  // k < j
  const std::string dup =
      reduce(ctx, "ReduceMax", ctx.emit1("Mul", {same, earlier}), {0});    // an equal row comes earlier
  const std::string first = ctx.emit1("Sub", {i64(ctx, {1}, true), dup});  // [n] 0/1
  UniqueRows u;
  u.inverse = reduce(ctx, "ReduceSum", ctx.emit1("Mul", {ctx.emit1("Unsqueeze", {first, i64(ctx, {1})}), less}), {0});
  // The first occurrences sorted by rank: TopK(smallest K) of rank, pushed past n for repeated rows.
  const std::string keys = ctx.emit1("Add", {u.inverse, ctx.emit1("Mul", {dup, n})});
  const std::string k = ctx.emit1("Reshape", {reduce(ctx, "ReduceSum", first, {}), i64(ctx, {1})});
  auto* top = ctx.emit("TopK", {keys, k}, {ctx.temp("ranks"), ctx.temp("order")});
  set_attr(top, "largest", int64_t{0});
  set_attr(top, "axis", int64_t{0});
  u.order = top->output(1);
  auto* g = ctx.emit("Gather", {same, u.order}, {ctx.temp("same_rows")});
  set_attr(g, "axis", int64_t{0});
  u.counts = reduce(ctx, "ReduceSum", g->output(0), {1});
  return u;
}

// _unique(self, sorted, return_inverse) / _unique2(self, sorted, return_inverse, return_counts): the distinct
// elements, ascending (torch's CPU kernel sorts even for sorted=False); unrequested outputs are empty.
void unique_flat(TranslateContext& ctx) {
  const std::string x = ctx.tensor("self");
  const UniqueRows u = unique_rows(ctx, ctx.emit1("Reshape", {x, i64(ctx, {-1, 1})}));
  const std::string flat = ctx.emit1("Reshape", {x, i64(ctx, {-1})});
  ctx.emit("Gather", {flat, u.order}, {ctx.output(0)});
  if (ctx.bool_arg("return_inverse", false))
    ctx.emit("Reshape", {u.inverse, shape_of(ctx, x)}, {ctx.output(1)});
  else
    ctx.alias_output(1, empty_i64(ctx));
  if (ctx.output_count() < 3) return;
  if (ctx.bool_arg("return_counts", false))
    ctx.alias_output(2, u.counts);
  else
    ctx.alias_output(2, empty_i64(ctx));
}

// unique_dim(self, dim, sorted, return_inverse, return_counts): distinct slices along dim, in lexicographic
// order; torch returns inverse and counts whatever the flags say.
void unique_dim(TranslateContext& ctx) {
  const int64_t rank = ctx.rank("self");
  const int64_t dim = ctx.normalized_dim(ctx.int_arg("dim", 0), rank);
  std::vector<int64_t> perm = {dim};
  for (int64_t i = 0; i < rank; ++i)
    if (i != dim) perm.push_back(i);
  auto* tr = ctx.emit("Transpose", {ctx.tensor("self")}, {ctx.temp("dim_first")});
  set_attr(tr, "perm", perm);
  const std::string moved = tr->output(0);
  const UniqueRows u = unique_rows(ctx, ctx.emit1("Reshape", {moved, i64(ctx, {0, -1})}));
  auto* g = ctx.emit("Gather", {moved, u.order}, {ctx.temp("slices")});
  set_attr(g, "axis", int64_t{0});
  std::vector<int64_t> back(static_cast<size_t>(rank));
  for (int64_t i = 0; i < rank; ++i) back[static_cast<size_t>(perm[static_cast<size_t>(i)])] = i;
  set_attr(ctx.emit("Transpose", {g->output(0)}, {ctx.output(0)}), "perm", back);
  ctx.alias_output(1, u.inverse);
  ctx.alias_output(2, u.counts);
}

// Runs of equal neighbours among the n items of `items` (a flat tensor, or rows [n, D]): the items where
// a run starts ([n] bool) and their positions ([K] int64).
struct Runs {
  std::string starts;
  std::string positions;
};
Runs consecutive_runs(TranslateContext& ctx, const std::string& items, bool rows) {
  const std::string end = i64(ctx, {std::numeric_limits<int64_t>::max()});
  const std::string prev = ctx.emit1("Slice", {items, i64(ctx, {0}), i64(ctx, {-1})});
  const std::string next = ctx.emit1("Slice", {items, i64(ctx, {1}), end});
  std::string differs = ctx.emit1("Not", {ctx.emit1("Equal", {next, prev})});
  // Rows differ when any column does (ReduceMax of an empty row is the lowest int64: equal rows).
  if (rows) differs = ctx.emit1("Greater", {reduce(ctx, "ReduceMax", to_i64(ctx, differs), {1}), i64(ctx, {0}, true)});
  const std::string first = ctx.emit1("Expand", {ctx.constant(1, DType::kBool), i64(ctx, {1})});
  auto* starts = ctx.emit("Concat", {first, differs}, {ctx.temp("run_starts")});
  set_attr(starts, "axis", int64_t{0});
  // n items: 1 + (n - 1) flags, cut back to n so that an empty input gives no run.
  const std::string n = ctx.emit1("Slice", {shape_of(ctx, items), i64(ctx, {0}), i64(ctx, {1})});
  Runs r;
  r.starts = ctx.emit1("Slice", {starts->output(0), i64(ctx, {0}), n});
  r.positions = ctx.emit1("Reshape", {ctx.emit1("Transpose", {ctx.emit1("NonZero", {r.starts})}), i64(ctx, {-1})});
  return r;
}
// Run number of each item ([n]) and run lengths ([K]) into `out`.
void run_inverse(TranslateContext& ctx, const Runs& r, const std::string& out) {
  auto* cs = ctx.emit("CumSum", {to_i64(ctx, r.starts), i64(ctx, {0}, true)}, {ctx.temp("run")});
  ctx.emit("Sub", {cs->output(0), i64(ctx, {1}, true)}, {out});
}
void run_counts(TranslateContext& ctx, const Runs& r, const std::string& out) {
  const std::string end = i64(ctx, {std::numeric_limits<int64_t>::max()});
  auto* ends = ctx.emit("Concat", {ctx.emit1("Slice", {r.positions, i64(ctx, {1}), end}), shape_of(ctx, r.starts)},
                        {ctx.temp("run_ends")});
  set_attr(ends, "axis", int64_t{0});
  ctx.emit("Sub", {ends->output(0), r.positions}, {out});
}

// unique_consecutive(self, return_inverse, return_counts, dim=None): runs of equal neighbours collapse to
// one element: of the flattened input without a dim (unrequested outputs empty), of the slices along dim
// with one (inverse [size(dim)] and counts returned whatever the flags say, as torch does).
void unique_consecutive(TranslateContext& ctx) {
  const std::string x = ctx.tensor("self");
  if (ctx.has("dim")) {
    const int64_t rank = ctx.rank("self");
    const int64_t dim = ctx.normalized_dim(ctx.int_arg("dim", 0), rank);
    std::vector<int64_t> perm = {dim};
    for (int64_t i = 0; i < rank; ++i)
      if (i != dim) perm.push_back(i);
    auto* tr = ctx.emit("Transpose", {x}, {ctx.temp("dim_first")});
    set_attr(tr, "perm", perm);
    const Runs r = consecutive_runs(ctx, ctx.emit1("Reshape", {tr->output(0), i64(ctx, {0, -1})}), true);
    auto* g = ctx.emit("Gather", {tr->output(0), r.positions}, {ctx.temp("slices")});
    set_attr(g, "axis", int64_t{0});
    std::vector<int64_t> back(static_cast<size_t>(rank));
    for (int64_t i = 0; i < rank; ++i) back[static_cast<size_t>(perm[static_cast<size_t>(i)])] = i;
    set_attr(ctx.emit("Transpose", {g->output(0)}, {ctx.output(0)}), "perm", back);
    run_inverse(ctx, r, ctx.output(1));
    run_counts(ctx, r, ctx.output(2));
    return;
  }
  const std::string flat = ctx.emit1("Reshape", {x, i64(ctx, {-1})});
  const Runs r = consecutive_runs(ctx, flat, false);
  ctx.emit("Gather", {flat, r.positions}, {ctx.output(0)});
  if (ctx.bool_arg("return_inverse", false)) {
    const std::string run = ctx.temp("run_index");
    run_inverse(ctx, r, run);
    ctx.emit("Reshape", {run, shape_of(ctx, x)}, {ctx.output(1)});
  } else {
    ctx.alias_output(1, empty_i64(ctx));
  }
  if (ctx.bool_arg("return_counts", false))
    run_counts(ctx, r, ctx.output(2));
  else
    ctx.alias_output(2, empty_i64(ctx));
}

}  // namespace

PARITY_TRANSLATION("aten::_unique.default", unique_flat, 18);
PARITY_TRANSLATION("aten::_unique2.default", unique_flat, 18);
PARITY_TRANSLATION("aten::unique_dim.default", unique_dim, 18);
PARITY_TRANSLATION("aten::unique_consecutive.default", unique_consecutive, 18);

}  // namespace parity::exporter
