// affine_grid_generator(theta, size, align_corners) -> AffineGrid (opset 20). Both place a dim of
// size S at -1 + (2i + 1) / S, or at -1 + 2i / (S - 1) with align_corners, and apply theta to
// (x, y(, z), 1). They differ only for a dim of size 1 with align_corners (torch puts its point at 0,
// ONNX at -1): that case is refused, and so are symbolic sizes with align_corners.
#include "../src/translate.h"

namespace parity::exporter {

void affine_grid(TranslateContext& ctx) {
  const bool align = ctx.bool_arg("align_corners", false);
  if (align) {
    const std::vector<int64_t> size = ctx.ints_arg("size");
    for (size_t d = 2; d < size.size(); ++d)
      if (size[d] == 1)
        ctx.fail("AffineGrid puts a size-1 dim at -1 with align_corners, torch at 0: no exact translation");
  }
  auto* node = ctx.emit("AffineGrid", {ctx.tensor("theta"), ctx.int_list_value("size")}, {ctx.output()});
  set_attr(node, "align_corners", int64_t{align ? 1 : 0});
}

PARITY_TRANSLATION("aten::affine_grid_generator.default", affine_grid, 20);

}  // namespace parity::exporter
