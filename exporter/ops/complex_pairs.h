// Internal: helpers of the translations of complex values, carried as real tensors with a trailing dim
// of 2 (real, imaginary); see translate.h.
#pragma once
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
  if (a.is(pt2::ArgKind::as_complex)) ctx.fail("argument '" + name + "': complex Python scalars are not translated");
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

}  // namespace parity::exporter::complex_pairs
