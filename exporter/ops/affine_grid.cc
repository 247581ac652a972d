// affine_grid_generator(theta, size, align_corners): AffineGrid from opset 20, and before it the same grid
// from basic ops. Both place a dim of size S at -1 + (2i + 1) / S, or at -1 + 2i / (S - 1) with
// align_corners, and apply theta to (x, y(, z), 1). They differ only for a dim of size 1 with
// align_corners (torch puts its point at 0, ONNX at -1): that case is refused, and so are symbolic sizes
// with align_corners.
#include "../src/translate.h"

namespace parity::exporter {
namespace {

void refuse_size_one_with_align(TranslateContext& ctx, bool align) {
  if (!align) return;
  const std::vector<int64_t> size = ctx.ints_arg("size");
  for (size_t d = 2; d < size.size(); ++d)
    if (size[d] == 1)
      ctx.fail("AffineGrid puts a size-1 dim at -1 with align_corners, torch at 0: no exact translation");
}

// The normalised coordinates of a dim of size `s` (rank-0 int64 value), as a 1-D value of dtype t.
std::string coordinates(TranslateContext& ctx, const std::string& s, bool align, DType t) {
  const std::string i = ctx.cast_if_needed(
      ctx.emit1("Range", {ctx.graph.constant_i64({0}, true), s, ctx.graph.constant_i64({1}, true)}), DType::kInt64, t);
  const std::string n = ctx.cast_if_needed(s, DType::kInt64, t);
  const std::string one = ctx.constant(1, t), two = ctx.constant(2, t);
  const std::string scaled = align ? ctx.emit1("Div", {ctx.emit1("Mul", {i, two}), ctx.emit1("Sub", {n, one})})
                                   : ctx.emit1("Div", {ctx.emit1("Add", {ctx.emit1("Mul", {i, two}), one}), n});
  return ctx.emit1("Sub", {scaled, one});
}

}  // namespace

void affine_grid(TranslateContext& ctx) {
  const bool align = ctx.bool_arg("align_corners", false);
  refuse_size_one_with_align(ctx, align);
  auto* node = ctx.emit("AffineGrid", {ctx.tensor("theta"), ctx.int_list_value("size")}, {ctx.output()});
  set_attr(node, "align_corners", int64_t{align ? 1 : 0});
}

// Before opset 20: base points [(D,) H, W, dims + 1] of (x, y(, z), 1), x along the last dim, flattened
// to [P, dims + 1] and multiplied by theta^T [N, dims + 1, dims] into [N, P, dims], as torch computes it.
void affine_grid_from_ops(TranslateContext& ctx) {
  const bool align = ctx.bool_arg("align_corners", false);
  refuse_size_one_with_align(ctx, align);
  const DType t = ctx.output_meta().dtype;
  const int64_t dims = static_cast<int64_t>(ctx.output_meta().sizes.size()) - 2;
  if (dims != 2 && dims != 3)
    ctx.fail("affine_grid needs a 4-D or 5-D size, got " + std::to_string(dims + 2) + " values");
  const std::string size = ctx.int_list_value("size");
  const std::string spatial = slice_shape(ctx, size, 2, dims + 2);
  std::vector<std::string> parts(static_cast<size_t>(dims) + 1);
  for (int64_t a = 0; a < dims; ++a) {  // spatial axis a: (D,) H, W; its coordinate is component dims - 1 - a
    std::vector<int64_t> others;
    for (int64_t b = 0; b < dims; ++b)
      if (b != a) others.push_back(b);
    others.push_back(dims);  // the trailing component axis
    const std::string c = coordinates(ctx, element(ctx, size, a + 2), align, t);
    const std::string placed = ctx.emit1("Unsqueeze", {c, ctx.graph.constant_i64(others)});
    parts[static_cast<size_t>(dims - 1 - a)] = placed;
  }
  std::vector<int64_t> all(static_cast<size_t>(dims) + 1);
  for (int64_t b = 0; b <= dims; ++b) all[static_cast<size_t>(b)] = b;
  parts.back() = ctx.emit1("Unsqueeze", {ctx.constant(1, t), ctx.graph.constant_i64(all)});
  const std::string target = concat(ctx, {spatial, ctx.graph.constant_i64({1})}, 0, "points_shape");
  for (auto& p : parts) p = ctx.emit1("Expand", {p, target});
  const std::string base =
      ctx.emit1("Reshape", {concat(ctx, parts, -1, "base"), ctx.graph.constant_i64({-1, dims + 1})});
  std::vector<int64_t> perm{0, 2, 1};
  auto* tr = ctx.emit("Transpose", {ctx.tensor("theta")}, {ctx.temp("theta_t")});
  set_attr(tr, "perm", perm);
  const std::string points = ctx.emit1("MatMul", {base, tr->output(0)});  // [N, P, dims]
  const std::string batch = slice_shape(ctx, size, 0, 1);
  const std::string out_shape = concat(ctx, {batch, spatial, ctx.graph.constant_i64({dims})}, 0, "grid_shape");
  ctx.emit("Reshape", {points, out_shape}, {ctx.output()});
}

PARITY_TRANSLATION("aten::affine_grid_generator.default", affine_grid_from_ops, 0);
PARITY_TRANSLATION("aten::affine_grid_generator.default", affine_grid, 20);

}  // namespace parity::exporter
