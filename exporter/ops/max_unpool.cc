// max_unpool2d / max_unpool3d -> ScatterElements. torch's indices count positions within each (N, C)
// plane of output_size; ONNX's MaxUnpool reads them over the whole tensor of its inferred shape (and
// runtimes disagree on them when output_shape is given), so the exact translation is a scatter of each
// plane's values into a zero plane of output_size, reshaped.
#include "../src/translate.h"

namespace parity::exporter {

void max_unpool(TranslateContext& ctx) {
  const DType t = ctx.input_meta("self").dtype;
  const int64_t rank = static_cast<int64_t>(ctx.input_meta("self").sizes.size());
  const int64_t spatial = ctx.node.target.find("max_unpool3d") != std::string::npos ? 3 : 2;
  if (rank != spatial + 1 && rank != spatial + 2)
    ctx.fail("input must have rank " + std::to_string(spatial + 1) + " or " + std::to_string(spatial + 2));
  const std::string lead = slice_shape(ctx, shape_of(ctx, ctx.tensor("self")), 0, rank - spatial);
  const std::string planes = concat(ctx, {lead, ctx.graph.constant_i64({-1})}, 0, "planes");
  const std::string size = ctx.int_list_value("output_size");
  const std::string plane_numel = ctx.temp("plane_numel");
  emit_reduce(ctx, "ReduceProd", size, {0}, true, plane_numel);
  const std::string zeros =
      ctx.emit1("Expand", {ctx.constant(0, t), concat(ctx, {lead, plane_numel}, 0, "zeros_shape")});
  const std::string values = ctx.emit1("Reshape", {ctx.tensor("self"), planes});
  const std::string indices = ctx.emit1("Reshape", {ctx.tensor("indices"), planes});
  auto* scatter = ctx.emit("ScatterElements", {zeros, indices, values}, {ctx.temp("unpooled")});
  set_attr(scatter, "axis", int64_t{-1});
  ctx.emit("Reshape", {scatter->output(0), concat(ctx, {lead, size}, 0, "out_shape")}, {ctx.output()});
}

PARITY_TRANSLATION("aten::max_unpool2d.default", max_unpool, 0);
PARITY_TRANSLATION("aten::max_unpool3d.default", max_unpool, 0);

}  // namespace parity::exporter
