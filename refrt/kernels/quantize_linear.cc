// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear (ai.onnx), as the ONNX spec and its
// reference implementation compute them:
//   DequantizeLinear  y = (x - zero_point) * scale, in float32, rounded once to the output type
//                     (the scale's type; opset 23's output_dtype attribute may name another float).
//   QuantizeLinear    y = saturate(rint(x / scale) + zero_point): the quotient is taken in float32 and
//                     rounded to the scale's 16-bit type when x and scale share it (numpy's float16
//                     division), or to opset 23's `precision`; rint rounds halves to even. NaN -> the
//                     range's low end (numpy's int32 cast of NaN, then the clip).
// Parameters are per tensor (opset 10), per axis (opset 13) or blocked along `axis` (opset 21,
// block_size); the quantized types are int8/uint8 (opset 10), int16/uint16 (opset 21) and int32 for
// DequantizeLinear's input. int4/uint4/int2 and the float8/float4 formats are refused with the op and
// the dtype named (refrt's Tensor does not store them).
#include <algorithm>
#include <cmath>
#include <limits>

#include "../src/dispatch.h"
#include "quantize_common.h"

namespace parity::refrt {
namespace quant {

bool is_quantized_int(DType t) {
  return t == DType::kInt8 || t == DType::kUInt8 || t == DType::kInt16 || t == DType::kUInt16;
}

void int_range(DType t, int64_t& lo, int64_t& hi) {
  switch (t) {
    case DType::kInt8:
      lo = -128;
      hi = 127;
      return;
    case DType::kUInt8:
      lo = 0;
      hi = 255;
      return;
    case DType::kInt16:
      lo = -32768;
      hi = 32767;
      return;
    case DType::kUInt16:
      lo = 0;
      hi = 65535;
      return;
    default:
      lo = std::numeric_limits<int32_t>::min();
      hi = std::numeric_limits<int32_t>::max();
      return;
  }
}

std::string onnx_type_name(int64_t elem_type) {
  switch (elem_type) {
    case 17:
      return "float8e4m3fn";
    case 18:
      return "float8e4m3fnuz";
    case 19:
      return "float8e5m2";
    case 20:
      return "float8e5m2fnuz";
    case 21:
      return "uint4";
    case 22:
      return "int4";
    case 23:
      return "float4e2m1";
    case 24:
      return "float8e8m0";
    case 25:
      return "uint2";
    case 26:
      return "int2";
    default:
      return dtype_is_supported(static_cast<int32_t>(elem_type)) ? dtype_name(static_cast<DType>(elem_type))
                                                                 : "element type " + std::to_string(elem_type);
  }
}

float float_at(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kFloat32:
      return t.data<float>()[i];
    case DType::kFloat16:
      return half_to_float(t.data<uint16_t>()[i]);
    case DType::kBFloat16:
      return bf16_to_float(t.data<uint16_t>()[i]);
    default:
      return 0;
  }
}

int32_t int_at(const Tensor& t, int64_t i) {
  int32_t v = 0;
  dispatch_numeric(t.dtype(), [&](auto zero) { v = static_cast<int32_t>(t.data<decltype(zero)>()[i]); });
  return v;
}

std::vector<int32_t> zero_points(const NodeDef& node, const Tensor* zp, DType want, int64_t n, const char* what) {
  if (!zp) return {0};
  if (zp->dtype() != want)
    node.fail(std::string(what) + " dtype " + dtype_name(zp->dtype()) + " differs from its input's " +
              dtype_name(want));
  if (zp->numel() == 1) return {int_at(*zp, 0)};
  if (n < 0 || zp->rank() != 1 || zp->numel() != n)
    node.fail(std::string(what) + " must be a scalar" + (n < 0 ? "" : " or 1-D of size " + std::to_string(n)) +
              ", got shape " + shape_str(zp->shape()));
  std::vector<int32_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = int_at(*zp, i);
  return v;
}

ParamLayout param_layout(const NodeDef& node, const Shape& x, const Tensor& scale, const Tensor* zero_point,
                         int64_t axis, int64_t block_size) {
  // Shapes [] and [1] both mean one value (ONNX Runtime's quantizer writes them mixed).
  if (zero_point &&
      (zero_point->numel() != scale.numel() || (scale.numel() > 1 && zero_point->shape() != scale.shape())))
    node.fail("zero point shape " + shape_str(zero_point->shape()) + " differs from scale shape " +
              shape_str(scale.shape()));
  ParamLayout l;
  const int64_t rank = static_cast<int64_t>(x.size());
  // One element is per tensor (as the reference reads it, also for a one-block blocked scale).
  if (scale.numel() == 1 && (scale.rank() <= 1 || block_size > 0)) {
    for (int64_t d : x) l.inner *= d;  // one row of every element
    return l;
  }
  if (node.opset < 13) node.fail("scale must be a scalar before opset 13, got shape " + shape_str(scale.shape()));
  if (axis < -rank || axis >= rank)
    node.fail("axis " + std::to_string(axis) + " is out of range for input of rank " + std::to_string(rank));
  const size_t a = static_cast<size_t>(axis < 0 ? axis + rank : axis);
  for (size_t d = 0; d < x.size(); ++d) (d < a ? l.outer : l.inner) *= d == a ? 1 : x[d];
  l.axis_len = x[a];
  if (block_size == 0) {
    if (scale.rank() != 1 || scale.numel() != l.axis_len)
      node.fail("per-axis scale must be 1-D of size " + std::to_string(l.axis_len) + " (input dim " +
                std::to_string(a) + "), got shape " + shape_str(scale.shape()));
    l.kind = ParamLayout::Kind::kAxis;
    return l;
  }
  if (block_size < 0) node.fail("block_size must be positive, got " + std::to_string(block_size));
  l.kind = ParamLayout::Kind::kBlocked;
  l.block = block_size;
  l.nblocks = (l.axis_len + block_size - 1) / block_size;
  Shape want = x;
  want[a] = l.nblocks;
  if (scale.shape() != want)
    node.fail("blocked scale must have shape " + shape_str(want) + " (input " + shape_str(x) + ", block_size " +
              std::to_string(block_size) + " on axis " + std::to_string(a) + "), got " + shape_str(scale.shape()));
  return l;
}

float round_to(float v, DType t) {
  if (t == DType::kFloat16) return half_to_float(float_to_half(v));
  if (t == DType::kBFloat16) return bf16_to_float(float_to_bf16(v));
  return v;
}

void requantize_block(const int32_t* acc, int64_t rows, int64_t cols, const std::vector<double>& mult,
                      const std::vector<double>& offset, bool per_row, DType out, double lo, double hi, void* y) {
  const bool one = mult.size() == 1;
  const size_t esize = dtype_size(out);
  for (int64_t r = 0; r < rows; ++r) {
    const size_t k = one || !per_row ? 0 : static_cast<size_t>(r);
    requantize_row(acc + r * cols, cols, mult.data() + k, offset.data() + k, !one && !per_row, lo, hi, out,
                   static_cast<uint8_t*>(y) + static_cast<size_t>(r * cols) * esize);
  }
}

}  // namespace quant

