// Mixture-of-experts ops: transformers' own grouped matmul (transformers::grouped_mm_fallback, what it runs
// its experts with where torch's bfloat16-only _grouped_mm kernel does not apply; aten::_grouped_mm is in
// grouped_mm_det.cc) and index_add (the per-token accumulation of the experts' outputs), in standard ONNX.
#include <string>
#include <vector>

#include "../src/translate.h"

namespace parity::exporter {
namespace {

std::string i64s(TranslateContext& ctx, std::vector<int64_t> v) { return ctx.graph.constant_i64(v); }

// Row g of a [G, ...] tensor, without its leading axis.
std::string group_slice(TranslateContext& ctx, const std::string& v, int64_t g) {
  auto* gather = ctx.emit("Gather", {v, ctx.graph.constant_i64({g}, true)}, {ctx.temp("group")});
  set_attr(gather, "axis", int64_t{0});
  return gather->output(0);
}

// grouped_mm(input [M, K], weight [G, K, N], offs [G], bias? [G, N]): rows offs[g-1]:offs[g] of
// input times weight[g] (offs are cumulative ends, rows sorted by group). Unrolled over the (static) group
// count as one Slice + MatMul per group and a Concat, so each row is one GEMM row as in torch's kernel;
// the rows past offs[G-1], which torch's kernel leaves unwritten, are zeros here.
void grouped_mm_2d_3d(TranslateContext& ctx, DType t, const char* lhs = "self", const char* rhs = "mat2") {
  const auto& groups = ctx.input_meta(rhs).sizes[0];
  if (!groups.value) ctx.fail("_grouped_mm over a symbolic number of groups is not supported");
  const std::string a = ctx.value(lhs, t), b = ctx.value(rhs, t);
  const std::string offs = ctx.value("offs", DType::kInt64);
  std::vector<std::string> parts;
  std::string start = i64s(ctx, {0});
  for (int64_t g = 0; g < *groups.value; ++g) {
    const std::string end = ctx.emit1("Slice", {offs, i64s(ctx, {g}), i64s(ctx, {g + 1})}, "group_end");
    const std::string rows = ctx.emit1("Slice", {a, start, end, i64s(ctx, {0})}, "group_rows");
    std::string y = ctx.emit1("MatMul", {rows, group_slice(ctx, b, g)}, "group_out");
    if (ctx.has("bias")) y = ctx.emit1("Add", {y, group_slice(ctx, ctx.value("bias", t), g)});
    parts.push_back(y);
    start = end;
  }
  // The tail: [M - offs[G-1], N] zeros.
  const std::string m = ctx.emit1("Slice", {shape_of(ctx, a), i64s(ctx, {0}), i64s(ctx, {1})});
  const std::string n = ctx.emit1("Slice", {shape_of(ctx, b), i64s(ctx, {2}), i64s(ctx, {3})});
  auto* tail_shape = ctx.emit("Concat", {ctx.emit1("Sub", {m, start}), n}, {ctx.temp("tail_shape")});
  set_attr(tail_shape, "axis", int64_t{0});
  parts.push_back(ctx.emit1("Expand", {ctx.constant(0, t), tail_shape->output(0)}, "tail"));
  auto* cat = ctx.emit("Concat", parts, {ctx.temp("grouped")});
  set_attr(cat, "axis", int64_t{0});
  ctx.alias_output(0, ctx.cast_if_needed(cat->output(0), t, ctx.output_meta().dtype));
}

// 16-bit operands are multiplied in float32 and rounded once at the end, as torch's CPU kernel accumulates.
DType compute_dtype(DType in) { return in == DType::kBFloat16 || in == DType::kFloat16 ? DType::kFloat32 : in; }

// transformers::grouped_mm_fallback(input, weight, offs): transformers' own op for the same product, used
// where torch's grouped_mm kernel is unavailable.
void transformers_grouped_mm(TranslateContext& ctx) {
  if (ctx.rank("input") != 2 || ctx.rank("weight") != 3)
    ctx.fail("grouped_mm_fallback expects a 2-D input and 3-D weight");
  grouped_mm_2d_3d(ctx, compute_dtype(ctx.input_meta("input").dtype), "input", "weight");
}

// index_add(self, dim, index, source, alpha=1): self[..., index[i], ...] += alpha * source[..., i, ...], as
// a ScatterND with reduction "add" on `dim` moved to the front (updates apply in index order, as torch's
// CPU loop adds them).
void index_add(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const int64_t rank = std::max<int64_t>(ctx.rank("self"), 1);
  const int64_t dim = ctx.normalized_dim(ctx.int_arg("dim", 0), rank);
  std::string self = ctx.tensor("self"), source = ctx.value("source", t);
  if (ctx.rank("self") == 0) {
    self = ctx.emit1("Reshape", {self, i64s(ctx, {1})});
    source = ctx.emit1("Reshape", {source, i64s(ctx, {1})});
  }
  if (ctx.has("alpha") && ctx.float_arg("alpha", 1.0) != 1.0)
    source = ctx.emit1("Mul", {source, ctx.value("alpha", t)});
  std::vector<int64_t> perm = {dim};
  for (int64_t d = 0; d < rank; ++d)
    if (d != dim) perm.push_back(d);
  auto front = [&](const std::string& v) {
    if (dim == 0) return v;
    auto* tr = ctx.emit("Transpose", {v}, {ctx.temp("dim_first")});
    set_attr(tr, "perm", perm);
    return tr->output(0);
  };
  const std::string idx = ctx.emit1("Reshape", {ctx.value("index", DType::kInt64), i64s(ctx, {-1, 1})});
  auto* sc = ctx.emit("ScatterND", {front(self), idx, front(source)}, {ctx.temp("index_added")});
  set_attr(sc, "reduction", std::string("add"));
  std::string y = sc->output(0);
  if (dim != 0) {
    std::vector<int64_t> inverse(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
    auto* tr = ctx.emit("Transpose", {y}, {ctx.temp("dim_back")});
    set_attr(tr, "perm", inverse);
    y = tr->output(0);
  }
  if (ctx.rank("self") == 0) y = ctx.emit1("Reshape", {y, i64s(ctx, {})});
  ctx.alias_output(0, y);
}

}  // namespace

PARITY_TRANSLATION("aten::index_add.default", index_add, 18);
PARITY_TRANSLATION("transformers::grouped_mm_fallback.default", transformers_grouped_mm, 18);

}  // namespace parity::exporter
