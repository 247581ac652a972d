// Internal: what the quantization kernels share. The layout of a scale / zero point against the
// tensor it quantizes (per tensor, per axis, blocked), the integer ranges of the quantized dtypes, and
// the rounding rule (round half to even, as ONNX's QuantizeLinear and numpy.rint).
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "../src/kernel.h"

namespace parity::refrt::quant {

// The quantized integer dtypes refrt stores (int4/uint4, int2 and the float8/float4 formats are
// not storable in refrt's Tensor: a model using them is refused with the op and dtype named).
bool is_quantized_int(DType t);
// [lo, hi] of an integer dtype.
void int_range(DType t, int64_t& lo, int64_t& hi);
// The name of an ONNX TensorProto element type, also for the ones refrt cannot store ("int4", "float8e4m3fn").
std::string onnx_type_name(int64_t elem_type);

// Where the parameter of element (outer, a, inner) of x lives, x viewed as [outer, axis_len, inner].
// Per tensor: index 0. Per axis: index a. Blocked (block_size B along axis): (outer * nblocks + a / B)
// * inner + inner_index. `row(o, a)` is the offset of the parameter row and `step` its stride along inner.
struct ParamLayout {
  int64_t outer = 1, axis_len = 1, inner = 1;
  int64_t block = 0, nblocks = 1;
  enum class Kind { kTensor, kAxis, kBlocked } kind = Kind::kTensor;
  int64_t row(int64_t o, int64_t a) const {
    switch (kind) {
      case Kind::kTensor:
        return 0;
      case Kind::kAxis:
        return a;
      default:
        return (o * nblocks + a / block) * inner;
    }
  }
  int64_t step() const { return kind == Kind::kBlocked ? 1 : 0; }
};

// Checks `scale` (and `zero_point` when given) against x's shape for `axis` / `block_size` and
// returns their layout; fails naming the node on any mismatch. `opset` < 13 allows a scalar only.
ParamLayout param_layout(const NodeDef& node, const Shape& x, const Tensor& scale, const Tensor* zero_point,
                         int64_t axis, int64_t block_size);

// A floating scale element (float32, float16 or bfloat16) as float.
float float_at(const Tensor& t, int64_t i);
// An integer element of a quantized dtype as int32.
int32_t int_at(const Tensor& t, int64_t i);

// The int32 zero points of an optional input of QLinear*/ *Integer ops: {0} when absent, one per tensor,
// or `n` (per column / output channel; n < 0: a scalar only); `want` is its input's dtype.
std::vector<int32_t> zero_points(const NodeDef& node, const Tensor* zp, DType want, int64_t n, const char* what);

// nearbyint in the default rounding mode: halves to even.
inline float round_half_even(float v) { return std::nearbyint(v); }

}  // namespace parity::refrt::quant

namespace parity::refrt::quant {

// The requantization of an int32 sum, as the ONNX reference computes it for QLinearMatMul / QLinearConv:
// rint(acc * multiplier + offset) in double (numpy promotes int32 x float32 to float64), clamped to
// [lo, hi]. `offset` is the output zero point (plus a float bias term where a fused node has one).
// Clamped first (lo and hi are integers, so clamping and rounding commute), then rounded half to even by
// adding and taking off 1.5 * 2^52 (exact for |v| < 2^51, the default rounding mode; std::nearbyint is a
// libm call per element on baseline x86-64, which made the epilogue the kernel's main cost).
inline int32_t requantize(int32_t acc, double multiplier, double offset, double lo, double hi) {
  double v = static_cast<double>(acc) * multiplier + offset;
  v = v < lo ? lo : (v > hi ? hi : v);
  constexpr double kMagic = 6755399441055744.0;  // 1.5 * 2^52
  return static_cast<int32_t>((v + kMagic) - kMagic);
}

// The fused QDQ nodes' epilogue (QConv / QGemm), in float32 as ONNX Runtime's fused kernels compute it:
// float(acc) * mult + offset (two float32 roundings, no FMA, the same on every ISA path), clamped, rounded
// half to even by adding and taking off 1.5 * 2^23 (exact for |v| < 2^22; lo and hi are 8-bit bounds).
// float(acc) is exact below 2^24 and each rounding is 6e-8 relative, so against the double requantize()
// the value moves by about 1e-4 of a step at most: it changes only next to a .5 tie, by one step, the rule
// the fused plans are held to. It is five vector instructions per 8 sums against the double form's 15.
inline int32_t requantize_f32(int32_t acc, float mult, float offset, float lo, float hi) {
  float v = static_cast<float>(acc) * mult + offset;
  v = v < lo ? lo : (v > hi ? hi : v);
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23
  return static_cast<int32_t>((v + kMagic) - kMagic);
}

// A float rounded to `t` (float16 / bfloat16; float32 unchanged): numpy's arithmetic in the scales' type.
float round_to(float v, DType t);

// Writes requantize(acc[i] * mult[row or col]) of an int32 [rows, cols] block into y (int8 / uint8 /
// int16 / uint16 `out`), mult/offset indexed by row (`per_row`) or by column, or [0] when size 1.
void requantize_block(const int32_t* acc, int64_t rows, int64_t cols, const std::vector<double>& mult,
                      const std::vector<double>& offset, bool per_row, DType out, double lo, double hi, void* y);

// requantize() of acc[0, n) into y (int8 / uint8 / int16 / uint16 `out`) with mult[0] / offset[0], or
// mult[i] / offset[i] (`per_column`); AVX2 for the 8-bit types (quantize_simd.cc).
void requantize_row(const int32_t* acc, int64_t n, const double* mult, const double* offset, bool per_column, double lo,
                    double hi, DType out, void* y);

// A convolution tile's sums (rows <= 16 positions x cols <= 16 channels, row stride 16) requantized with
// per-channel mult[j] / offset[j] into y transposed, as the NCHW output wants it: y[(j * ystride + r) * size].
void requantize_tile(const int32_t* sums, int rows, int64_t cols, const double* mult, const double* offset, double lo,
                     double hi, DType out, uint8_t* y, int64_t ystride);

// requantize_f32 of acc[0, n) into the 8-bit `out` with mult[0] / offset[0], or mult[i] / offset[i]
// (`per_column`), and of a convolution tile into its NCHW output as requantize_tile (AVX2 where the CPU has it).
void requantize_row_f32(const int32_t* acc, int64_t n, const float* mult, const float* offset, bool per_column,
                        float lo, float hi, DType out, uint8_t* y);
void requantize_tile_f32(const int32_t* sums, int rows, int64_t cols, const float* mult, const float* offset, float lo,
                         float hi, DType out, uint8_t* y, int64_t ystride);

// Per-tensor QuantizeLinear of float32 x into 8-bit `out` / DequantizeLinear of 8-bit x into float32, AVX2
// (quantize_simd.cc): they handle a prefix of the n elements (a multiple of 8; 0 without AVX2 or for
// other dtypes) and return its length; the caller's scalar loop does the rest with the same results.
int64_t quantize_8bit_prefix(const float* x, int64_t n, float scale, int32_t zp, DType out, void* y);
int64_t dequantize_8bit_prefix(const void* x, DType t, int64_t n, float scale, int32_t zp, float* y);

}  // namespace parity::refrt::quant