namespace {

using quant::ParamLayout;

bool is_float_scale(DType t) { return t == DType::kFloat32 || is_float16_like(t); }

// The scale as float32 and the zero point as int32 (0 when absent), whatever their stored types.
void widen_params(const Tensor& scale, const Tensor* zp, std::vector<float>& s, std::vector<int32_t>& z) {
  s.resize(static_cast<size_t>(scale.numel()));
  for (int64_t i = 0; i < scale.numel(); ++i) s[static_cast<size_t>(i)] = quant::float_at(scale, i);
  z.assign(s.size(), 0);
  if (zp)
    for (int64_t i = 0; i < zp->numel(); ++i) z[static_cast<size_t>(i)] = quant::int_at(*zp, i);
}

// fn(o, a, param_row, param_step) for every row of x viewed as [outer, axis_len, inner], on the pool.
template <typename Fn>
void for_rows(const KernelIO& io, const ParamLayout& l, Fn&& fn) {
  const int64_t rows = l.outer * l.axis_len;
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(l.inner, 1));
  parallel_for(io, rows, grain, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
      fn(r / l.axis_len, r % l.axis_len, l.row(r / l.axis_len, r % l.axis_len), l.step());
  });
}

DType checked_float_type(const NodeDef& node, int64_t elem, const char* what) {
  if (!dtype_is_supported(static_cast<int32_t>(elem)) || !is_float_scale(static_cast<DType>(elem)))
    node.fail(std::string(what) + " " + quant::onnx_type_name(elem) + " is not supported (float32, float16, bfloat16)",
              ErrorKind::kUnsupported);
  return static_cast<DType>(elem);
}

