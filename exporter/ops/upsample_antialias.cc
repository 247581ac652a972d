// Antialiased bilinear/bicubic resizing -> two MatMuls with weight matrices computed at export time.
// ONNX Resize's antialias=1 does not reproduce torch's weights when downscaling (its window bounds and
// normalisation differ), so the [out, in] matrices of torch's separable CPU kernel are built here instead:
// per output index a window around center = scale (i + 0.5), taps filter((j - center + 0.5) / max(scale, 1)),
// normalised to sum 1, computed in float32 as torch does for float inputs.
#include <algorithm>
#include <cmath>

#include "../src/translate.h"

namespace parity::exporter {
namespace {

float triangle(float x) {
  x = std::fabs(x);
  return x < 1.0f ? 1.0f - x : 0.0f;
}
// Keys' cubic with a = -0.5 (PIL's), which torch's antialiased bicubic uses.
float keys_cubic(float x) {
  constexpr float a = -0.5f;
  x = std::fabs(x);
  if (x < 1.0f) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2.0f) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0.0f;
}

// The [out, in] resampling matrix of one axis.
Tensor aa_weights(int64_t in, int64_t out, float scale, bool cubic) {
  const float interp = cubic ? 4.0f : 2.0f;
  const float support = scale >= 1.0f ? interp * 0.5f * scale : interp * 0.5f;
  const float invscale = scale >= 1.0f ? 1.0f / scale : 1.0f;
  const auto max_taps = static_cast<int64_t>(std::ceil(support)) * 2 + 1;
  Tensor w(DType::kFloat32, {out, in}, true);
  float* m = w.data<float>();
  for (int64_t i = 0; i < out; ++i) {
    const float center = scale * (static_cast<float>(i) + 0.5f);
    const int64_t xmin = std::max(static_cast<int64_t>(center - support + 0.5f), int64_t{0});
    const int64_t xsize =
        std::clamp(std::min(static_cast<int64_t>(center + support + 0.5f), in) - xmin, int64_t{0}, max_taps);
    float total = 0.0f;
    std::vector<float> taps(static_cast<size_t>(xsize));
    for (int64_t j = 0; j < xsize; ++j) {
      const float x = (static_cast<float>(j + xmin) - center + 0.5f) * invscale;
      taps[static_cast<size_t>(j)] = cubic ? keys_cubic(x) : triangle(x);
      total += taps[static_cast<size_t>(j)];
    }
    for (int64_t j = 0; j < xsize; ++j)
      m[i * in + xmin + j] = total != 0.0f ? taps[static_cast<size_t>(j)] / total : 0.0f;
  }
  return w;
}

// _upsample_{bilinear,bicubic}2d_aa(.default: self, output_size, align_corners, scales_h?, scales_w?;
// .vec: input, output_size?, align_corners, scale_factors?) on static spatial sizes.
void upsample_aa(TranslateContext& ctx, bool cubic) {
  const bool vec = ctx.arg("input") != nullptr;
  const std::string name = vec ? "input" : "self";
  if (ctx.bool_arg("align_corners", false)) ctx.fail("antialiased resizing with align_corners=True is not supported");
  const auto& in = ctx.input_meta(name);
  const auto& out = ctx.output_meta();
  if (in.sizes.size() != 4) ctx.fail("antialiased resizing needs a 4-d input");
  int64_t sizes_in[2], sizes_out[2];
  for (int i = 0; i < 2; ++i) {
    const auto& a = in.sizes[static_cast<size_t>(2 + i)];
    const auto& b = out.sizes[static_cast<size_t>(2 + i)];
    if (!a.value || !b.value) ctx.fail("antialiased resizing needs static spatial sizes");
    sizes_in[i] = *a.value;
    sizes_out[i] = *b.value;
  }
  // An explicit scale factor s maps coordinates by 1 / s; otherwise in / out.
  std::vector<double> given;
  if (vec && ctx.has("scale_factors")) given = ctx.required("scale_factors").as_floats();
  if (!vec && ctx.has("scales_h") && ctx.has("scales_w"))
    given = {ctx.float_arg("scales_h", 1.0), ctx.float_arg("scales_w", 1.0)};
  std::string y = ctx.cast_if_needed(ctx.tensor(name), in.dtype, DType::kFloat32);
  for (int axis = 1; axis >= 0; --axis) {  // width first, as torch's kernel
    const float scale = given.size() == 2 ? static_cast<float>(1.0 / given[static_cast<size_t>(axis)])
                                          : static_cast<float>(sizes_in[axis]) / static_cast<float>(sizes_out[axis]);
    const std::string wname = ctx.graph.unique_name(ctx.node.name + (axis == 1 ? "_weights_w" : "_weights_h"));
    ctx.graph.add_initializer(wname, aa_weights(sizes_in[axis], sizes_out[axis], scale, cubic));
    if (axis == 1) {
      auto* t = ctx.emit("Transpose", {wname}, {ctx.temp("weights_w_t")});
      set_attr(t, "perm", std::vector<int64_t>{1, 0});
      y = ctx.emit1("MatMul", {y, t->output(0)});  // [N, C, H, out_w]
    } else {
      y = ctx.emit1("MatMul", {wname, y});  // [N, C, out_h, out_w]
    }
  }
  ctx.alias_output(0, ctx.cast_if_needed(y, DType::kFloat32, out.dtype));
}
void upsample_bilinear_aa(TranslateContext& ctx) { upsample_aa(ctx, false); }
void upsample_bicubic_aa(TranslateContext& ctx) { upsample_aa(ctx, true); }

}  // namespace

PARITY_TRANSLATION("aten::_upsample_bilinear2d_aa.default", upsample_bilinear_aa, 18);
PARITY_TRANSLATION("aten::_upsample_bilinear2d_aa.vec", upsample_bilinear_aa, 18);
PARITY_TRANSLATION("aten::_upsample_bicubic2d_aa.default", upsample_bicubic_aa, 18);
PARITY_TRANSLATION("aten::_upsample_bicubic2d_aa.vec", upsample_bicubic_aa, 18);

}  // namespace parity::exporter
