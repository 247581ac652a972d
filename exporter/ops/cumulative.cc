// Cumulative products: cumprod as a masked [n, n] ReduceProd, so zeros and negative values give exactly
// torch's signs (a cumulative sum of logarithms loses both).
#include "../src/translate.h"

namespace parity::exporter {
namespace {

// out[..., i, ...] = prod(x[..., j, ...] for j <= i): x gains an axis j after `dim`, masked to 1 where j > i.
// With x cast to the output dtype first, integers wrap exactly as torch's int64 product does.
void cumprod(TranslateContext& ctx) {
  const DType t = ctx.output_meta().dtype;
  const int64_t rank = ctx.rank("self");
  const std::string x = ctx.value("self", t);
  if (rank == 0) return ctx.alias_output(0, x);
  const int64_t dim = ctx.normalized_dim(ctx.int_arg("dim", 0), rank);
  const std::string zero = ctx.graph.constant_i64({0}, true), one = ctx.graph.constant_i64({1}, true);
  const std::string n = ctx.emit1("Gather", {shape_of(ctx, x), ctx.graph.constant_i64({dim}, true)});
  const std::string j = ctx.emit1("Range", {zero, n, one});
  const std::string i = ctx.emit1("Unsqueeze", {j, ctx.graph.constant_i64({1})});
  std::vector<int64_t> mask_shape = {0, 0};  // [n (i), n (j), 1 per dim after `dim`]
  for (int64_t d = dim + 1; d < rank; ++d) mask_shape.push_back(1);
  const std::string keep =
      ctx.emit1("Reshape", {ctx.emit1("LessOrEqual", {j, i}), ctx.graph.constant_i64(mask_shape)}, "mask");
  const std::string xs = ctx.emit1("Unsqueeze", {x, ctx.graph.constant_i64({dim})});  // j at dim + 1
  const std::string masked = ctx.emit1("Where", {keep, xs, ctx.constant(1, t)});
  emit_reduce(ctx, "ReduceProd", masked, {dim + 1}, false, ctx.output());
}

}  // namespace

PARITY_TRANSLATION("aten::cumprod.default", cumprod, 18);

}  // namespace parity::exporter