class DequantizeLinearKernel : public Kernel {
 public:
  explicit DequantizeLinearKernel(const NodeDef& node)
      : node_(node), axis_(node.attr_int("axis", 1)), block_(node.opset >= 21 ? node.attr_int("block_size", 0) : 0) {
    const int64_t out = node.opset >= 23 ? node.attr_int("output_dtype", 0) : 0;
    if (out != 0) output_ = checked_float_type(node, out, "output_dtype");
  }

  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    const Tensor& scale = io.in(1);
    const Tensor* zp = io.optional(2);
    if (!quant::is_quantized_int(x.dtype()) && x.dtype() != DType::kInt32)
      node_.fail("input dtype " + dtype_name(x.dtype()) + " is not supported (int8, uint8, int16, uint16, int32)",
                 ErrorKind::kUnsupported);
    if (zp && zp->dtype() != x.dtype())
      node_.fail("zero point dtype " + dtype_name(zp->dtype()) + " differs from input dtype " + dtype_name(x.dtype()));
    if (!is_float_scale(scale.dtype()))
      node_.fail("scale dtype " + dtype_name(scale.dtype()) + " is not supported (float32, float16, bfloat16)",
                 ErrorKind::kUnsupported);
    const ParamLayout l = quant::param_layout(node_, x.shape(), scale, zp, axis_, block_);
    std::vector<float> s;
    std::vector<int32_t> z;
    widen_params(scale, zp, s, z);
    const DType out_type = output_ == DType::kUndefined ? scale.dtype() : output_;
    Tensor y(DType::kFloat32, x.shape());
    float* py = y.data<float>();
    dispatch_numeric(x.dtype(), [&](auto zero) {
      using X = decltype(zero);
      const X* px = x.data<X>();
      if (l.kind == ParamLayout::Kind::kTensor) {  // per tensor: one flat loop on the pool
        const float s0 = s[0];
        const int32_t z0 = z[0];
        parallel_for(io, x.numel(), 16384, [&](int64_t i0, int64_t i1) {
          int64_t i = i0 + quant::dequantize_8bit_prefix(px + i0, x.dtype(), i1 - i0, s0, z0, py + i0);
          for (; i < i1; ++i) py[i] = static_cast<float>(static_cast<int64_t>(px[i]) - z0) * s0;
        });
        return;
      }
      for_rows(io, l, [&](int64_t o, int64_t a, int64_t p, int64_t step) {
        const int64_t base = (o * l.axis_len + a) * l.inner;
        const float* sp = s.data() + p;
        const int32_t* zpp = z.data() + p;
        for (int64_t i = 0; i < l.inner; ++i)  // x - zp exact in int64, one rounding to float as numpy
          py[base + i] = static_cast<float>(static_cast<int64_t>(px[base + i]) - zpp[i * step]) * sp[i * step];
      });
    });
    io.outputs[0] = out_type == DType::kFloat32 ? std::move(y) : narrow_from_float32(y, out_type);
  }

 private:
  NodeDef node_;
  int64_t axis_, block_;
  DType output_ = DType::kUndefined;
};

// One quantized value: rint(q) + zp clamped to [lo, hi]; NaN -> lo. q is clamped to one step beyond the
// range first, then rounded half to even by adding and taking off 1.5 * 2^23 (exact for |q| < 2^22;
// std::nearbyint is a libm call per element on baseline x86-64).
inline float saturate(float q, int32_t zp, float lo, float hi) {
  const float a = lo - static_cast<float>(zp) - 1, b = hi - static_cast<float>(zp) + 1;
  q = q >= a ? (q <= b ? q : b) : a;
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23
  const float r = ((q + kMagic) - kMagic) + static_cast<float>(zp);
  return r >= lo ? (r > hi ? hi : r) : lo;
}

