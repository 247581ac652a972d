// PT2E quantization (torch.ao / torchao `quantized_decomposed` ops) -> standard ONNX QDQ.
//
// quantize_* become QuantizeLinear and dequantize_* DequantizeLinear, scale and zero point as initializers
// where torch has constants, so a DequantizeLinear of an int8 weight feeds Conv/MatMul/Gemm directly and
// runtimes recognise the QDQ patterns (the int8 weight stays an int8 initializer). Dynamic quantization's
// choose_qparams is spelled out with torch's own arithmetic (min/max including 0, eps, zero point rounding
// and clamping): DynamicQuantizeLinear is uint8-only and has no eps, so it cannot express it exactly.
//
// Exactness: dequantize is bit-exact ((q - zp) * scale in float32, as torch). torch quantizes with
// round(x * float(1 / scale)), ONNX with round(x / scale): the two differ by one ulp at most before the
// rounding, i.e. by one quantization step where x / scale falls on a rounding tie; the verifier's
// quantized comparison rule allows exactly that step (docs/quantization.md).
//
// Schemes ONNX's QDQ cannot hold (float8, per-token, group-wise/int4 blocks, fake quantization) are refused
// with an error naming the op and the scheme, never emitted as a custom-domain node.
#include <cstring>
#include <limits>

#include "../src/translate.h"

