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

// The same [out, in] matrix built at run time, for a spatial dim of symbolic size: `in_len`, `out_len` are
// 0-d int64 values, `scale` a 0-d float32 one. Every step is the float32 arithmetic of aa_weights, in the same
// order, on [out, 1] x [1, in] grids: tap (i, j) counts when xmin(i) <= j < xmin(i) + xsize(i).
std::string aa_weights_at_run_time(TranslateContext& ctx, const std::string& in_len, const std::string& out_len,
                                   const std::string& scale, bool cubic) {
  const DType f = DType::kFloat32;
  const auto c = [&](double v) { return ctx.constant(v, f); };
  const auto range = [&](const std::string& n, const std::vector<int64_t>& shape) {
    const std::string r =
        ctx.emit1("Range", {ctx.constant(0, DType::kInt64), n, ctx.constant(1, DType::kInt64)}, "index");
    return ctx.emit1("Reshape", {r, ctx.graph.constant_i64(shape)});
  };
  const std::string i = ctx.cast_if_needed(range(out_len, {-1, 1}), DType::kInt64, f);
  const std::string j_int = range(in_len, {1, -1});
  const std::string j = ctx.cast_if_needed(j_int, DType::kInt64, f);
  const std::string interp = c(cubic ? 4.0 : 2.0);
  const std::string up = ctx.emit1("GreaterOrEqual", {scale, c(1.0)});
  const std::string half = ctx.emit1("Mul", {interp, c(0.5)});
  const std::string support = ctx.emit1("Where", {up, ctx.emit1("Mul", {half, scale}), half}, "support");
  const std::string invscale = ctx.emit1("Where", {up, ctx.emit1("Div", {c(1.0), scale}), c(1.0)}, "invscale");
  const std::string max_taps =
      ctx.emit1("Add", {ctx.emit1("Mul", {ctx.cast_if_needed(ctx.emit1("Ceil", {support}), f, DType::kInt64),
                                          ctx.constant(2, DType::kInt64)}),
                        ctx.constant(1, DType::kInt64)});
  const std::string center = ctx.emit1("Mul", {scale, ctx.emit1("Add", {i, c(0.5)})}, "center");
  // static_cast<int64_t> truncates toward zero: a float -> int64 Cast does the same.
  const auto trunc = [&](const std::string& v) { return ctx.cast_if_needed(v, f, DType::kInt64); };
  const std::string lo = trunc(ctx.emit1("Add", {ctx.emit1("Sub", {center, support}), c(0.5)}));
  const std::string xmin = ctx.emit1("Max", {lo, ctx.constant(0, DType::kInt64)}, "xmin");
  const std::string hi =
      ctx.emit1("Min", {trunc(ctx.emit1("Add", {ctx.emit1("Add", {center, support}), c(0.5)})), in_len});
  const std::string xsize = ctx.emit1(
      "Min", {ctx.emit1("Max", {ctx.emit1("Sub", {hi, xmin}), ctx.constant(0, DType::kInt64)}), max_taps}, "xsize");
  const std::string inside = ctx.emit1(
      "And", {ctx.emit1("GreaterOrEqual", {j_int, xmin}), ctx.emit1("Less", {j_int, ctx.emit1("Add", {xmin, xsize})})});
  const std::string x = ctx.emit1("Mul", {ctx.emit1("Add", {ctx.emit1("Sub", {j, center}), c(0.5)}), invscale});
  const std::string ax = ctx.emit1("Abs", {x});
  std::string tap;
  if (cubic) {  // Keys' cubic, a = -0.5
    const double a = -0.5;
    const std::string near = ctx.emit1(
        "Add",
        {ctx.emit1("Mul", {ctx.emit1("Mul", {ctx.emit1("Sub", {ctx.emit1("Mul", {c(a + 2), ax}), c(a + 3)}), ax}), ax}),
         c(1.0)});
    const std::string far = ctx.emit1(
        "Sub",
        {ctx.emit1(
             "Mul",
             {ctx.emit1("Add",
                        {ctx.emit1("Mul", {ctx.emit1("Sub", {ctx.emit1("Mul", {c(a), ax}), c(5 * a)}), ax}), c(8 * a)}),
              ax}),
         c(4 * a)});
    tap = ctx.emit1("Where", {ctx.emit1("Less", {ax, c(1.0)}), near,
                              ctx.emit1("Where", {ctx.emit1("Less", {ax, c(2.0)}), far, c(0.0)})});
  } else {
    tap = ctx.emit1("Where", {ctx.emit1("Less", {ax, c(1.0)}), ctx.emit1("Sub", {c(1.0), ax}), c(0.0)});
  }
  tap = ctx.emit1("Where", {inside, tap, c(0.0)}, "taps");
  const std::string total = ctx.temp("total");
  emit_reduce(ctx, "ReduceSum", tap, {1}, true, total);
  const std::string safe = ctx.emit1("Where", {ctx.emit1("Equal", {total, c(0.0)}), c(1.0), total});
  return ctx.emit1("Div", {tap, safe}, "weights");
}