class QuantizeLinearKernel : public Kernel {
 public:
  explicit QuantizeLinearKernel(const NodeDef& node)
      : node_(node), axis_(node.attr_int("axis", 1)), block_(node.opset >= 21 ? node.attr_int("block_size", 0) : 0) {
    const int64_t out = node.opset >= 21 ? node.attr_int("output_dtype", 0) : 0;
    if (out != 0) {
      if (!dtype_is_supported(static_cast<int32_t>(out)) || !quant::is_quantized_int(static_cast<DType>(out)))
        node.fail("output_dtype " + quant::onnx_type_name(out) + " is not supported (int8, uint8, int16, uint16)",
                  ErrorKind::kUnsupported);
      output_ = static_cast<DType>(out);
    }
    const int64_t precision = node.opset >= 23 ? node.attr_int("precision", 0) : 0;
    if (precision != 0) precision_ = checked_float_type(node, precision, "precision");
    node.attr_int("saturate", 1);  // float8 only; typed check of the attribute
  }

  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    const Tensor& scale = io.in(1);
    const Tensor* zp = io.optional(2);
    if (!is_float_scale(x.dtype()) && x.dtype() != DType::kInt32)
      node_.fail("input dtype " + dtype_name(x.dtype()) + " is not supported (float32, float16, bfloat16, int32)",
                 ErrorKind::kUnsupported);
    if (!is_float_scale(scale.dtype()))
      node_.fail("scale dtype " + dtype_name(scale.dtype()) + " is not supported (float32, float16, bfloat16)",
                 ErrorKind::kUnsupported);
    DType out = zp ? zp->dtype() : (output_ == DType::kUndefined ? DType::kUInt8 : output_);
    if (zp && output_ != DType::kUndefined && zp->dtype() != output_)
      node_.fail("zero point dtype " + dtype_name(zp->dtype()) + " differs from output_dtype " + dtype_name(output_));
    if (!quant::is_quantized_int(out))
      node_.fail("zero point dtype " + dtype_name(out) + " is not supported (int8, uint8, int16, uint16)",
                 ErrorKind::kUnsupported);
    const ParamLayout l = quant::param_layout(node_, x.shape(), scale, zp, axis_, block_);
    std::vector<float> s;
    std::vector<int32_t> z;
    widen_params(scale, zp, s, z);
    // The quotient's rounding: numpy divides float16 by float16 in float16 (the float32 quotient
    // rounded once to 16 bits is the same value); `precision` names the type explicitly.
    DType round_to =
        precision_ != DType::kUndefined ? precision_ : (x.dtype() == scale.dtype() ? x.dtype() : DType::kFloat32);
    const Tensor xf = x.dtype() == DType::kInt32 ? x : widen_to_float32(x);
    Tensor y(out, x.shape());
    int64_t lo64 = 0, hi64 = 0;
    quant::int_range(out, lo64, hi64);
    const float lo = static_cast<float>(lo64), hi = static_cast<float>(hi64);
    dispatch_numeric(out, [&](auto zero) {
      using Y = decltype(zero);
      Y* py = y.data<Y>();
      if (l.kind == ParamLayout::Kind::kTensor && x.dtype() == DType::kFloat32 && round_to == DType::kFloat32) {
        // Per tensor, float32 (activations in QDQ graphs): a loop the compiler vectorises, on the pool.
        const float* px = x.data<float>();
        const float s0 = s[0];
        const int32_t z0 = z[0];
        parallel_for(io, x.numel(), 16384, [&](int64_t i0, int64_t i1) {
          int64_t i = i0 + quant::quantize_8bit_prefix(px + i0, i1 - i0, s0, z0, out, py + i0);
          for (; i < i1; ++i) py[i] = static_cast<Y>(saturate(px[i] / s0, z0, lo, hi));
        });
        return;
      }
      for_rows(io, l, [&](int64_t o, int64_t a, int64_t p, int64_t step) {
        const int64_t base = (o * l.axis_len + a) * l.inner;
        const float* sp = s.data() + p;
        const int32_t* zpp = z.data() + p;
        for (int64_t i = 0; i < l.inner; ++i) {
          float q = quotient(xf, base + i, sp[i * step], round_to);
          py[base + i] = static_cast<Y>(saturate(q, zpp[i * step], lo, hi));
        }
      });
    });
    io.outputs[0] = std::move(y);
  }

 private:
  // x / scale: in float32 (int32 x in double, as numpy promotes it), rounded to `round_to`.
  static float quotient(const Tensor& x, int64_t i, float s, DType round_to) {
    if (x.dtype() == DType::kInt32) return static_cast<float>(static_cast<double>(x.data<int32_t>()[i]) / s);
    const float q = x.data<float>()[i] / s;
    if (round_to == DType::kFloat16) return half_to_float(float_to_half(q));
    if (round_to == DType::kBFloat16) return bf16_to_float(float_to_bf16(q));
    return q;
  }

  NodeDef node_;
  int64_t axis_, block_;
  DType output_ = DType::kUndefined, precision_ = DType::kUndefined;
};