namespace parity::exporter {
namespace {

// torch's ScalarType numbering in the export schema (torch/_export/serde/schema.yaml).
bool is_float8(int32_t torch_dtype) { return torch_dtype >= 29 && torch_dtype <= 33; }

// The integer dtype of the quantized tensor (the `dtype` argument), checked against what ONNX's
// QuantizeLinear / DequantizeLinear hold at the export opset. `dequantize`: int32 is allowed too (DQ only).
DType quantized_dtype(TranslateContext& ctx, bool dequantize) {
  const pt2::Argument* a = ctx.arg("dtype");
  if (!a || !a->is(pt2::ArgKind::as_scalar_type)) ctx.fail("argument 'dtype' must be a dtype");
  const auto torch_dtype = static_cast<int32_t>(a->typed().as_scalar_type());
  if (is_float8(torch_dtype))
    ctx.fail("float8 quantization (" + a->describe() +
             ") is not supported: Parity exports int8/uint8 QDQ "
             "(int16/uint16 from opset 21)");
  const DType t = pt2::dtype_from_torch(torch_dtype);
  if (t == DType::kInt8 || t == DType::kUInt8) return t;
  if (t == DType::kInt16 || t == DType::kUInt16) {
    if (ctx.opset < 21)
      ctx.fail("16-bit quantization (" + dtype_name(t) +
               ") needs QuantizeLinear/DequantizeLinear of opset 21; "
               "export with --opset 21 or newer (this export: opset " +
               std::to_string(ctx.opset) + ")");
    return t;
  }
  if (t == DType::kInt32 && dequantize) return t;
  ctx.fail("quantization to " + (t == DType::kUndefined ? a->describe() : dtype_name(t)) +
           " is not supported (ONNX QDQ holds int8/uint8, int16/uint16 from opset 21, int32 for dequantize)");
}

std::pair<int64_t, int64_t> dtype_range(DType t) { return quantized_dtype_range(t).value(); }

// A rank-0 initializer of an integer dtype holding `v` (a zero point or a clamp bound).
std::string int_initializer(TranslateContext& ctx, int64_t v, DType t, const std::string& hint) {
  Tensor c(t, {});
  switch (t) {
    case DType::kInt8:
      *c.data<int8_t>() = static_cast<int8_t>(v);
      break;
    case DType::kUInt8:
      *c.data<uint8_t>() = static_cast<uint8_t>(v);
      break;
    case DType::kInt16:
      *c.data<int16_t>() = static_cast<int16_t>(v);
      break;
    case DType::kUInt16:
      *c.data<uint16_t>() = static_cast<uint16_t>(v);
      break;
    case DType::kInt32:
      *c.data<int32_t>() = static_cast<int32_t>(v);
      break;
    default:
      ctx.fail("no integer initializer of dtype " + dtype_name(t));
  }
  const std::string name = ctx.temp(hint);
  ctx.graph.add_initializer(name, c);
  return name;
}

// A constant int argument, checked to fit the quantized dtype.
int64_t bounded_int(TranslateContext& ctx, const std::string& name, DType t) {
  const pt2::Argument& a = ctx.required(name);
  if (!a.is(pt2::ArgKind::as_int)) ctx.fail("argument '" + name + "' must be a constant int, got " + a.describe());
  const auto [lo, hi] = dtype_range(t);
  const int64_t v = a.as_int();
  if (v < lo || v > hi)
    ctx.fail("argument '" + name + "' = " + std::to_string(v) + " is outside the range of " + dtype_name(t));
  return v;
}

// A one-element scale/zero-point tensor argument as a rank-0 value of dtype `t` (ONNX per-tensor Q/DQ
// take scalars; torch's choose_qparams returns shape [1]).
std::string scalar_of_tensor(TranslateContext& ctx, const std::string& name, DType t) {
  const std::string v = ctx.value(name, t);
  return ctx.emit1("Reshape", {v, ctx.graph.constant_i64({})}, name + "_scalar");
}

// Per-tensor scale and zero point: constants for the `.default` overloads, tensors otherwise.
std::pair<std::string, std::string> per_tensor_qparams(TranslateContext& ctx, DType q) {
  const pt2::Argument& scale = ctx.required("scale");
  if (scale.is_tensor())
    return {scalar_of_tensor(ctx, "scale", DType::kFloat32), scalar_of_tensor(ctx, "zero_point", q)};
  // torch multiplies by the float32 rounding of the double `scale` when it dequantizes: the same float32.
  return {ctx.constant(scale.as_float(), DType::kFloat32),
          int_initializer(ctx, bounded_int(ctx, "zero_point", q), q, "zero_point")};
}

// The float input of a quantize, as float32 (torch converts float16/bfloat16 inputs first).
std::string float32_input(TranslateContext& ctx) {
  const DType t = ctx.input_meta("input").dtype;
  if (t != DType::kFloat32 && t != DType::kFloat16 && t != DType::kBFloat16)
    ctx.fail("quantize of a " + dtype_name(t) + " input: torch accepts float32, float16 and bfloat16 only");
  return ctx.cast_if_needed(ctx.tensor("input"), t, DType::kFloat32);
}

// QuantizeLinear into the node's output, then a Clip when [quant_min, quant_max] is narrower than the dtype
// (torch clamps to the given range, QuantizeLinear saturates to the dtype's).
void quantize_into_output(TranslateContext& ctx, const std::vector<std::string>& q_inputs, DType q,
                          std::optional<int64_t> axis) {
  const pt2::Argument& qmin_arg = ctx.required("quant_min");
  const bool tensor_bounds = qmin_arg.is_tensor();
  bool narrow = tensor_bounds;
  int64_t qmin = 0, qmax = 0;
  if (!tensor_bounds) {
    qmin = bounded_int(ctx, "quant_min", q);
    qmax = bounded_int(ctx, "quant_max", q);
    if (qmin > qmax) ctx.fail("quant_min " + std::to_string(qmin) + " > quant_max " + std::to_string(qmax));
    narrow = std::make_pair(qmin, qmax) != dtype_range(q);
  }
  const std::string quantized = narrow ? ctx.temp("saturated") : ctx.output();
  auto* node = ctx.emit("QuantizeLinear", q_inputs, {quantized});
  if (axis) set_attr(node, "axis", *axis);
  if (!narrow) return;
  const std::string lo =
      tensor_bounds ? scalar_of_tensor(ctx, "quant_min", q) : int_initializer(ctx, qmin, q, "quant_min");
  const std::string hi =
      tensor_bounds ? scalar_of_tensor(ctx, "quant_max", q) : int_initializer(ctx, qmax, q, "quant_max");
  ctx.emit("Clip", {quantized, lo, hi}, {ctx.output()});
}

// quantize_per_tensor{,.tensor,.tensor2}(input, scale, zero_point, quant_min, quant_max, dtype)
void quantize_per_tensor(TranslateContext& ctx) {
  const DType q = quantized_dtype(ctx, false);
  const std::string x = float32_input(ctx);
  const auto [scale, zero_point] = per_tensor_qparams(ctx, q);
  quantize_into_output(ctx, {x, scale, zero_point}, q, std::nullopt);
}

// The float dtype a dequantize produces (`out_dtype`, float32 when absent).
DType dequantize_out_dtype(TranslateContext& ctx) {
  const auto out = ctx.dtype_arg("out_dtype").value_or(DType::kFloat32);
  if (!dtype_is_floating(out)) ctx.fail("dequantize to " + dtype_name(out) + ": out_dtype must be floating");
  return out;
}

// dequantize_per_tensor{,.tensor,.tensor2}(input, scale, zero_point, quant_min, quant_max, dtype, out_dtype)
void dequantize_per_tensor(TranslateContext& ctx) {
  const DType q = quantized_dtype(ctx, true);
  const DType out = dequantize_out_dtype(ctx);
  const DType in = ctx.input_meta("input").dtype;
  if (in != q) ctx.fail("dequantize of a " + dtype_name(in) + " tensor declared as " + dtype_name(q));
  // out_dtype float16/bfloat16: torch's (input.to(out_dtype) - zero_point) is exact (|q - zp| <= 255) and its
  // product with the scalar scale runs in float32 then rounds once: DequantizeLinear then a Cast is the same.
  const std::string result = out == DType::kFloat32 ? ctx.output() : ctx.temp("dequantized");
  auto [scale, zero_point] = per_tensor_qparams(ctx, q);
  if (q == DType::kInt32) {  // ONNX allows int32 only with a zero point of 0 (no zero-point input)
    const pt2::Argument& zp = ctx.required("zero_point");
    if (!zp.is(pt2::ArgKind::as_int) || zp.as_int() != 0) ctx.fail("int32 dequantize needs a constant zero point of 0");
    ctx.emit("DequantizeLinear", {ctx.tensor("input"), scale}, {result});
  } else {
    ctx.emit("DequantizeLinear", {ctx.tensor("input"), scale, zero_point}, {result});
  }
  if (out != DType::kFloat32) set_attr(ctx.emit("Cast", {result}, {ctx.output()}), "to", static_cast<int64_t>(out));
}

// Per-channel scales (float32) and zero points (the quantized dtype), as 1-D values along `axis`.
int64_t channel_axis(TranslateContext& ctx) { return ctx.normalized_dim(ctx.int_arg("axis", 0), ctx.rank("input")); }

// quantize_per_channel(input, scales, zero_points, axis, quant_min, quant_max, dtype)
void quantize_per_channel(TranslateContext& ctx) {
  const DType q = quantized_dtype(ctx, false);
  const std::string x = float32_input(ctx);
  const std::string scales = ctx.value("scales", DType::kFloat32), zero_points = ctx.value("zero_points", q);
  quantize_into_output(ctx, {x, scales, zero_points}, q, channel_axis(ctx));
}

// dequantize_per_channel(input, scales, zero_points?, axis, quant_min, quant_max, dtype, out_dtype)
void dequantize_per_channel(TranslateContext& ctx) {
  const DType q = quantized_dtype(ctx, true);
  if (q == DType::kInt32) ctx.fail("per-channel dequantize of int32 is not supported");
  const DType out = dequantize_out_dtype(ctx);
  std::vector<std::string> inputs = {ctx.tensor("input"), ctx.value("scales", DType::kFloat32)};
  if (ctx.has("zero_points")) inputs.push_back(ctx.value("zero_points", q));
  const std::string result = out == DType::kFloat32 ? ctx.output() : ctx.temp("dequantized");
  set_attr(ctx.emit("DequantizeLinear", inputs, {result}), "axis", channel_axis(ctx));
  if (out != DType::kFloat32) set_attr(ctx.emit("Cast", {result}, {ctx.output()}), "to", static_cast<int64_t>(out));
}

// --- choose_qparams: torch's determine_qparams over the whole tensor, step by step in float32 ---

struct MinMax {
  std::string min_neg, max_pos;  // min(min(x), 0), max(max(x), 0): rank 0, float32
};

MinMax tensor_min_max(TranslateContext& ctx) {
  const DType t = ctx.input_meta("input").dtype;
  if (t != DType::kFloat32)
    ctx.fail("dynamic quantization (choose_qparams) of a " + dtype_name(t) + " input is not supported (float32 only)");
  const std::string x = ctx.tensor("input"), mn = ctx.temp("min"), mx = ctx.temp("max");
  emit_reduce(ctx, "ReduceMin", x, {}, false, mn);
  emit_reduce(ctx, "ReduceMax", x, {}, false, mx);
  const std::string zero = ctx.constant(0.0, DType::kFloat32);
  return {ctx.emit1("Min", {mn, zero}, "min_neg"), ctx.emit1("Max", {mx, zero}, "max_pos")};
}

// The qparams outputs as torch returns them: scale float64 [1], zero point int64 [1].
void bind_qparams(TranslateContext& ctx, const std::string& scale_f32, const std::string& zero_point) {
  const std::string one = ctx.graph.constant_i64({1});
  ctx.emit("Reshape", {ctx.cast_if_needed(scale_f32, DType::kFloat32, DType::kFloat64), one}, {ctx.output(0)});
  ctx.emit("Reshape", {zero_point, one}, {ctx.output(1)});
}

struct QRange {
  int64_t qmin, qmax;
};
QRange choose_range(TranslateContext& ctx, DType q) {
  const QRange r{bounded_int(ctx, "quant_min", q), bounded_int(ctx, "quant_max", q)};
  if (r.qmin >= r.qmax) ctx.fail("quant_min must be < quant_max");  // torch's validate_qmin_qmax
  return r;
}

// choose_qparams.tensor(input, quant_min, quant_max, eps, dtype) -> (scale, zero_point): affine.
void choose_qparams(TranslateContext& ctx) {
  const DType q = quantized_dtype(ctx, false);
  const QRange r = choose_range(ctx, q);
  const MinMax m = tensor_min_max(ctx);
  const std::string span = ctx.emit1("Sub", {m.max_pos, m.min_neg}, "span");
  std::string scale =
      ctx.emit1("Div", {span, ctx.constant(static_cast<double>(r.qmax - r.qmin), DType::kFloat32)}, "scale");
  scale = ctx.emit1("Max", {scale, ctx.constant(ctx.float_arg("eps", 0.0), DType::kFloat32)}, "scale_eps");
  // zero_point = clamp(quant_min - int32(round(min_neg / scale)), quant_min, quant_max)
  const std::string rounded = ctx.emit1("Round", {ctx.emit1("Div", {m.min_neg, scale})}, "min_steps");
  const std::string steps = ctx.cast_if_needed(rounded, DType::kFloat32, DType::kInt32);
  const std::string zp =
      ctx.emit1("Sub", {ctx.constant(static_cast<double>(r.qmin), DType::kInt32), steps}, "zero_point");
  const std::string clamped = ctx.emit1("Clip",
                                        {zp, ctx.constant(static_cast<double>(r.qmin), DType::kInt32),
                                         ctx.constant(static_cast<double>(r.qmax), DType::kInt32)},
                                        "zero_point_clamped");
  bind_qparams(ctx, scale, ctx.cast_if_needed(clamped, DType::kInt32, DType::kInt64));
}

// choose_qparams_symmetric.tensor(input, quant_min, quant_max, eps, dtype): zero point 0 (128 for uint8).
void choose_qparams_symmetric(TranslateContext& ctx) {
  const DType q = quantized_dtype(ctx, false);
  const QRange r = choose_range(ctx, q);
  const MinMax m = tensor_min_max(ctx);
  const std::string bound = ctx.emit1("Max", {ctx.emit1("Neg", {m.min_neg}), m.max_pos}, "abs_max");
  const double half_range = static_cast<double>(r.qmax - r.qmin) / 2;
  std::string scale = ctx.emit1("Div", {bound, ctx.constant(half_range, DType::kFloat32)}, "scale");
  scale = ctx.emit1("Max", {scale, ctx.constant(ctx.float_arg("eps", 0.0), DType::kFloat32)}, "scale_eps");
  bind_qparams(ctx, scale, ctx.constant(q == DType::kUInt8 ? 128.0 : 0.0, DType::kInt64));
}

// convert_element_type.no_fuse(input, dtype): a Cast that quantization passes must not fuse away.
void convert_element_type(TranslateContext& ctx) {
  const auto to = ctx.dtype_arg("dtype");
  if (!to) ctx.fail("argument 'dtype' is required");
  const std::string v = ctx.cast_if_needed(ctx.tensor("input"), ctx.input_meta("input").dtype, *to);
  ctx.alias_output(0, v);
}

// --- schemes ONNX QDQ cannot express: a clear refusal instead of a custom-domain node ---
[[noreturn]] void refuse(TranslateContext& ctx, const std::string& scheme) {
  ctx.fail(scheme +
           " is not supported by Parity's ONNX export (supported: per-tensor and per-channel int8/uint8 "
           "QDQ, static and dynamic per-tensor; see docs/quantization.md)");
}
void per_token(TranslateContext& ctx) { refuse(ctx, "per-token (dynamic per-row) quantization"); }
void per_channel_group(TranslateContext& ctx) {
  refuse(ctx, "group-wise (blockwise, e.g. int4 weight-only) quantization");
}
void fake_quant(TranslateContext& ctx) {
  refuse(ctx, "fake quantization (a QAT program: run convert_pt2e before torch.export)");
}

}  // namespace

std::optional<std::pair<int64_t, int64_t>> quantized_dtype_range(DType t) {
  switch (t) {
    case DType::kInt8:
      return std::make_pair(int64_t{-128}, int64_t{127});
    case DType::kUInt8:
      return std::make_pair(int64_t{0}, int64_t{255});
    case DType::kInt16:
      return std::make_pair(int64_t{-32768}, int64_t{32767});
    case DType::kUInt16:
      return std::make_pair(int64_t{0}, int64_t{65535});
    case DType::kInt32:
      return std::make_pair(int64_t{std::numeric_limits<int32_t>::min()}, int64_t{std::numeric_limits<int32_t>::max()});
    default:
      return std::nullopt;
  }
}

PARITY_TRANSLATION("quantized_decomposed::quantize_per_tensor.default", quantize_per_tensor, 10);
PARITY_TRANSLATION("quantized_decomposed::quantize_per_tensor.tensor", quantize_per_tensor, 10);
PARITY_TRANSLATION("quantized_decomposed::quantize_per_tensor.tensor2", quantize_per_tensor, 10);
PARITY_TRANSLATION("quantized_decomposed::dequantize_per_tensor.default", dequantize_per_tensor, 10);
PARITY_TRANSLATION("quantized_decomposed::dequantize_per_tensor.tensor", dequantize_per_tensor, 10);
PARITY_TRANSLATION("quantized_decomposed::dequantize_per_tensor.tensor2", dequantize_per_tensor, 10);
PARITY_TRANSLATION("quantized_decomposed::quantize_per_channel.default", quantize_per_channel, 13);
PARITY_TRANSLATION("quantized_decomposed::dequantize_per_channel.default", dequantize_per_channel, 13);
PARITY_TRANSLATION("quantized_decomposed::choose_qparams.tensor", choose_qparams, 13);
PARITY_TRANSLATION("quantized_decomposed::choose_qparams_symmetric.tensor", choose_qparams_symmetric, 13);
PARITY_TRANSLATION("quantized_decomposed::convert_element_type.no_fuse", convert_element_type, 1);
PARITY_TRANSLATION("quantized_decomposed::quantize_per_token.default", per_token, 1);
PARITY_TRANSLATION("quantized_decomposed::dequantize_per_token.default", per_token, 1);
PARITY_TRANSLATION("quantized_decomposed::choose_qparams_per_token.default", per_token, 1);
PARITY_TRANSLATION("quantized_decomposed::choose_qparams_per_token_asymmetric.default", per_token, 1);
PARITY_TRANSLATION("quantized_decomposed::_choose_qparams_per_token_asymmetric_impl.default", per_token, 1);
PARITY_TRANSLATION("quantized_decomposed::quantize_per_channel_group.default", per_channel_group, 1);
PARITY_TRANSLATION("quantized_decomposed::dequantize_per_channel_group.default", per_channel_group, 1);
PARITY_TRANSLATION("quantized_decomposed::fake_quant_per_channel.default", fake_quant, 1);

}  // namespace parity::exporter
