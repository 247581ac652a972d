// torchao's affine quantization (the `quantize_` path: Int8Tensor, IntxUnpackedToInt8Tensor, dynamic int8
// activations, once capture unwrapped the tensor subclasses) and aten._int_mm -> standard ONNX.
//
// torchao describes every granularity by a `block_size` per dim (_get_reduction_params in
// torchao/quantization/quant_primitives.py): block 1 keeps the dim, block == size reduces it whole (per
// tensor, per token), a smaller block splits it into groups (int4 per-group weights). ONNX's blocked
// DequantizeLinear (opset 21: `axis`, `block_size`, the scale shaped like the input with the blocked dim
// divided) is that layout when at most one dim is blocked, so:
//   dequantize_affine -> DequantizeLinear, the int8 weight narrowed to an INT4 / UINT4 initializer when its
//                        quantization range is 4-bit (the file keeps two weights per byte, runtimes fuse the
//                        blocked DQ -> MatMul); other layouts -> (q - zp) * scale spelled out.
//   quantize_affine   -> torch's own arithmetic (round(x * (1 / scale)) + zp, clamp, cast): QuantizeLinear
//                        divides, which differs from torch's reciprocal-then-multiply by a step at ties.
//   choose_qparams_affine -> torch's min/max arithmetic step by step (float32, as torch).
//   aten._int_mm      -> MatMulInteger (exact int32 sums; int8 or uint8 self, int8 mat2).
// Exactness: dequantize is bit-exact for float32 outputs (small integer differences times the scale, one
// rounding); float16 / bfloat16 outputs are the float32 result rounded once, which torch's arithmetic equals
// because q - zp and its product with a half-precision scale are exact in float32.
#include <algorithm>
#include <cstring>

#include "../src/translate.h"