// _upsample_{bilinear,bicubic}2d_aa(.default: self, output_size, align_corners, scales_h?, scales_w?;
// .vec: input, output_size?, align_corners, scale_factors?): weights from export time on static spatial sizes,
// built at run time on symbolic ones.
void upsample_aa(TranslateContext& ctx, bool cubic) {
  const bool vec = ctx.arg("input") != nullptr;
  const std::string name = vec ? "input" : "self";
  if (ctx.bool_arg("align_corners", false)) ctx.fail("antialiased resizing with align_corners=True is not supported");
  const auto& in = ctx.input_meta(name);
  const auto& out = ctx.output_meta();
  if (in.sizes.size() != 4) ctx.fail("antialiased resizing needs a 4-d input");
  int64_t sizes_in[2], sizes_out[2];
  bool symbolic = false;
  for (int i = 0; i < 2; ++i) {
    const auto& a = in.sizes[static_cast<size_t>(2 + i)];
    const auto& b = out.sizes[static_cast<size_t>(2 + i)];
    symbolic = symbolic || !a.value || !b.value;
    sizes_in[i] = a.value.value_or(-1);
    sizes_out[i] = b.value.value_or(-1);
  }
  // An explicit scale factor s maps coordinates by 1 / s; otherwise in / out.
  std::vector<double> given;
  if (vec && ctx.has("scale_factors")) given = ctx.required("scale_factors").as_floats();
  if (!vec && ctx.has("scales_h") && ctx.has("scales_w"))
    given = {ctx.float_arg("scales_h", 1.0), ctx.float_arg("scales_w", 1.0)};
  std::string y = ctx.cast_if_needed(ctx.tensor(name), in.dtype, DType::kFloat32);
  // Symbolic sizes: the lengths from the run-time Shape; the output's from output_size when given, else
  // floor(in * scale_factor) in double (torch's rule).
  const std::string shape = symbolic ? shape_of(ctx, y) : "";
  const std::string out_list = symbolic && ctx.has("output_size") ? ctx.int_list_value("output_size") : std::string();
  for (int axis = 1; axis >= 0; --axis) {  // width first, as torch's kernel
    std::string wname;
    if (symbolic) {
      const std::string in_len = element(ctx, shape, 2 + axis);
      std::string out_len;
      if (!out_list.empty()) {
        out_len = element(ctx, out_list, axis);
      } else if (given.size() == 2) {
        const std::string scaled =
            ctx.emit1("Floor", {ctx.emit1("Mul", {ctx.cast_if_needed(in_len, DType::kInt64, DType::kFloat64),
                                                  ctx.constant(given[static_cast<size_t>(axis)], DType::kFloat64)})});
        out_len = ctx.cast_if_needed(scaled, DType::kFloat64, DType::kInt64);
      } else {
        ctx.fail("antialiased resizing of a symbolic size needs output_size or scale_factors");
      }
      const std::string scale =
          given.size() == 2 ? ctx.constant(static_cast<float>(1.0 / given[static_cast<size_t>(axis)]), DType::kFloat32)
                            : ctx.emit1("Div", {ctx.cast_if_needed(in_len, DType::kInt64, DType::kFloat32),
                                                ctx.cast_if_needed(out_len, DType::kInt64, DType::kFloat32)});
      wname = aa_weights_at_run_time(ctx, in_len, out_len, scale, cubic);
    } else {
      const float scale = given.size() == 2 ? static_cast<float>(1.0 / given[static_cast<size_t>(axis)])
                                            : static_cast<float>(sizes_in[axis]) / static_cast<float>(sizes_out[axis]);
      wname = ctx.graph.unique_name(ctx.node.name + (axis == 1 ? "_weights_w" : "_weights_h"));
      ctx.graph.add_initializer(wname, aa_weights(sizes_in[axis], sizes_out[axis], scale, cubic));
    }
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
