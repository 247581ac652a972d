// Mixture-of-experts ops: transformers' own grouped matmul (transformers::grouped_mm_fallback, what it runs
// its experts with where torch's bfloat16-only _grouped_mm kernel does not apply; aten::_grouped_mm is in
// grouped_mm_det.cc), in standard ONNX; index_add (the per-token accumulation of the experts' outputs) is in
// index_along_dim.cc.
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

}  // namespace

PARITY_TRANSLATION("transformers::grouped_mm_fallback.default", transformers_grouped_mm, 18);

}  // namespace parity::exporter
