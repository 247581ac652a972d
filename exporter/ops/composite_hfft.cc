// torch.fft's Hermitian transforms (fft_hfft / hfft2 / hfftn, fft_ihfft / ihfft2 / ihfftn) and istft:
// CompositeImplicitAutograd, kept in a (non-strict) program. As torch's composites define them,
// ihfftn(x) = conj(rfftn(x)) with the inverse's scaling, hfftn(x) = irfftn(conj(x)) with the forward's,
// istft the windowed inverse transforms of the frames overlapped and added (Col2Im) and divided by the
// overlapped squared window, stft.center a padded stft (and chalf, to complex32 pairs): ONNX DFTs on the
// complex pair layout (see translate.h), static sizes.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "complex_pairs.h"

namespace parity::exporter {
namespace {
using namespace complex_pairs;

std::string i64s(TranslateContext& ctx, std::vector<int64_t> v) { return ctx.graph.constant_i64(v); }

// The transformed dims (normalised) and the signal size of each: s[i] when given, else the input's (for
// the last dim of a half spectrum 2 * (bins - 1)); nullopt where that is symbolic.
struct Signal {
  std::vector<int64_t> dims;
  Sizes sizes;
};
Signal signal_of(TranslateContext& ctx, const pt2::TensorMeta& in, bool half_spectrum) {
  const int64_t rank = rank_of(in);
  const std::string& target = ctx.node.target;
  const bool multi = target.find("hfft2") != std::string::npos || target.find("hfftn") != std::string::npos;
  std::vector<int64_t> dims, s;
  if (!multi) {
    dims = {ctx.int_arg("dim", -1)};
    if (ctx.has("n")) s = {ctx.int_arg("n", 0)};
  } else {
    if (ctx.has("s")) s = ctx.ints_arg("s");
    if (ctx.has("dim"))
      dims = ctx.ints_arg("dim");
    else if (target.find("hfft2") != std::string::npos)
      dims = {-2, -1};
    else
      for (int64_t i = s.empty() ? 0 : rank - static_cast<int64_t>(s.size()); i < rank; ++i) dims.push_back(i);
  }
  if (!s.empty() && s.size() != dims.size()) ctx.fail("s and dim have different lengths");
  Signal sig;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = ctx.normalized_dim(dims[i], rank);
    const auto& have = in.sizes[static_cast<size_t>(d)].value;
    const bool last = i + 1 == dims.size();
    std::optional<int64_t> size = have && half_spectrum && last ? std::optional<int64_t>(2 * (*have - 1)) : have;
    if (!s.empty() && s[i] != -1) size = s[i];
    if (size && *size < 1) ctx.fail("signal size " + std::to_string(*size) + " must be >= 1");
    sig.dims.push_back(d);
    sig.sizes.push_back(size);
  }
  if (sig.dims.empty()) ctx.fail("no dims to transform");
  return sig;
}

// torch's `norm` as the power p of N (the product of the signal sizes) that ihfft divides by and hfft
// multiplies by after ONNX's inverse DFT (which divides by N): backward 1, ortho 1/2, forward 0.
double norm_power(TranslateContext& ctx) {
  const std::string norm = ctx.has("norm") ? ctx.string_arg("norm", "backward") : "backward";
  if (norm == "ortho") return 0.5;
  if (norm == "backward") return 1.0;
  if (norm == "forward") return 0.0;
  ctx.fail("norm '" + norm + "' is not backward, forward or ortho");
}

std::string conj(TranslateContext& ctx, const std::string& x, DType t) {
  Tensor sign(t == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32, {2});
  if (t == DType::kFloat64) {
    sign.data<double>()[0] = 1, sign.data<double>()[1] = -1;
  } else {
    sign.data<float>()[0] = 1, sign.data<float>()[1] = -1;
  }
  const std::string name = ctx.graph.unique_name(ctx.node.name + "_conj");
  ctx.graph.add_initializer(name, sign);
  return ctx.emit1("Mul", {x, name});
}

// ihfft / ihfft2 / ihfftn (real self): conj of the onesided forward transform, times N^-power (N read from the
// shape at run time where a transformed dim is symbolic).
void fft_ihfft(TranslateContext& ctx) {
  const auto& in = ctx.input_meta("self");
  if (is_complex(in)) ctx.fail("ihfft of a complex tensor is not translated");
  const DType t = part_dtype(ctx, ctx.output_meta());
  const Signal sig = signal_of(ctx, in, false);
  std::string x = ctx.value("self", t);
  const Sizes have = sizes_at(in, sig.dims);
  for (size_t i = 0; i < sig.dims.size(); ++i)
    if (sig.sizes[i]) x = resize(ctx, x, rank_of(in), false, sig.dims[i], have[i], *sig.sizes[i]);
  std::string y = dft(ctx, ctx.emit1("Unsqueeze", {x, i64s(ctx, {-1})}), sig.dims.back(), false, true);
  for (size_t i = 0; i + 1 < sig.dims.size(); ++i) y = dft(ctx, y, sig.dims[i], false, false);
  scale(ctx, conj(ctx, y, t), t, sig.sizes, x, sig.dims, -norm_power(ctx), ctx.output());
}

// The real signal of n samples whose half spectrum (pair layout) lies along `axis`: bins above n/2 are the
// conjugates of bins 1.. (as torch's c2r reads them), inverse DFT (divided by n), real part.
std::string half_spectrum_to_real(TranslateContext& ctx, const std::string& x, int64_t axis, int64_t n, DType t) {
  const int64_t half = n / 2 + 1;
  std::string full = x;
  if (n - half > 0) {
    const std::string mirror =
        ctx.emit1("Slice", {x, i64s(ctx, {n - half}), i64s(ctx, {0}), i64s(ctx, {axis}), i64s(ctx, {-1})});
    full = concat(ctx, {x, conj(ctx, mirror, t)}, axis, "hermitian");
  }
  return part(ctx, dft(ctx, full, axis, true, false), 0);
}

// hfft / hfft2 / hfftn (complex self): conj(x), inverse DFTs along the other dims, then the real signal of
// n samples from the half spectrum along the last dim (bins above n/2 are the conjugates of bins 1..),
// times N^power (ONNX's inverse DFT already divided by N). Symbolic dims: the sizes are read at run time.
void fft_hfft(TranslateContext& ctx) {
  const auto& in = ctx.input_meta("self");
  const DType t = ctx.output_meta().dtype;
  const int64_t rank = rank_of(in);
  const Signal sig = signal_of(ctx, in, true);
  std::string x = conj(ctx, complex_operand(ctx, "self", t), t);
  const Sizes have = sizes_at(in, sig.dims);
  const size_t last = sig.dims.size() - 1;
  for (size_t i = 0; i < last; ++i)
    if (sig.sizes[i]) x = resize(ctx, x, rank, true, sig.dims[i], have[i], *sig.sizes[i]);
  const std::optional<int64_t> n = sig.sizes[last];
  std::string n_value;
  if (n)
    x = resize(ctx, x, rank, true, sig.dims[last], have[last], *n / 2 + 1);
  else  // the default n = 2 * (bins - 1) of a symbolic bin count
    n_value =
        ctx.emit1("Mul", {ctx.emit1("Sub", {dim_size(ctx, x, sig.dims[last]), i64s(ctx, {1})}), i64s(ctx, {2})}, "n");
  for (size_t i = 0; i < last; ++i) x = dft(ctx, x, sig.dims[i], true, false);
  const std::string y =
      n ? half_spectrum_to_real(ctx, x, sig.dims[last], *n, t) : c2r(ctx, x, rank + 1, sig.dims[last], n, n_value);
  scale(ctx, y, t, sig.sizes, y, sig.dims, norm_power(ctx), ctx.output());
}

// Overlap-add of frames [B, T, n] at stride `hop` into [B, len] (ONNX Col2Im on a 1 x len image).
std::string overlap_add(TranslateContext& ctx, const std::string& frames, int64_t n, int64_t hop, int64_t len) {
  const std::string cols = ctx.temp("columns");
  set_attr(ctx.emit("Transpose", {frames}, {cols}), "perm", std::vector<int64_t>{0, 2, 1});
  auto* c = ctx.emit("Col2Im", {cols, i64s(ctx, {1, len}), i64s(ctx, {1, n})}, {ctx.temp("overlapped")});
  set_attr(c, "strides", std::vector<int64_t>{1, hop});
  return ctx.emit1("Reshape", {c->output(0), i64s(ctx, {0, len})});
}

// istft(self [B?, F, T] complex, n_fft, hop_length, win_length, window, center, normalized, onesided, length,
// return_complex=False).
void istft(TranslateContext& ctx) {
  if (ctx.bool_arg("return_complex", false)) ctx.fail("istft with return_complex=True is not translated");
  const auto& in = ctx.input_meta("self");
  const DType t = ctx.output_meta().dtype;
  const int64_t rank = rank_of(in), n = ctx.int_arg("n_fft", 0);
  if (rank != 2 && rank != 3) ctx.fail("istft needs a 2-D or 3-D input");
  const auto& bins = in.sizes[static_cast<size_t>(rank - 2)].value;
  const auto& frames = in.sizes[static_cast<size_t>(rank - 1)].value;
  if (!bins || !frames) ctx.fail("istft needs static frequency and frame counts");
  const int64_t hop = ctx.optional_int("hop_length").value_or(n / 4), win = ctx.optional_int("win_length").value_or(n);
  const int64_t len = n + hop * (*frames - 1);
  std::string x = ctx.tensor("self");
  if (rank == 2) x = ctx.emit1("Unsqueeze", {x, i64s(ctx, {0})});
  const std::string spec = ctx.temp("frames_first");  // [B, T, F, 2]
  set_attr(ctx.emit("Transpose", {x}, {spec}), "perm", std::vector<int64_t>{0, 2, 1, 3});
  const std::string sliced = ctx.emit1("Slice", {spec, i64s(ctx, {0}), i64s(ctx, {n / 2 + 1}), i64s(ctx, {2})});
  std::string y =
      half_spectrum_to_real(ctx, resize(ctx, sliced, 3, true, 2, std::min(*bins, n / 2 + 1), n / 2 + 1), 2, n, t);
  if (ctx.bool_arg("normalized", false)) y = ctx.emit1("Mul", {y, ctx.constant(std::sqrt(static_cast<double>(n)), t)});
  std::string window =
      ctx.has("window") ? ctx.value("window", t) : ctx.emit1("Expand", {ctx.constant(1, t), i64s(ctx, {win})});
  if (win != n) window = ctx.emit1("Pad", {window, i64s(ctx, {(n - win) / 2, n - win - (n - win) / 2})});
  y = overlap_add(ctx, ctx.emit1("Mul", {y, window}), n, hop, len);
  const std::string w2 = ctx.emit1("Expand", {ctx.emit1("Mul", {window, window}), i64s(ctx, {1, *frames, n})});
  const std::string envelope = overlap_add(ctx, w2, n, hop, len);
  const int64_t start = ctx.bool_arg("center", true) ? n / 2 : 0;
  int64_t end = ctx.bool_arg("center", true) ? len - n / 2 : len;
  if (ctx.has("length")) end = start + ctx.int_arg("length", 0);
  const int64_t stop = std::min(end, len);
  auto cut = [&](const std::string& v) {
    return ctx.emit1("Slice", {v, i64s(ctx, {start}), i64s(ctx, {stop}), i64s(ctx, {1})});
  };
  std::string out = ctx.emit1("Div", {cut(y), cut(envelope)});
  if (end > len) out = ctx.emit1("Pad", {out, i64s(ctx, {0, 0, 0, end - len})});
  if (rank == 2) out = ctx.emit1("Squeeze", {out, i64s(ctx, {0})});
  ctx.alias_output(0, out);
}

// stft.center(self, n_fft, hop_length, win_length, window, center, pad_mode, normalized, onesided,
// return_complex, align_to_window): the signal padded by n_fft / 2 on both ends of its last dim (torch's
// pad_mode: reflect, constant, replicate, circular) when center, then aten::stft.default's own translation
// run on the padded signal (its arguments are this node's, less center and pad_mode).
void stft_center(TranslateContext& ctx) {
  const std::string self_fx = ctx.required("self").tensor_name();
  const std::string x = ctx.tensor("self");
  std::string padded = x;
  if (ctx.bool_arg("center", true)) {
    const int64_t half = ctx.int_arg("n_fft", 0) / 2, rank = ctx.rank("self");
    const std::string mode = ctx.string_arg("pad_mode", "reflect");
    if (mode == "circular") {
      const std::string axis = i64s(ctx, {-1});
      padded =
          concat(ctx,
                 {ctx.emit1("Slice", {x, i64s(ctx, {-half}), i64s(ctx, {std::numeric_limits<int64_t>::max()}), axis}),
                  x, ctx.emit1("Slice", {x, i64s(ctx, {0}), i64s(ctx, {half}), axis})},
                 -1, "circular");
    } else {
      std::vector<int64_t> pads(static_cast<size_t>(2 * rank), 0);
      pads[static_cast<size_t>(rank - 1)] = pads[static_cast<size_t>(2 * rank - 1)] = half;
      const std::string onnx_mode = mode == "reflect"     ? "reflect"
                                    : mode == "replicate" ? "edge"
                                    : mode == "constant"  ? "constant"
                                                          : "";
      if (onnx_mode.empty()) ctx.fail("stft: unknown pad_mode '" + mode + "'");
      auto* pad = ctx.emit("Pad", {x, i64s(ctx, pads)}, {ctx.temp("centered")});
      set_attr(pad, "mode", onnx_mode);
      padded = pad->output(0);
    }
  }
  const auto stft = find_translation("aten::stft.default", ctx.opset);
  if (!stft || !stft->fn) ctx.fail("aten::stft.default has no translation at this opset");
  // The stft translation reads `self` through the value map: point it at the padded signal for the call.
  auto& values = ctx.values();
  const std::string saved = values.at(self_fx);
  values[self_fx] = padded;
  stft->fn(ctx);
  values[self_fx] = saved;
}

// chalf(self): complex32 (float16 pairs): a real input becomes the real part, a complex one is rounded.
void chalf(TranslateContext& ctx) {
  const auto& in = ctx.input_meta("self");
  if (is_complex(in))
    return ctx.alias_output(0, ctx.cast_if_needed(ctx.tensor("self"), part_dtype(ctx, in), DType::kFloat16));
  ctx.alias_output(0, real_to_pair(ctx, ctx.value("self", DType::kFloat16), rank_of(in)));
}

}  // namespace

