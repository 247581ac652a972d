// Internal: helpers of the translations of complex values, carried as real tensors with a trailing dim
// of 2 (real, imaginary); see translate.h.
#pragma once
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "../src/translate.h"

namespace parity::exporter::complex_pairs {

inline DType part_dtype(TranslateContext& ctx, const pt2::TensorMeta& meta) {
  const DType d = complex_part_dtype(meta);
  if (d == DType::kUndefined)
    ctx.fail("expected a complex tensor, got torch dtype " + std::to_string(meta.torch_dtype));
  return d;
}

inline int64_t rank_of(const pt2::TensorMeta& meta) { return static_cast<int64_t>(meta.sizes.size()); }

// The `i`-th part (0 real, 1 imaginary) of a pair-layout value, without the pair dim.
inline std::string part(TranslateContext& ctx, const std::string& x, int64_t i) {
  auto* n = ctx.emit("Gather", {x, ctx.graph.constant_i64({i}, true)}, {ctx.temp(i == 0 ? "re" : "im")});
  set_attr(n, "axis", int64_t{-1});
  return n->output(0);
}

inline std::string pair_of(TranslateContext& ctx, const std::string& re, const std::string& im,
                           const std::string& out) {
  const std::string last = ctx.graph.constant_i64({-1});
  auto* n = ctx.emit("Concat", {ctx.emit1("Unsqueeze", {re, last}), ctx.emit1("Unsqueeze", {im, last})}, {out});
  set_attr(n, "axis", int64_t{-1});
  return out;
}

// A real value of rank `rank` as a complex pair (imaginary part 0, also where the real part is inf).
inline std::string real_to_pair(TranslateContext& ctx, const std::string& v, int64_t rank) {
  const std::string unsq = ctx.emit1("Unsqueeze", {v, ctx.graph.constant_i64({-1})});
  std::vector<int64_t> pads(static_cast<size_t>(2 * (rank + 1)), 0);
  pads.back() = 1;
  return ctx.emit1("Pad", {unsq, ctx.graph.constant_i64(pads)}, "as_complex");
}

// A complex Python scalar (`z * 1j`) as a constant pair [re, im] of dtype `t` (float32 or float64; it broadcasts
// against any pair-layout value).
inline std::string complex_scalar(TranslateContext& ctx, const pt2::Argument& a, DType t) {
  const auto& c = a.typed().as_complex();
  if (t != DType::kFloat32 && t != DType::kFloat64)
    ctx.fail("a complex scalar with " + dtype_name(t) + " parts is not translated");
  Tensor pair(t, {2});
  if (t == DType::kFloat64)
    pair.data<double>()[0] = c.real, pair.data<double>()[1] = c.imag;
  else
    pair.data<float>()[0] = static_cast<float>(c.real), pair.data<float>()[1] = static_cast<float>(c.imag);
  const std::string name = ctx.temp("complex_scalar");
  ctx.graph.add_initializer(name, pair);
  return name;
}

// Argument `name` in the pair layout of dtype `t`: a complex tensor as is, a real tensor or number made complex.
inline std::string complex_operand(TranslateContext& ctx, const std::string& name, DType t) {
  const pt2::Argument& a = ctx.required(name);
  if (a.is_tensor()) {
    const auto& meta = ctx.input_meta(name);
    if (is_complex(meta)) {
      if (part_dtype(ctx, meta) != t) ctx.fail("argument '" + name + "': mixed complex precisions are not translated");
      return ctx.tensor(name);
    }
    return real_to_pair(ctx, ctx.value(a, t), rank_of(meta));
  }
  if (a.is(pt2::ArgKind::as_complex)) return complex_scalar(ctx, a, t);
  return real_to_pair(ctx, ctx.value(a, t), 0);
}

inline bool is_complex_arg(TranslateContext& ctx, const std::string& name) {
  const pt2::Argument* a = ctx.arg(name);
  return a && a->is_tensor() && is_complex(ctx.input_meta(name));
}

// One ONNX DFT along `axis` of a [..., 1 or 2] value (real or pair layout; the axis is an input from opset
// 20, an attribute before).
inline std::string dft(TranslateContext& ctx, const std::string& x, int64_t axis, bool inverse, bool onesided) {
  onnx::NodeProto* n = ctx.opset >= 20
                           ? ctx.emit("DFT", {x, "", ctx.graph.constant_i64({axis}, true)}, {ctx.temp("dft")})
                           : ctx.emit("DFT", {x}, {ctx.temp("dft")});
  if (ctx.opset < 20) set_attr(n, "axis", axis);
  set_attr(n, "inverse", int64_t{inverse ? 1 : 0});
  set_attr(n, "onesided", int64_t{onesided ? 1 : 0});
  return n->output(0);
}

// --- signals of static or symbolic length (torch.fft's translations) ---

// A size per transformed dim: static, or nullopt where symbolic (read from a value's shape at run time).
using Sizes = std::vector<std::optional<int64_t>>;

inline Sizes sizes_at(const pt2::TensorMeta& meta, const std::vector<int64_t>& dims) {
  Sizes out;
  for (int64_t d : dims) out.push_back(meta.sizes[static_cast<size_t>(d)].value);
  return out;
}

// The size of `x` along `dim` as an int64 [1] value.
inline std::string dim_size(TranslateContext& ctx, const std::string& x, int64_t dim) {
  auto* g = ctx.emit("Gather", {shape_of(ctx, x), ctx.graph.constant_i64({dim})}, {ctx.temp("size")});
  set_attr(g, "axis", int64_t{0});
  return g->output(0);
}

// x (of rank `r`, the pair dim counted) cut or zero-padded along `dim` to `size`, an int64 [1] value known
// at run time only: Slice to at most `size`, then Pad by what is missing (0 when it was longer).
inline std::string resize_to(TranslateContext& ctx, const std::string& x, int64_t r, int64_t dim,
                             const std::string& size) {
  const std::string cut =
      ctx.emit1("Slice", {x, ctx.graph.constant_i64({0}), size, ctx.graph.constant_i64({dim})}, "cut");
  const std::string missing = ctx.emit1("Sub", {size, dim_size(ctx, cut, dim)}, "missing");
  const std::string pads =
      concat(ctx,
             {ctx.graph.constant_i64(std::vector<int64_t>(static_cast<size_t>(r + dim), 0)), missing,
              ctx.graph.constant_i64(std::vector<int64_t>(static_cast<size_t>(r - dim - 1), 0))},
             0, "pads");
  return ctx.emit1("Pad", {cut, pads}, "zero_padded");
}

// x (rank `rank` without the pair dim; `pairs`: x has it) cut or zero-padded to the static `size` along
// `dim`, whose size is `have` (nullopt: symbolic, so the cut or pad is decided at run time).
inline std::string resize(TranslateContext& ctx, const std::string& x, int64_t rank, bool pairs, int64_t dim,
                          const std::optional<int64_t>& have, int64_t size) {
  if (size < 1) ctx.fail("signal size " + std::to_string(size) + " along dim " + std::to_string(dim) + " must be >= 1");
  const int64_t r = rank + (pairs ? 1 : 0);
  if (!have) return resize_to(ctx, x, r, dim, ctx.graph.constant_i64({size}));
  if (*have == size) return x;
  if (*have > size)
    return ctx.emit1("Slice",
                     {x, ctx.graph.constant_i64({0}), ctx.graph.constant_i64({size}), ctx.graph.constant_i64({dim})});
  std::vector<int64_t> pads(static_cast<size_t>(2 * r), 0);
  pads[static_cast<size_t>(dim + r)] = size - *have;
  return ctx.emit1("Pad", {x, ctx.graph.constant_i64(pads)}, "zero_padded");
}

// x * n^power, n = the product of the signal sizes `sizes` along `dims`; a symbolic one is read from the
// shape of `sizes_of` at `dims` (so the factor is computed at run time).
inline std::string scale(TranslateContext& ctx, const std::string& x, DType t, const Sizes& sizes,
                         const std::string& sizes_of, const std::vector<int64_t>& dims, double power,
                         const std::string& out) {
  if (power == 0) {
    ctx.emit("Identity", {x}, {out});
    return out;
  }
  double n = 1;
  bool known = true;
  for (const auto& s : sizes) {
    if (s)
      n *= static_cast<double>(*s);
    else
      known = false;
  }
  if (known) {
    ctx.emit("Mul", {x, ctx.constant(std::pow(n, power), t)}, {out});
    return out;
  }
  auto* gather =
      ctx.emit("Gather", {ctx.emit1("Shape", {sizes_of}), ctx.graph.constant_i64(dims)}, {ctx.temp("sizes")});
  set_attr(gather, "axis", int64_t{0});
  const std::string prod = ctx.temp("n");
  emit_reduce(ctx, "ReduceProd", gather->output(0), {}, false, prod);
  std::string factor = ctx.cast_if_needed(prod, DType::kInt64, t);
  if (std::abs(power) == 0.5) factor = ctx.emit1("Sqrt", {factor});
  if (std::abs(power) != 0.5 && std::abs(power) != 1) ctx.fail("no run-time scale by n^" + std::to_string(power));
  ctx.emit(power > 0 ? "Mul" : "Div", {x, factor}, {out});
  return out;
}

// The real signal of n samples whose half spectrum (pair layout, rank `r` with the pair dim) lies along
// `axis`, as torch's c2r reads it: the first n/2 + 1 bins (zero-padded when fewer), the bins above n/2 the
// conjugates of bins 1.., inverse DFT (divided by n), real part (so the imaginary parts of bin 0 and of
// bin n/2 are ignored, as by torch). `n` static, or `n_value` (an int64 [1] value) when it is symbolic.
inline std::string c2r(TranslateContext& ctx, const std::string& x, int64_t r, int64_t axis, std::optional<int64_t> n,
                       const std::string& n_value = "") {
  auto i64 = [&](int64_t v) { return ctx.graph.constant_i64({v}); };
  std::string h, mirror;
  if (n) {
    const int64_t half = *n / 2 + 1;
    h = ctx.emit1("Slice", {x, i64(0), i64(half), i64(axis)});
    if (*n - half > 0) mirror = ctx.emit1("Slice", {h, i64(*n - half), i64(0), i64(axis), i64(-1)});
  } else {
    const std::string half = ctx.emit1("Add", {ctx.emit1("Div", {n_value, i64(2)}), i64(1)}, "half");
    h = resize_to(ctx, x, r, axis, half);
    // Bins n - half .. 1 (none when n <= 2: the slice is then empty).
    mirror = ctx.emit1("Slice", {h, ctx.emit1("Sub", {n_value, half}), i64(0), i64(axis), i64(-1)}, "mirror");
  }
  std::string full = h;
  if (!mirror.empty()) {
    const std::string conj =
        pair_of(ctx, part(ctx, mirror, 0), ctx.emit1("Neg", {part(ctx, mirror, 1)}), ctx.temp("conj"));
    full = concat(ctx, {h, conj}, axis, "hermitian");
  }
  return part(ctx, dft(ctx, full, axis, true, false), 0);
}

}  // namespace parity::exporter::complex_pairs