// uint8 quantization of a float32 tensor with its own scale and zero point, step by step as the ONNX
// reference computes them in float32: range [min(0, min x), max(0, max x)], scale = range / 255,
// zero point = rint(clamp(-min / scale, 0, 255)).
class DynamicQuantizeLinearKernel : public Kernel {
 public:
  explicit DynamicQuantizeLinearKernel(const NodeDef& node) : node_(node) {}

  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    if (x.dtype() != DType::kFloat32)
      node_.fail("input dtype " + dtype_name(x.dtype()) + " is not supported (float32)", ErrorKind::kUnsupported);
    const float* px = x.data<float>();
    float mx = 0, mn = 0;
    for (int64_t i = 0; i < x.numel(); ++i) {
      mx = std::max(mx, px[i]);
      mn = std::min(mn, px[i]);
    }
    const float scale = (mx == mn ? 1.0f : mx - mn) / 255.0f;
    const float zpf = std::clamp(0.0f - mn / scale, 0.0f, 255.0f);
    const int32_t zp = static_cast<int32_t>(quant::round_half_even(zpf));
    Tensor y(DType::kUInt8, x.shape());
    uint8_t* py = y.data<uint8_t>();
    parallel_for(io, x.numel(), 16384, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) py[i] = static_cast<uint8_t>(saturate(px[i] / scale, zp, 0.0f, 255.0f));
    });
    io.outputs[0] = std::move(y);
    if (io.outputs.size() > 1) io.outputs[1] = Tensor::scalar<float>(DType::kFloat32, scale);
    if (io.outputs.size() > 2) io.outputs[2] = Tensor::scalar<uint8_t>(DType::kUInt8, static_cast<uint8_t>(zp));
  }

 private:
  NodeDef node_;
};

const std::vector<DType> kQuantizeInputs = {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kInt32};
const std::vector<DType> kDequantizeInputs = {DType::kInt8, DType::kUInt8, DType::kInt16, DType::kUInt16,
                                              DType::kInt32};

}  // namespace

// 10: per tensor; 13: axis (per axis); 19: float16/bfloat16 scales (and float8, not stored);
// 21: block_size, int16/uint16, QuantizeLinear's output_dtype; 23: DequantizeLinear's output_dtype,
// QuantizeLinear's precision.
PARITY_KERNEL("QuantizeLinear", 10, QuantizeLinearKernel, kQuantizeInputs);
PARITY_KERNEL("QuantizeLinear", 13, QuantizeLinearKernel, kQuantizeInputs);
PARITY_KERNEL("QuantizeLinear", 19, QuantizeLinearKernel, kQuantizeInputs);
PARITY_KERNEL("QuantizeLinear", 21, QuantizeLinearKernel, kQuantizeInputs);
PARITY_KERNEL("QuantizeLinear", 23, QuantizeLinearKernel, kQuantizeInputs);
PARITY_KERNEL("DequantizeLinear", 10, DequantizeLinearKernel, kDequantizeInputs);
PARITY_KERNEL("DequantizeLinear", 13, DequantizeLinearKernel, kDequantizeInputs);
PARITY_KERNEL("DequantizeLinear", 19, DequantizeLinearKernel, kDequantizeInputs);
PARITY_KERNEL("DequantizeLinear", 21, DequantizeLinearKernel, kDequantizeInputs);
PARITY_KERNEL("DequantizeLinear", 23, DequantizeLinearKernel, kDequantizeInputs);
PARITY_KERNEL("DynamicQuantizeLinear", 11, DynamicQuantizeLinearKernel, {DType::kFloat32});

}  // namespace parity::refrt
