// _grouped_mm, and determinants -> ONNX without Det (refrt lacks it): LU factorisation with partial pivoting, unrolled
// over the static matrix size, in LAPACK's getrf layout (packed L\U, 1-based int32 pivots) so that _linalg_det's LU and
// pivots outputs match torch's too.
#include <cmath>
#include <limits>

#include "../src/translate.h"

namespace parity::exporter {
namespace {

struct Lu {
  std::string lu;                   // [..., n, n] packed factors
  std::vector<std::string> pivots;  // per step: [..., 1] int64 row chosen (0-based)
  std::string det;                  // [...]
  std::string sign;                 // [...] +-1 of the row permutation
  std::vector<std::string> diag;    // per step: [...] U[k, k]
};

Lu lu_factor(TranslateContext& ctx, const std::string& a_name, bool transposed = false) {
  const auto& meta = ctx.input_meta(a_name);
  const int64_t rank = static_cast<int64_t>(meta.sizes.size());
  if (rank < 2) ctx.fail("a determinant needs a [..., n, n] input");
  const auto& nd = meta.sizes[static_cast<size_t>(rank - 1)];
  if (!nd.value) ctx.fail("the matrix size must be static");
  const int64_t n = *nd.value;
  const DType t = meta.dtype;
  if (!dtype_is_floating(t)) ctx.fail("determinants need a floating-point input");
  auto c = [&](std::vector<int64_t> v, bool scalar = false) { return ctx.graph.constant_i64(v, scalar); };
  std::string a = ctx.tensor(a_name);
  if (transposed) a = transpose_last_two(ctx, a, rank, "transposed");
  const std::string rows = ctx.emit1("Range", {c({0}, true), c({n}, true), c({1}, true)});  // [n]
  const std::string rows_col = ctx.emit1("Unsqueeze", {rows, c({1})});                      // [n, 1]
  Lu out;
  std::string sign = ctx.constant(1, t), det;
  for (int64_t k = 0; k < n; ++k) {
    // Pivot: the largest |A[i, k]| for i >= k (the first one on ties, as LAPACK's i?amax).
    auto* col = ctx.emit("Gather", {a, c({k}, true)}, {ctx.temp("column")});
    set_attr(col, "axis", int64_t{-1});
    const std::string below = ctx.emit1("Slice", {col->output(0), c({k}), c({n}), c({-1})});
    auto* am = ctx.emit("ArgMax", {ctx.emit1("Abs", {below})}, {ctx.temp("argmax")});
    set_attr(am, "axis", int64_t{-1});
    set_attr(am, "keepdims", int64_t{1});
    const std::string p = ctx.emit1("Add", {am->output(0), c({k}, true)});  // [..., 1]
    out.pivots.push_back(p);
    // Swap rows k and p: gather rows through the permutation k <-> p.
    const std::string kk = c({k}, true);
    const std::string perm =
        ctx.emit1("Where", {ctx.emit1("Equal", {rows, kk}), p,
                            ctx.emit1("Where", {ctx.emit1("Equal", {rows, p}), kk, rows})});  // [..., n]
    const std::string idx = ctx.emit1("Expand", {ctx.emit1("Unsqueeze", {perm, c({-1})}), shape_of(ctx, a)});
    auto* sw = ctx.emit("GatherElements", {a, idx}, {ctx.temp("swapped")});
    set_attr(sw, "axis", int64_t{-2});
    a = sw->output(0);
    const std::string swapped = ctx.emit1("Squeeze", {ctx.emit1("Equal", {p, kk}), c({-1})});
    sign = ctx.emit1("Where", {swapped, sign, ctx.emit1("Neg", {sign})});
    // Eliminate below the pivot; the multipliers are stored where the zeros would be.
    auto* prow = ctx.emit("Gather", {a, c({k})}, {ctx.temp("pivot_row")});
    set_attr(prow, "axis", int64_t{-2});  // [..., 1, n]
    auto* pk = ctx.emit("Gather", {prow->output(0), c({k})}, {ctx.temp("pivot")});
    set_attr(pk, "axis", int64_t{-1});  // [..., 1, 1]
    const std::string pivot = pk->output(0);
    out.diag.push_back(ctx.emit1("Squeeze", {pivot, c({-2, -1})}));
    det = det.empty() ? out.diag.back() : ctx.emit1("Mul", {det, out.diag.back()});
    if (k == n - 1) break;
    const std::string zero = ctx.constant(0, t);
    const std::string safe = ctx.emit1("Where", {ctx.emit1("Equal", {pivot, zero}), ctx.constant(1, t), pivot});
    auto* colk = ctx.emit("Gather", {a, c({k})}, {ctx.temp("col_k")});
    set_attr(colk, "axis", int64_t{-1});                                // [..., n, 1]
    const std::string is_below = ctx.emit1("Greater", {rows_col, kk});  // [n, 1]
    const std::string f = ctx.emit1("Where", {is_below, ctx.emit1("Div", {colk->output(0), safe}), zero});
    // Only columns right of k: the columns left of it hold the multipliers of earlier steps.
    const std::string right = ctx.emit1("Greater", {ctx.emit1("Unsqueeze", {rows, c({0})}), kk});  // [1, n]
    const std::string urow = ctx.emit1("Where", {right, prow->output(0), zero});
    const std::string elim = ctx.emit1("Sub", {a, ctx.emit1("Mul", {f, urow})});
    const std::string at_k =
        ctx.emit1("And", {is_below, ctx.emit1("Equal", {ctx.emit1("Unsqueeze", {rows, c({0})}), kk})});  // [n, n]
    a = ctx.emit1("Where", {at_k, f, elim});
  }
  out.lu = a;
  out.sign = sign;
  out.det = ctx.emit1("Mul", {det, sign});
  return out;
}

void det(TranslateContext& ctx) { ctx.alias_output(0, lu_factor(ctx, ctx.arg("A") ? "A" : "self").det); }

// _linalg_det(A) -> (det, LU, pivots): torch factors A^T (a row-major A is a column-major A^T for LAPACK;
// det(A^T) = det(A)); pivots are 1-based like LAPACK's.
void linalg_det_full(TranslateContext& ctx) {
  const Lu lu = lu_factor(ctx, "A", true);
  ctx.alias_output(0, lu.det);
  ctx.alias_output(1, lu.lu);
  auto* cat = ctx.emit("Concat", lu.pivots, {ctx.temp("pivots")});
  set_attr(cat, "axis", int64_t{-1});
  const std::string one_based = ctx.emit1("Add", {cat->output(0), ctx.graph.constant_i64({1}, true)});
  ctx.alias_output(2, ctx.cast_if_needed(one_based, DType::kInt64, ctx.output_dtype(2)));
}

// logdet(self) = sum log|U[k, k]| when the determinant is positive, NaN when negative, -inf when zero.
void logdet(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const Lu lu = lu_factor(ctx, "self");
  std::string s;
  for (const auto& d : lu.diag) {
    const std::string l = ctx.emit1("Log", {ctx.emit1("Abs", {d})});
    s = s.empty() ? l : ctx.emit1("Add", {s, l});
  }
  const std::string negative = ctx.emit1("Less", {lu.det, ctx.constant(0, t)});
  ctx.emit("Where", {negative, ctx.constant(std::numeric_limits<double>::quiet_NaN(), t), s}, {ctx.output()});
}

// _grouped_mm(self, mat2, offs?, bias?, out_dtype?) (mixture-of-experts matmuls; torch's CPU kernel takes
// bfloat16). Without offs a batched matmul. With offs (cumulative group ends) group(p) = the number of ends
// <= p, and: 2-d x 3-d: row i of self uses mat2[group(i)]; 3-d x 2-d: column n of mat2 uses self[group(n)];
// 2-d x 2-d: out[g] = self[:, K_g] @ mat2[K_g, :] over the shared dim's group. Computed in float32: every
// group's product, then each row's (column's) own picked with GatherElements.
void grouped_mm(TranslateContext& ctx) {
  const DType f = DType::kFloat32;
  if (ctx.has("bias")) ctx.fail("_grouped_mm with a bias is not supported");
  auto c = [&](std::vector<int64_t> v, bool scalar = false) { return ctx.graph.constant_i64(v, scalar); };
  const std::string a = ctx.value("self", f), b = ctx.value("mat2", f);
  const int64_t ra = ctx.rank("self"), rb = ctx.rank("mat2");
  std::string y;
  if (!ctx.has("offs")) {
    y = ctx.emit1("MatMul", {a, b});
  } else {
    const std::string ends = ctx.value("offs", DType::kInt64);  // [G]
    const std::string groups = ctx.emit1("Gather", {shape_of(ctx, ends), c({0}, true)});
    auto range_dim = [&](const std::string& v, int64_t axis) {
      return ctx.emit1("Range", {c({0}, true), ctx.emit1("Gather", {shape_of(ctx, v), c({axis}, true)}), c({1}, true)});
    };
    auto group_of = [&](const std::string& positions) {  // [P] -> [P], clamped to the last group
      const std::string le = ctx.emit1(
          "LessOrEqual", {ctx.emit1("Unsqueeze", {ends, c({0})}), ctx.emit1("Unsqueeze", {positions, c({1})})});
      const std::string g = ctx.temp("group");
      emit_reduce(ctx, "ReduceSum", ctx.cast_if_needed(le, DType::kBool, DType::kInt64), {1}, false, g);
      return ctx.emit1("Min", {g, ctx.emit1("Sub", {groups, c({1}, true)})});
    };
    auto pick = [&](const std::string& all, const std::string& g_axes) {  // all [G, M, N], g_axes [1, M|1, N|1]
      auto* shape = ctx.emit("Concat", {c({1}), ctx.emit1("Slice", {shape_of(ctx, all), c({1}), c({3})})},
                             {ctx.temp("pick_shape")});
      set_attr(shape, "axis", int64_t{0});
      auto* ge =
          ctx.emit("GatherElements", {all, ctx.emit1("Expand", {g_axes, shape->output(0)})}, {ctx.temp("picked")});
      set_attr(ge, "axis", int64_t{0});
      return ctx.emit1("Squeeze", {ge->output(0), c({0})});
    };
    if (ra == 2 && rb == 3) {
      const std::string all = ctx.emit1("MatMul", {ctx.emit1("Unsqueeze", {a, c({0})}), b});
      y = pick(all, ctx.emit1("Unsqueeze", {group_of(range_dim(a, 0)), c({0, 2})}));
    } else if (ra == 3 && rb == 2) {
      const std::string all = ctx.emit1("MatMul", {a, b});
      y = pick(all, ctx.emit1("Unsqueeze", {group_of(range_dim(b, 1)), c({0, 1})}));
    } else if (ra == 2 && rb == 2) {
      const std::string gk = group_of(range_dim(a, 1));  // [K]
      const std::string mask = ctx.emit1(
          "Equal", {ctx.emit1("Unsqueeze", {ctx.emit1("Range", {c({0}, true), groups, c({1}, true)}), c({1})}),
                    ctx.emit1("Unsqueeze", {gk, c({0})})});  // [G, K]
      const std::string masked =
          ctx.emit1("Mul", {ctx.emit1("Unsqueeze", {a, c({0})}),
                            ctx.emit1("Unsqueeze", {ctx.cast_if_needed(mask, DType::kBool, f), c({1})})});
      y = ctx.emit1("MatMul", {masked, b});
    } else {
      ctx.fail("_grouped_mm with offs needs 2-d/3-d operands");
    }
  }
  ctx.alias_output(0, ctx.cast_if_needed(y, f, ctx.output_meta().dtype));
}

}  // namespace

PARITY_TRANSLATION("aten::det.default", det, 18);
PARITY_TRANSLATION("aten::linalg_det.default", det, 18);
PARITY_TRANSLATION("aten::_linalg_det.default", linalg_det_full, 18);
PARITY_TRANSLATION("aten::logdet.default", logdet, 18);
PARITY_TRANSLATION("aten::_grouped_mm.default", grouped_mm, 18);

}  // namespace parity::exporter
