// Complex tensors and torch.fft / torch.stft -> ONNX DFT / STFT.
// A complex value is a real tensor with a trailing dim of 2 (real, imaginary): DFT's own layout (see
// translate.h). torch's `normalization` of _fft_r2c / _fft_c2c / _fft_c2r multiplies by 1 (0), 1/sqrt(n)
// (1) or 1/n (2), n being the product of the signal sizes; ONNX's DFT never scales a forward transform and
// always divides an inverse one by n, so inverse transforms are multiplied back.
#include <cmath>
#include <optional>

#include "complex_pairs.h"

namespace parity::exporter {
namespace {
using namespace complex_pairs;

std::vector<int64_t> normalized_dims(TranslateContext& ctx, std::vector<int64_t> dims, int64_t rank) {
  for (auto& d : dims) d = ctx.normalized_dim(d, rank);
  return dims;
}

// torch's fft_norm_mode (0 none, 1 by 1/sqrt(n), 2 by 1/n) as a power of n, for a forward or an inverse
// ONNX DFT (which already divided by n).
double norm_power(TranslateContext& ctx, int64_t mode, bool inverse) {
  if (mode < 0 || mode > 2) ctx.fail("normalization " + std::to_string(mode) + " is not 0, 1 or 2");
  const double forward = mode == 0 ? 0.0 : mode == 1 ? -0.5 : -1.0;
  return inverse ? forward + 1.0 : forward;
}

// The string `norm` of torch.fft.* as an fft_norm_mode.
int64_t norm_mode(TranslateContext& ctx, bool inverse) {
  const std::string norm = ctx.has("norm") ? ctx.string_arg("norm", "backward") : "backward";
  if (norm == "backward") return inverse ? 2 : 0;
  if (norm == "forward") return inverse ? 0 : 2;
  if (norm == "ortho") return 1;
  ctx.fail("norm '" + norm + "' is not backward, forward or ortho");
}

// r2c: DFT of a real value along `dims`, the last one first (onesided there when asked), unscaled.
std::string r2c_raw(TranslateContext& ctx, const std::string& x, const std::vector<int64_t>& dims, bool onesided) {
  std::string y = dft(ctx, ctx.emit1("Unsqueeze", {x, ctx.graph.constant_i64({-1})}), dims.back(), false, onesided);
  for (size_t i = 0; i + 1 < dims.size(); ++i) y = dft(ctx, y, dims[i], false, false);
  return y;
}

std::string c2c_raw(TranslateContext& ctx, const std::string& x, const std::vector<int64_t>& dims, bool inverse) {
  std::string y = x;
  for (int64_t d : dims) y = dft(ctx, y, d, inverse, false);
  return y;
}

// --- the ATen FFT primitives (what run_decompositions leaves) ---

void fft_r2c(TranslateContext& ctx) {
  const auto& in = ctx.input_meta("self");
  const auto dims = normalized_dims(ctx, ctx.ints_arg("dim"), rank_of(in));
  if (dims.empty()) ctx.fail("no dims to transform");
  const DType t = part_dtype(ctx, ctx.output_meta());
  const std::string y = r2c_raw(ctx, ctx.tensor("self"), dims, ctx.bool_arg("onesided", true));
  scale(ctx, y, t, sizes_at(in, dims), ctx.tensor("self"), dims,
        norm_power(ctx, ctx.int_arg("normalization", 0), false), ctx.output());
}

void fft_c2c(TranslateContext& ctx) {
  const auto& in = ctx.input_meta("self");
  const auto dims = normalized_dims(ctx, ctx.ints_arg("dim"), rank_of(in));
  const bool inverse = !ctx.bool_arg("forward", true);
  const DType t = part_dtype(ctx, in);
  const std::string y = c2c_raw(ctx, ctx.tensor("self"), dims, inverse);
  scale(ctx, y, t, sizes_at(in, dims), ctx.tensor("self"), dims,
        norm_power(ctx, ctx.int_arg("normalization", 0), inverse), ctx.output());
}

// last_dim_size may be symbolic (a decomposed irfft of a dynamic spectrum: 2 * (bins - 1)).
void fft_c2r(TranslateContext& ctx) {
  const auto& in = ctx.input_meta("self");
  const auto& out = ctx.output_meta();
  const int64_t rank = rank_of(in);
  const auto dims = normalized_dims(ctx, ctx.ints_arg("dim"), rank);
  if (dims.empty()) ctx.fail("no dims to transform");
  const pt2::Argument& size = ctx.required("last_dim_size");
  std::optional<int64_t> n;
  std::string n_value;
  if (size.is_symbolic_scalar()) {
    n_value = unsqueeze0(ctx, ctx.int_value("last_dim_size"));
  } else {
    n = ctx.int_arg("last_dim_size", 0);
    const auto& bins = in.sizes[static_cast<size_t>(dims.back())];
    if (*n < 1 || (bins.value && *bins.value < *n / 2 + 1))
      ctx.fail("needs a half spectrum of at least last_dim_size / 2 + 1 = " + std::to_string(*n / 2 + 1) +
               " bins along dim " + std::to_string(dims.back()));
    // A symbolic bin count is cut or padded to n / 2 + 1 at run time.
    if (!bins.value) n_value = ctx.graph.constant_i64({*n}), n.reset();
  }
  std::string y = c2c_raw(ctx, ctx.tensor("self"), {dims.begin(), dims.end() - 1}, true);
  y = c2r(ctx, y, rank + 1, dims.back(), n, n_value);
  scale(ctx, y, out.dtype, sizes_at(out, dims), y, dims, norm_power(ctx, ctx.int_arg("normalization", 0), true),
        ctx.output());
}

// --- torch.fft.* as strict and non-strict programs hold them ---

// The signal dims and requested sizes of fft_<x>(self, n, dim, norm), fft_<x>2 / fft_<x>n(self, s, dim, norm).
struct Signal {
  std::vector<int64_t> dims;
  Sizes sizes;  // requested size per dim (nullopt: keep the input's)
};

Signal signal_of(TranslateContext& ctx, int64_t rank) {
  Signal sig;
  if (ctx.arg("s") || ctx.node.target.find("fftn") != std::string::npos ||
      ctx.node.target.find("fft2") != std::string::npos) {
    const bool has_s = ctx.has("s");
    const std::vector<int64_t> s = has_s ? ctx.ints_arg("s") : std::vector<int64_t>{};
    std::vector<int64_t> dims;
    if (ctx.has("dim"))
      dims = ctx.ints_arg("dim");
    else if (ctx.node.target.find("fft2") != std::string::npos)
      dims = {-2, -1};
    else if (has_s)
      for (int64_t i = rank - static_cast<int64_t>(s.size()); i < rank; ++i) dims.push_back(i);
    else
      for (int64_t i = 0; i < rank; ++i) dims.push_back(i);
    if (has_s && s.size() != dims.size()) ctx.fail("s and dim have different lengths");
    sig.dims = normalized_dims(ctx, dims, rank);
    for (size_t i = 0; i < sig.dims.size(); ++i)
      sig.sizes.push_back(has_s && s[i] != -1 ? std::optional<int64_t>(s[i]) : std::nullopt);
  } else {
    sig.dims = {ctx.normalized_dim(ctx.int_arg("dim", -1), rank)};
    sig.sizes = {ctx.optional_int("n")};
  }
  if (sig.dims.empty()) ctx.fail("no dims to transform");
  return sig;
}

// rfft / rfft2 / rfftn: a real signal, onesided along its last dim.
void fft_rfft(TranslateContext& ctx) {
  const auto& in = ctx.input_meta("self");
  if (is_complex(in)) ctx.fail("rfft of a complex tensor");
  const Signal sig = signal_of(ctx, rank_of(in));
  std::string x = ctx.tensor("self");
  Sizes n = sizes_at(in, sig.dims);
  for (size_t i = 0; i < sig.dims.size(); ++i)
    if (sig.sizes[i]) x = resize(ctx, x, rank_of(in), false, sig.dims[i], n[i], *sig.sizes[i]), n[i] = sig.sizes[i];
  const std::string y = r2c_raw(ctx, x, sig.dims, true);
  scale(ctx, y, part_dtype(ctx, ctx.output_meta()), n, x, sig.dims, norm_power(ctx, norm_mode(ctx, false), false),
        ctx.output());
}

// fft / ifft (and their 2 / n forms): complex to complex; a real signal is made complex first.
void fft_c2c_of(TranslateContext& ctx, bool inverse) {
  const auto& in = ctx.input_meta("self");
  const int64_t rank = rank_of(in);
  const DType t = part_dtype(ctx, ctx.output_meta());
  const Signal sig = signal_of(ctx, rank);
  std::string x = complex_operand(ctx, "self", t);
  Sizes n = sizes_at(in, sig.dims);
  for (size_t i = 0; i < sig.dims.size(); ++i)
    if (sig.sizes[i]) x = resize(ctx, x, rank, true, sig.dims[i], n[i], *sig.sizes[i]), n[i] = sig.sizes[i];
  const std::string y = c2c_raw(ctx, x, sig.dims, inverse);
  scale(ctx, y, t, n, x, sig.dims, norm_power(ctx, norm_mode(ctx, inverse), inverse), ctx.output());
}
void fft_fft(TranslateContext& ctx) { fft_c2c_of(ctx, false); }
void fft_ifft(TranslateContext& ctx) { fft_c2c_of(ctx, true); }

// irfft / irfft2 / irfftn: the last dim is a half spectrum of n = s[-1] (default 2 * (bins - 1), computed at
// run time when the bin count is symbolic) samples.
void fft_irfft(TranslateContext& ctx) {
  const auto& in = ctx.input_meta("self");
  const auto& out = ctx.output_meta();
  const int64_t rank = rank_of(in);
  const Signal sig = signal_of(ctx, rank);
  std::string x = complex_operand(ctx, "self", out.dtype);
  const Sizes have = sizes_at(in, sig.dims);
  const size_t last = sig.dims.size() - 1;
  Sizes sizes = have;
  for (size_t i = 0; i < last; ++i)
    if (sig.sizes[i]) x = resize(ctx, x, rank, true, sig.dims[i], have[i], *sig.sizes[i]), sizes[i] = sig.sizes[i];
  std::optional<int64_t> n = sig.sizes[last];
  if (!n && have[last]) n = 2 * (*have[last] - 1);
  std::string n_value;
  if (n) {
    x = resize(ctx, x, rank, true, sig.dims[last], have[last], *n / 2 + 1);
  } else {
    const std::string bins = dim_size(ctx, x, sig.dims[last]);
    n_value =
        ctx.emit1("Mul", {ctx.emit1("Sub", {bins, ctx.graph.constant_i64({1})}), ctx.graph.constant_i64({2})}, "n");
  }
  sizes[last] = n;
  std::string y = c2c_raw(ctx, x, {sig.dims.begin(), sig.dims.end() - 1}, true);
  y = c2r(ctx, y, rank + 1, sig.dims[last], n, n_value);
  scale(ctx, y, out.dtype, sizes, y, sig.dims, norm_power(ctx, norm_mode(ctx, true), true), ctx.output());
}

// --- stft ---

// The window STFT applies: `window` (or ones) of win_length samples, centred in n_fft as torch does.
std::string stft_window(TranslateContext& ctx, int64_t n_fft, int64_t win_length, DType t) {
  const int64_t left = (n_fft - win_length) / 2;
  if (ctx.has("window")) {
    const auto& meta = ctx.input_meta("window");
    if (meta.sizes.size() != 1 || meta.sizes[0].value != win_length)
      ctx.fail("window must be a static 1-D tensor of win_length = " + std::to_string(win_length) + " samples");
    const std::string w = ctx.value("window", t);
    if (win_length == n_fft) return w;
    return ctx.emit1("Pad", {w, ctx.graph.constant_i64({left, n_fft - win_length - left})}, "window");
  }
  Tensor ones(t, {n_fft}, true);
  for (int64_t i = left; i < left + win_length; ++i) {
    if (t == DType::kFloat64)
      ones.data<double>()[i] = 1.0;
    else if (t == DType::kFloat32)
      ones.data<float>()[i] = 1.0f;
    else
      ctx.fail("stft of " + dtype_name(t) + " signals is not translated");
  }
  const std::string name = ctx.temp("window");
  ctx.graph.add_initializer(name, ones);
  return name;
}

// stft(self, n_fft, hop_length, win_length, window, normalized, onesided, return_complex) of a real
// signal [L] or [B, L] (torch pads for `center` before this op) -> ONNX STFT [B, frames, bins, 2],
// transposed to torch's [B, bins, frames] (+ pairs).
void stft(TranslateContext& ctx) {
  const auto& in = ctx.input_meta("self");
  if (is_complex(in)) ctx.fail("stft of a complex signal is not translated");
  if (ctx.has("align_to_window") && ctx.bool_arg("align_to_window", false))
    ctx.fail("align_to_window is not translated");
  const int64_t rank = rank_of(in);
  if (rank != 1 && rank != 2) ctx.fail("signal must be 1-D or 2-D, got rank " + std::to_string(rank));
  const auto& out = ctx.output_meta();
  const DType t = is_complex(out) ? part_dtype(ctx, out) : out.dtype;
  const int64_t n_fft = ctx.int_arg("n_fft", 0);
  const int64_t hop = ctx.has("hop_length") ? ctx.int_arg("hop_length", 0) : n_fft / 4;
  const int64_t win_length = ctx.has("win_length") ? ctx.int_arg("win_length", 0) : n_fft;
  if (n_fft < 1 || hop < 1 || win_length < 1 || win_length > n_fft) ctx.fail("bad n_fft / hop_length / win_length");
  const bool onesided = ctx.has("onesided") ? ctx.bool_arg("onesided", true) : true;
  const std::string last = ctx.graph.constant_i64({-1});
  std::string signal = ctx.emit1("Unsqueeze", {ctx.value("self", t), last});
  if (rank == 1) signal = ctx.emit1("Unsqueeze", {signal, ctx.graph.constant_i64({0})});
  auto* node = ctx.emit("STFT", {signal, ctx.graph.constant_i64({hop}, true), stft_window(ctx, n_fft, win_length, t)},
                        {ctx.temp("stft")});
  set_attr(node, "onesided", int64_t{onesided ? 1 : 0});
  std::string y = ctx.temp("bins_frames");
  set_attr(ctx.emit("Transpose", {node->output(0)}, {y}), "perm", std::vector<int64_t>{0, 2, 1, 3});
  if (rank == 1) y = ctx.emit1("Squeeze", {y, ctx.graph.constant_i64({0})});
  if (ctx.bool_arg("normalized", false))
    ctx.emit("Mul", {y, ctx.constant(1.0 / std::sqrt(static_cast<double>(n_fft)), t)}, {ctx.output()});
  else
    ctx.emit("Identity", {y}, {ctx.output()});
}

}  // namespace

PARITY_COMPLEX_TRANSLATION("aten::fft_rfft.default", fft_rfft, 17);
PARITY_COMPLEX_TRANSLATION("aten::fft_rfft2.default", fft_rfft, 17);
PARITY_COMPLEX_TRANSLATION("aten::fft_rfftn.default", fft_rfft, 17);
PARITY_COMPLEX_TRANSLATION("aten::fft_fft.default", fft_fft, 17);
PARITY_COMPLEX_TRANSLATION("aten::fft_fft2.default", fft_fft, 17);
PARITY_COMPLEX_TRANSLATION("aten::fft_fftn.default", fft_fft, 17);
PARITY_COMPLEX_TRANSLATION("aten::fft_ifft.default", fft_ifft, 17);
PARITY_COMPLEX_TRANSLATION("aten::fft_ifft2.default", fft_ifft, 17);
PARITY_COMPLEX_TRANSLATION("aten::fft_ifftn.default", fft_ifft, 17);
PARITY_COMPLEX_TRANSLATION("aten::fft_irfft.default", fft_irfft, 17);
PARITY_COMPLEX_TRANSLATION("aten::fft_irfft2.default", fft_irfft, 17);
PARITY_COMPLEX_TRANSLATION("aten::fft_irfftn.default", fft_irfft, 17);
PARITY_COMPLEX_TRANSLATION("aten::stft.default", stft, 17);
PARITY_TRANSLATION("aten::stft.default", stft, 17);            // return_complex=False: the pairs are the real output
PARITY_TRANSLATION("aten::fft_irfft.default", fft_irfft, 17);  // a real half spectrum
PARITY_TRANSLATION("aten::fft_irfft2.default", fft_irfft, 17);
PARITY_TRANSLATION("aten::fft_irfftn.default", fft_irfft, 17);
PARITY_COMPLEX_TRANSLATION("aten::_fft_r2c.default", fft_r2c, 17);
PARITY_COMPLEX_TRANSLATION("aten::_fft_c2c.default", fft_c2c, 17);
PARITY_COMPLEX_TRANSLATION("aten::_fft_c2r.default", fft_c2r, 17);

}  // namespace parity::exporter