PARITY_COMPLEX_TRANSLATION("aten::fft_ihfft.default", fft_ihfft, 17);
PARITY_COMPLEX_TRANSLATION("aten::fft_ihfft2.default", fft_ihfft, 17);
PARITY_COMPLEX_TRANSLATION("aten::fft_ihfftn.default", fft_ihfft, 17);
PARITY_COMPLEX_TRANSLATION("aten::fft_hfft.default", fft_hfft, 17);
PARITY_COMPLEX_TRANSLATION("aten::fft_hfft2.default", fft_hfft, 17);
PARITY_COMPLEX_TRANSLATION("aten::fft_hfftn.default", fft_hfft, 17);
PARITY_TRANSLATION("aten::fft_hfft.default", fft_hfft, 17);  // a real half spectrum
PARITY_TRANSLATION("aten::fft_hfft2.default", fft_hfft, 17);
PARITY_TRANSLATION("aten::fft_hfftn.default", fft_hfft, 17);
PARITY_COMPLEX_TRANSLATION("aten::istft.default", istft, 18);
PARITY_COMPLEX_TRANSLATION("aten::stft.center", stft_center, 17);
PARITY_TRANSLATION("aten::stft.center", stft_center, 17);
PARITY_COMPLEX_TRANSLATION("aten::chalf.default", chalf, 17);  // return_complex=False: the pairs are the real output

}  // namespace parity::exporter