namespace parity::exporter {
namespace {

// The torchao layout of one quantized tensor (`input` of the op) under `block_size`.
struct Blocks {
  std::vector<int64_t> block;
  std::vector<pt2::SymDim> sizes;
  std::vector<int64_t> reduced;  // dims with block > 1
  std::vector<int64_t> whole;    // the reduced dims a block covers entirely
  bool split = false;            // some dim is divided into groups of `block`
  int64_t rank() const { return static_cast<int64_t>(sizes.size()); }
  // The qparam layout ONNX's blocked Q/DQ wants: size / block on reduced dims, size elsewhere.
  std::optional<std::vector<int64_t>> static_qparam_shape() const {
    std::vector<int64_t> s;
    for (int64_t i = 0; i < rank(); ++i) {
      if (!sizes[i].value) return std::nullopt;
      s.push_back(*sizes[i].value / block[i]);
    }
    return s;
  }
};

Blocks blocks_of(TranslateContext& ctx) {
  Blocks b;
  b.block = ctx.ints_arg("block_size");
  b.sizes = ctx.input_meta("input").sizes;
  if (b.block.size() != b.sizes.size())
    ctx.fail("block_size has " + std::to_string(b.block.size()) + " entries for an input of rank " +
             std::to_string(b.sizes.size()));
  for (int64_t i = 0; i < b.rank(); ++i) {
    const int64_t blk = b.block[i];
    if (blk < 1) ctx.fail("block_size[" + std::to_string(i) + "] = " + std::to_string(blk) + " must be positive");
    if (blk == 1) continue;
    const auto& size = b.sizes[i].value;
    if (!size)
      ctx.fail("block_size[" + std::to_string(i) + "] = " + std::to_string(blk) + " on the dynamic dim " +
               std::to_string(i) + " (" + b.sizes[i].expr + "): a block must divide a static dim");
    if (*size % blk != 0)
      ctx.fail("block_size[" + std::to_string(i) + "] = " + std::to_string(blk) + " does not divide dim " +
               std::to_string(i) + " of size " + std::to_string(*size));
    b.reduced.push_back(i);
    if (*size == blk)
      b.whole.push_back(i);
    else
      b.split = true;
  }
  return b;
}

// torchao's shape_for_reduction: each split dim becomes [size / block, block] (static shapes only).
std::vector<int64_t> reduction_shape(TranslateContext& ctx, const Blocks& b, std::vector<int64_t>* inner_axes) {
  std::vector<int64_t> shape;
  for (int64_t i = 0; i < b.rank(); ++i) {
    if (!b.sizes[i].value)
      ctx.fail("group-wise block_size on an input with the dynamic dim " + std::to_string(i) + " (" + b.sizes[i].expr +
               ") is not supported: groups need a static shape");
    const int64_t size = *b.sizes[i].value, blk = b.block[i];
    if (blk > 1 && blk != size) {
      shape.push_back(size / blk);
      if (inner_axes) inner_axes->push_back(static_cast<int64_t>(shape.size()));
      shape.push_back(blk);
    } else {
      if (blk > 1 && inner_axes) inner_axes->push_back(static_cast<int64_t>(shape.size()));
      shape.push_back(size);
    }
  }
  return shape;
}

// A scale / zero point argument in the qparam layout (rank of the input, size / block on reduced dims), as
// torch's `.view(shape_after_reduction)` reads it; `to` converts its dtype.
std::string qparam_blocked(TranslateContext& ctx, const std::string& name, const Blocks& b, DType to) {
  const pt2::TensorMeta& m = ctx.input_meta(name);
  std::string v = ctx.cast_if_needed(ctx.tensor(name), m.dtype, to);
  if (const auto shape = b.static_qparam_shape()) {
    const bool same =
        m.sizes.size() == shape->size() && std::equal(shape->begin(), shape->end(), m.sizes.begin(),
                                                      [](int64_t s, const pt2::SymDim& d) { return d.value == s; });
    return same ? v : ctx.emit1("Reshape", {v, ctx.graph.constant_i64(*shape)}, name);
  }
  const auto r = static_cast<int64_t>(m.sizes.size());
  if (r == b.rank()) return v;
  if (r == b.rank() - static_cast<int64_t>(b.whole.size()))  // choose_qparams_affine(keepdim=False)
    return ctx.emit1("Unsqueeze", {v, ctx.graph.constant_i64(b.whole)}, name + "_kept");
  ctx.fail("'" + name + "' has rank " + std::to_string(r) + ", which block_size " +
           ctx.arg("block_size")->value_text() + " on an input of rank " + std::to_string(b.rank()) +
           " does not explain");
}

// torchao's qparams after `.view(shape_after_reduction)` for the split layout (static shapes).
std::string qparam_for_reduction(TranslateContext& ctx, const std::string& name, const Blocks& b, DType to) {
  std::vector<int64_t> inner;
  std::vector<int64_t> shape = reduction_shape(ctx, b, &inner);
  for (int64_t a : inner) shape[static_cast<size_t>(a)] = 1;
  const pt2::TensorMeta& m = ctx.input_meta(name);
  return ctx.emit1("Reshape", {ctx.cast_if_needed(ctx.tensor(name), m.dtype, to), ctx.graph.constant_i64(shape)},
                   name + "_grouped");
}

// The stored tensor behind a tensor argument when it is a parameter, buffer or constant of the program.
const Tensor* stored_input(TranslateContext& ctx, const std::string& name) {
  const pt2::Argument* a = ctx.arg(name);
  if (!a || !a->is_tensor() || &ctx.fx_graph != &ctx.program.graph) return nullptr;
  using Kind = pt2::InputSpec::Kind;
  for (const auto& spec : ctx.program.input_specs)
    if ((spec.kind == Kind::kParameter || spec.kind == Kind::kBuffer || spec.kind == Kind::kTensorConstant) &&
        spec.arg.is_tensor() && spec.arg.tensor_name() == a->tensor_name())
      return &ctx.program.stored_tensor(spec);
  return nullptr;
}

int64_t numel_of(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

bool fits(const Tensor& t, int64_t lo, int64_t hi) {
  if (t.dtype() == DType::kInt8) {
    const auto* v = t.data<int8_t>();
    return std::all_of(v, v + t.numel(), [&](int8_t x) { return x >= lo && x <= hi; });
  }
  if (t.dtype() == DType::kUInt8) {
    const auto* v = t.data<uint8_t>();
    return std::all_of(v, v + t.numel(), [&](uint8_t x) { return x >= lo && x <= hi; });
  }
  return false;
}

// The INT4 / UINT4 twin of a stored int8 / uint8 tensor, shaped `shape` (one per stored tensor and shape,
// reused by every reader; no Reshape ever runs on 4-bit values).
std::string int4_initializer(TranslateContext& ctx, const std::string& arg, const Tensor& t, const Shape& shape) {
  const std::string name = ctx.tensor(arg) + (t.dtype() == DType::kInt8 ? "_int4" : "_uint4") +
                           (shape == t.shape() ? "" : "_" + std::to_string(shape.size()) + "d");
  if (!ctx.graph.is_used(name)) ctx.graph.add_int4_initializer(name, t.reshaped(shape));
  return name;
}

std::optional<int64_t> optional_bound(TranslateContext& ctx, const std::string& name) {
  const pt2::Argument* a = ctx.arg(name);
  if (!a || a->is_none()) return std::nullopt;
  if (!a->is(pt2::ArgKind::as_int)) ctx.fail("argument '" + name + "' must be an int, got " + a->describe());
  return a->as_int();
}

// The quantized range: quant_min / quant_max, or the dtype's.
std::pair<int64_t, int64_t> quant_range(TranslateContext& ctx, DType q) {
  const auto range = quantized_dtype_range(q);
  if (!range) ctx.fail("quantized dtype " + dtype_name(q) + " is not supported (int8, uint8, int16, uint16, int32)");
  std::pair<int64_t, int64_t> r = *range;
  if (auto lo = optional_bound(ctx, "quant_min")) r.first = *lo;
  if (auto hi = optional_bound(ctx, "quant_max")) r.second = *hi;
  if (r.first > r.second) ctx.fail("quant_min " + std::to_string(r.first) + " > quant_max " + std::to_string(r.second));
  return r;
}

DType scalar_type_arg(TranslateContext& ctx, const std::string& name) {
  const pt2::Argument& a = ctx.required(name);
  if (!a.is(pt2::ArgKind::as_scalar_type)) ctx.fail("argument '" + name + "' must be a dtype, got " + a.describe());
  const DType t = pt2::dtype_from_torch(static_cast<int32_t>(a.typed().as_scalar_type()));
  if (t == DType::kUndefined)
    ctx.fail("argument '" + name + "' = " + a.describe() +
             ": sub-byte and float8 torch dtypes are not supported (torchao's int4 schemes store int8 in [-8, 7])");
  return t;
}

// Every reader of the node's output takes it as aten.linear's weight (torchao's weight-only Linear).
bool only_linear_weight(TranslateContext& ctx) {
  const std::string out = ctx.node.outputs.size() == 1 && ctx.node.outputs[0].is_tensor()
                              ? ctx.node.outputs[0].tensor_name()
                              : std::string();
  if (out.empty()) return false;
  bool read = false;
  for (const auto& n : ctx.fx_graph.nodes)
    for (const auto& in : n.inputs) {
      const bool tensor = in.arg.is_tensor() && in.arg.tensor_name() == out;
      bool listed = false;
      if (in.arg.is(pt2::ArgKind::as_tensors) || in.arg.is(pt2::ArgKind::as_optional_tensors))
        for (const auto& name : in.arg.optional_tensor_names()) listed = listed || name == out;
      if (!tensor && !listed) continue;
      if (!tensor || n.target != "torch.ops.aten.linear.default" || in.name != "weight") return false;
      read = true;
    }
  for (const auto& o : ctx.fx_graph.outputs)
    if (o.is_tensor() && o.tensor_name() == out) return false;
  return read;
}

// A 2-D stored tensor transposed (any element size).
Tensor transposed(const Tensor& t) {
  const int64_t rows = t.dim(0), cols = t.dim(1);
  Tensor out(t.dtype(), {cols, rows});
  const size_t es = dtype_size(t.dtype());
  const auto* src = static_cast<const uint8_t*>(t.raw());
  auto* dst = static_cast<uint8_t*>(out.mutable_raw());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) std::memcpy(dst + (c * rows + r) * es, src + (r * cols + c) * es, es);
  return out;
}

// The dequantized weight of a Linear, [N, K] blocked along K, written transposed: DequantizeLinear(axis 0) of
// W^T [K, N] (INT4 / UINT4 when the range is 4-bit) feeding MatMul / Gemm directly, the layout ONNX Runtime
// fuses into MatMulNBits and refrt into WeightOnlyMatMul; a Transpose gives the FX value, which linear
// (linalg.cc) reads through. False when the weight or its qparams are not stored tensors of that layout.
bool dequantize_linear_weight(TranslateContext& ctx, const Blocks& b, DType q, bool zp, bool four_bit) {
  if (ctx.opset < 21 || b.rank() != 2 || b.reduced != std::vector<int64_t>{1} || !only_linear_weight(ctx)) return false;
  const Tensor* w = stored_input(ctx, "input");
  const Tensor* scale = stored_input(ctx, "scale");
  const Tensor* zero_point = zp ? stored_input(ctx, "zero_point") : nullptr;
  const auto layout = b.static_qparam_shape();
  if (!w || !scale || !layout || scale->numel() != numel_of(*layout) || scale->dtype() != DType::kFloat32 ||
      (zp && (!zero_point || zero_point->dtype() != q || zero_point->numel() != numel_of(*layout))))
    return false;
  const Shape qshape(layout->begin(), layout->end());
  const std::string base = ctx.tensor("input");
  auto add = [&](const std::string& name, const Tensor& t, bool pack) {
    const std::string unique = ctx.graph.unique_name(name);
    if (pack)
      ctx.graph.add_int4_initializer(unique, t);
    else
      ctx.graph.add_initializer(unique, t);
    return unique;
  };
  std::vector<std::string> inputs = {add(base + "_t", transposed(*w), four_bit),
                                     add(ctx.tensor("scale") + "_t", transposed(scale->reshaped(qshape)), false)};
  if (zp) inputs.push_back(add(ctx.tensor("zero_point") + "_t", transposed(zero_point->reshaped(qshape)), four_bit));
  const std::string dq = ctx.temp("dequantized_t");
  auto* node = ctx.emit("DequantizeLinear", inputs, {dq});
  set_attr(node, "axis", int64_t{0});
  set_attr(node, "block_size", b.block[1]);
  set_attr(ctx.emit("Transpose", {dq}, {ctx.output()}), "perm", std::vector<int64_t>{1, 0});
  return true;
}

// torchao treats an empty zero point like None.
bool has_zero_point(TranslateContext& ctx) {
  if (!ctx.has("zero_point")) return false;
  const auto& sizes = ctx.input_meta("zero_point").sizes;
  return !std::any_of(sizes.begin(), sizes.end(), [](const pt2::SymDim& d) { return d.value == 0; });
}

// (q - zp) * scale spelled out in float32, the result cast to `out` (any block layout).
void dequantize_arithmetic(TranslateContext& ctx, const Blocks& b, DType q, DType out) {
  const bool grouped = b.split;
  std::string x = ctx.cast_if_needed(ctx.tensor("input"), q, DType::kFloat32);
  if (grouped) x = ctx.emit1("Reshape", {x, ctx.graph.constant_i64(reduction_shape(ctx, b, nullptr))}, "grouped");
  auto qparam = [&](const std::string& n) {
    return grouped ? qparam_for_reduction(ctx, n, b, DType::kFloat32) : qparam_blocked(ctx, n, b, DType::kFloat32);
  };
  if (has_zero_point(ctx)) x = ctx.emit1("Sub", {x, qparam("zero_point")}, "centered");
  std::string y = ctx.emit1("Mul", {x, qparam("scale")}, "dequantized");
  if (grouped) y = ctx.emit1("Reshape", {y, shape_of(ctx, ctx.tensor("input"))}, "ungrouped");
  ctx.alias_output(0, ctx.cast_if_needed(y, DType::kFloat32, out));
}

// dequantize_affine(input, block_size, scale, zero_point?, input_dtype, quant_min?, quant_max?, output_dtype)
void dequantize_affine(TranslateContext& ctx) {
  const DType q = scalar_type_arg(ctx, "input_dtype");
  const DType in = ctx.input_meta("input").dtype;
  if (in != q) ctx.fail("dequantize_affine of a " + dtype_name(in) + " tensor declared as " + dtype_name(q));
  const DType out = ctx.dtype_arg("output_dtype").value_or(DType::kFloat32);
  if (out != DType::kFloat32 && out != DType::kFloat16 && out != DType::kBFloat16)
    ctx.fail("dequantize_affine to " + dtype_name(out) + ": torchao allows float32, float16, bfloat16");
  const auto [qmin, qmax] = quant_range(ctx, q);
  const Blocks b = blocks_of(ctx);
  const bool zp = has_zero_point(ctx);
  const DType zp_type = zp ? ctx.input_meta("zero_point").dtype : q;
  const bool per_tensor = static_cast<int64_t>(b.whole.size()) == b.rank() && b.rank() > 0;
  const bool one_axis = b.reduced.size() == 1 && (ctx.opset >= 21 || per_tensor);
  // DequantizeLinear needs an integer zero point (same dtype as the input) and integer x of an ONNX Q type.
  const bool dq_types =
      (q == DType::kInt8 || q == DType::kUInt8 || ((q == DType::kInt16 || q == DType::kUInt16) && ctx.opset >= 21)) &&
      !dtype_is_floating(zp_type);
  if (!(per_tensor || one_axis) || !dq_types) return dequantize_arithmetic(ctx, b, q, out);

  // 4-bit weights: the stored int8 tensor (and its zero point) narrowed to INT4 / UINT4 in the file.
  const auto layout = b.static_qparam_shape();
  const Tensor* weight = stored_input(ctx, "input");
  const Tensor* zp_stored = zp ? stored_input(ctx, "zero_point") : nullptr;
  const bool four_bit =
      ctx.opset >= 21 && !per_tensor && layout && weight &&
      ((q == DType::kInt8 && qmin >= -8 && qmax <= 7) || (q == DType::kUInt8 && qmin >= 0 && qmax <= 15)) &&
      fits(*weight, qmin, qmax) &&
      (!zp || (zp_stored && zp_stored->dtype() == q && zp_stored->numel() == numel_of(*layout) &&
               fits(*zp_stored, qmin, qmax)));
  if (out == DType::kFloat32 && dequantize_linear_weight(ctx, b, q, zp, four_bit)) return;
  std::vector<std::string> inputs;
  inputs.push_back(four_bit ? int4_initializer(ctx, "input", *weight, weight->shape()) : ctx.tensor("input"));
  const DType scale_type = ctx.input_meta("scale").dtype;
  if (per_tensor) {
    inputs.push_back(ctx.emit1(
        "Reshape", {ctx.cast_if_needed(ctx.tensor("scale"), scale_type, DType::kFloat32), ctx.graph.constant_i64({})},
        "scale_scalar"));
    if (zp)
      inputs.push_back(ctx.emit1("Reshape",
                                 {ctx.cast_if_needed(ctx.tensor("zero_point"), zp_type, q), ctx.graph.constant_i64({})},
                                 "zero_point_scalar"));
  } else {
    inputs.push_back(qparam_blocked(ctx, "scale", b, DType::kFloat32));
    if (zp)
      inputs.push_back(four_bit ? int4_initializer(ctx, "zero_point", *zp_stored, Shape(layout->begin(), layout->end()))
                                : qparam_blocked(ctx, "zero_point", b, q));
  }
  const std::string result = out == DType::kFloat32 ? ctx.output() : ctx.temp("dequantized");
  auto* node = ctx.emit("DequantizeLinear", inputs, {result});
  if (!per_tensor) {
    const int64_t axis = b.reduced[0];
    set_attr(node, "axis", axis);
    set_attr(node, "block_size", b.block[static_cast<size_t>(axis)]);
  }
  if (out != DType::kFloat32) set_attr(ctx.emit("Cast", {result}, {ctx.output()}), "to", static_cast<int64_t>(out));
}

// quantize_affine(input, block_size, scale, zero_point?, output_dtype, quant_min?, quant_max?):
// clamp(round(input * (1 / scale)) + zero_point, quant_min, quant_max).to(output_dtype), in float32.
void quantize_affine(TranslateContext& ctx) {
  const DType q = scalar_type_arg(ctx, "output_dtype");
  const auto [qmin, qmax] = quant_range(ctx, q);
  const DType in = ctx.input_meta("input").dtype, scale_type = ctx.input_meta("scale").dtype;
  if (scale_type != DType::kFloat32 || (in != DType::kFloat32 && in != DType::kFloat16 && in != DType::kBFloat16))
    ctx.fail("quantize_affine of a " + dtype_name(in) + " input with a " + dtype_name(scale_type) +
             " scale is not supported (float32 scales; torch then computes in float32)");
  const Blocks b = blocks_of(ctx);
  std::string x = ctx.cast_if_needed(ctx.tensor("input"), in, DType::kFloat32);
  if (b.split) x = ctx.emit1("Reshape", {x, ctx.graph.constant_i64(reduction_shape(ctx, b, nullptr))}, "grouped");
  auto qparam = [&](const std::string& n) {
    return b.split ? qparam_for_reduction(ctx, n, b, DType::kFloat32) : qparam_blocked(ctx, n, b, DType::kFloat32);
  };
  const std::string inverse = ctx.emit1("Reciprocal", {qparam("scale")}, "inverse_scale");
  std::string steps = ctx.emit1("Round", {ctx.emit1("Mul", {x, inverse}, "scaled")}, "rounded");
  if (has_zero_point(ctx)) steps = ctx.emit1("Add", {steps, qparam("zero_point")}, "shifted");
  std::string clamped = ctx.emit1("Clip",
                                  {steps, ctx.constant(static_cast<double>(qmin), DType::kFloat32),
                                   ctx.constant(static_cast<double>(qmax), DType::kFloat32)},
                                  "clamped");
  if (b.split) clamped = ctx.emit1("Reshape", {clamped, shape_of(ctx, ctx.tensor("input"))}, "ungrouped");
  // The Cast writes the node's own output: the verifier's requantized rule reads the activation by its name.
  set_attr(ctx.emit("Cast", {clamped}, {ctx.output()}), "to", static_cast<int64_t>(ctx.output_meta(0).dtype));
}

// choose_qparams_affine(input, mapping_type, block_size, target_dtype, quant_min?, quant_max?, eps?,
// scale_dtype?, zero_point_dtype?, keepdim) -> (scale, zero_point), torch's arithmetic in float32.
void choose_qparams_affine(TranslateContext& ctx) {
  const DType q = scalar_type_arg(ctx, "target_dtype");
  const auto [qmin, qmax] = quant_range(ctx, q);
  const DType in = ctx.input_meta("input").dtype;
  if (in != DType::kFloat32)
    ctx.fail("choose_qparams_affine of a " + dtype_name(in) + " input is not supported (float32 only)");
  const std::string mapping = ctx.string_arg("mapping_type", "");
  const Blocks b = blocks_of(ctx);
  const bool keepdim = ctx.bool_arg("keepdim", false);
  std::string x = ctx.tensor("input");
  std::vector<int64_t> axes = b.reduced;
  if (axes.empty()) ctx.fail("block_size of all ones: per-element qparams are not supported");
  if (b.split) {
    axes.clear();
    x = ctx.emit1("Reshape", {x, ctx.graph.constant_i64(reduction_shape(ctx, b, &axes))}, "grouped");
  }
  const std::string mn = ctx.temp("min"), mx = ctx.temp("max");
  emit_reduce(ctx, "ReduceMin", x, axes, keepdim, mn);
  emit_reduce(ctx, "ReduceMax", x, axes, keepdim, mx);
  const std::string zero = ctx.constant(0.0, DType::kFloat32);
  const std::string min_neg = ctx.emit1("Min", {mn, zero}, "min_neg");
  const std::string max_pos = ctx.emit1("Max", {mx, zero}, "max_pos");
  const double eps = ctx.has("eps") ? ctx.float_arg("eps", 0.0) : 1.1754943508222875e-38;  // finfo(float32).tiny
  const std::string eps_value = ctx.constant(eps, DType::kFloat32);
  std::string scale, zero_point;
  if (mapping == "SYMMETRIC" || mapping == "SYMMETRIC_NO_CLIPPING_ERR") {
    if (mapping == "SYMMETRIC") {
      const std::string bound = ctx.emit1("Max", {ctx.emit1("Neg", {min_neg}), max_pos}, "abs_max");
      scale = ctx.emit1("Div", {bound, ctx.constant(static_cast<double>(qmax - qmin) / 2, DType::kFloat32)}, "scale");
    } else {
      const std::string smin = ctx.emit1("Div", {min_neg, ctx.constant(static_cast<double>(qmin), DType::kFloat32)});
      const std::string smax = ctx.emit1("Div", {max_pos, ctx.constant(static_cast<double>(qmax), DType::kFloat32)});
      scale = ctx.emit1("Where", {ctx.emit1("Greater", {smin, smax}), smin, smax}, "scale");
    }
    // full_like(scale, int((quant_max + quant_min + 1) / 2)) before the clamp: the scale's shape.
    const double mid = static_cast<double>(static_cast<int64_t>(static_cast<double>(qmax + qmin + 1) / 2));
    zero_point = ctx.emit1("Expand", {ctx.constant(mid, DType::kFloat32), shape_of(ctx, scale)}, "zero_point");
    scale = ctx.emit1("Max", {scale, eps_value}, "scale_eps");
  } else if (mapping == "ASYMMETRIC") {
    const std::string span = ctx.emit1("Sub", {max_pos, min_neg}, "span");
    scale = ctx.emit1("Div", {span, ctx.constant(static_cast<double>(qmax - qmin), DType::kFloat32)}, "scale");
    scale = ctx.emit1("Max", {scale, eps_value}, "scale_eps");
    const std::string steps = ctx.emit1("Round", {ctx.emit1("Div", {min_neg, scale})}, "min_steps");
    const std::string zp = ctx.emit1("Sub", {ctx.constant(static_cast<double>(qmin), DType::kFloat32), steps});
    zero_point = ctx.emit1("Clip",
                           {zp, ctx.constant(static_cast<double>(qmin), DType::kFloat32),
                            ctx.constant(static_cast<double>(qmax), DType::kFloat32)},
                           "zero_point");
  } else {
    ctx.fail("mapping_type '" + mapping + "' is not supported (SYMMETRIC, SYMMETRIC_NO_CLIPPING_ERR, ASYMMETRIC)");
  }
  if (keepdim && b.split) {  // torchao reshapes to [size / block] per dim
    const auto shape = *b.static_qparam_shape();
    scale = ctx.emit1("Reshape", {scale, ctx.graph.constant_i64(shape)}, "scale_shaped");
    zero_point = ctx.emit1("Reshape", {zero_point, ctx.graph.constant_i64(shape)}, "zero_point_shaped");
  }
  ctx.alias_output(0, ctx.cast_if_needed(scale, DType::kFloat32, ctx.output_dtype(0)));
  ctx.alias_output(1, ctx.cast_if_needed(zero_point, DType::kFloat32, ctx.output_dtype(1)));
}

// _int_mm(self int8 or uint8 [m, k], mat2 int8 [k, n]) -> int32 [m, n]: exact integer sums. torch 2.13
// accepts exactly these two pairs (its meta function and CPU kernel refuse a uint8 mat2). The uint8 self is
// what torchao's int_scaled_matmul captures on a CPU with VNNI and without AMX (x + 128, then
// _int_mm(uint8, int8) minus 128 * colsum(W): docs/cpu-branches.md); MatMulInteger takes uint8 A x int8 B.
void int_mm(TranslateContext& ctx) {
  const DType self = ctx.input_meta("self").dtype, mat2 = ctx.input_meta("mat2").dtype;
  if ((self != DType::kInt8 && self != DType::kUInt8) || mat2 != DType::kInt8)
    ctx.fail("_int_mm takes int8 x int8 or uint8 x int8 (as torch), got " + dtype_name(self) + " x " +
             dtype_name(mat2));
  ctx.emit("MatMulInteger", {ctx.tensor("self"), ctx.tensor("mat2")}, {ctx.output()});
}

}  // namespace

PARITY_TRANSLATION("torchao::dequantize_affine.default", dequantize_affine, 13);
PARITY_TRANSLATION("torchao::quantize_affine.default", quantize_affine, 13);
PARITY_TRANSLATION("torchao::choose_qparams_affine.default", choose_qparams_affine, 13);
PARITY_TRANSLATION("aten::_int_mm.default", int_mm, 10);

}  // namespace parity::exporter
