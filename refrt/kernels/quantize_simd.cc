// AVX2 loops for the per-tensor 8-bit paths that QDQ models run on every activation: requantization
// of int32 sums, QuantizeLinear from float32 and DequantizeLinear to float32. Each computes the same
// values as the scalar code in quantize_linear.cc / quantize_common.h, operation for operation:
//  - requantize: double(acc) * multiplier + offset (two roundings, no FMA: these functions are compiled
//    for AVX2 without FMA, so nothing is contracted), clamped, rounded half to even (vroundpd in the
//    nearest mode, which the magic-number rounding of the scalar code also computes);
//  - quantize: x / scale in float32 (a division, not a reciprocal), clamped to one step beyond the range
//    (NaN to the low end: maxps returns its second operand when the first is NaN), rounded half to even
//    (vcvtps2dq under the default rounding mode), plus the zero point, saturated by the packs;
//  - dequantize: (x - zero_point) exactly in int32, converted exactly, one float32 multiply.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "../src/dispatch.h"
#include "parity/refrt/cpu_isa.h"
#include "quantize_common.h"

namespace parity::refrt::quant {
namespace {

const bool kAvx2 = isa_allows(IsaLevel::kAvx2);

// 8 int32 (each already inside the 8-bit range, or one past it) to 8 bytes, saturating.
__attribute__((target("avx2"))) inline void store8(__m256i v, bool is_signed, void* y) {
  const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  const __m128i b = is_signed ? _mm_packs_epi16(w, w) : _mm_packus_epi16(w, w);
  _mm_storel_epi64(static_cast<__m128i*>(y), b);
}

// The multiplier and offset of element i: mult[0] for all, or mult[i] (`per_elem`).
__attribute__((target("avx2"))) inline __m256d param4(const double* p, int64_t i, bool per_elem) {
  return per_elem ? _mm256_loadu_pd(p + i) : _mm256_set1_pd(p[0]);
}

__attribute__((target("avx2"))) int64_t requantize_avx2(const int32_t* acc, int64_t n, const double* mult,
                                                        const double* offset, bool per_elem, double lo, double hi,
                                                        bool is_signed, uint8_t* y) {
  const __m256d l = _mm256_set1_pd(lo), h = _mm256_set1_pd(hi);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc + i));
    __m256d d0 = _mm256_cvtepi32_pd(_mm256_castsi256_si128(a)), d1 = _mm256_cvtepi32_pd(_mm256_extracti128_si256(a, 1));
    d0 = _mm256_add_pd(_mm256_mul_pd(d0, param4(mult, i, per_elem)), param4(offset, i, per_elem));
    d1 = _mm256_add_pd(_mm256_mul_pd(d1, param4(mult, i + 4, per_elem)), param4(offset, i + 4, per_elem));
    d0 = _mm256_round_pd(_mm256_min_pd(_mm256_max_pd(d0, l), h), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    d1 = _mm256_round_pd(_mm256_min_pd(_mm256_max_pd(d1, l), h), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    store8(_mm256_set_m128i(_mm256_cvtpd_epi32(d1), _mm256_cvtpd_epi32(d0)), is_signed, y + i);
  }
  return i;
}

// requantize_f32 of 8 sums (quantize_common.h): mul and add (this function is compiled without FMA, so
// they are not contracted), clamp, vcvtps2dq (halves to even in the default rounding mode).
__attribute__((target("avx2"))) inline __m256i requantize8_f32(__m256i acc, __m256 mult, __m256 offset, __m256 lo,
                                                               __m256 hi) {
  const __m256 v = _mm256_add_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(acc), mult), offset);
  return _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(v, lo), hi));
}

// The float32 form (requantize_f32) of requantize_avx2 above.
__attribute__((target("avx2"))) int64_t requantize_avx2(const int32_t* acc, int64_t n, const float* mult,
                                                        const float* offset, bool per_elem, float lo, float hi,
                                                        bool is_signed, uint8_t* y) {
  const __m256 l = _mm256_set1_ps(lo), h = _mm256_set1_ps(hi);
  const __m256 m1 = _mm256_set1_ps(mult[0]), o1 = _mm256_set1_ps(offset[0]);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc + i));
    const __m256 m = per_elem ? _mm256_loadu_ps(mult + i) : m1, o = per_elem ? _mm256_loadu_ps(offset + i) : o1;
    store8(requantize8_f32(a, m, o, l, h), is_signed, y + i);
  }
  return i;
}

__attribute__((target("avx2"))) int64_t quantize_avx2(const float* x, int64_t n, float scale, int32_t zp, float lo,
                                                      float hi, bool is_signed, uint8_t* y) {
  const __m256 s = _mm256_set1_ps(scale), a = _mm256_set1_ps(lo - static_cast<float>(zp) - 1),
               b = _mm256_set1_ps(hi - static_cast<float>(zp) + 1);
  const __m256i z = _mm256_set1_epi32(zp);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 q = _mm256_div_ps(_mm256_loadu_ps(x + i), s);
    q = _mm256_min_ps(_mm256_max_ps(q, a), b);
    store8(_mm256_add_epi32(_mm256_cvtps_epi32(q), z), is_signed, y + i);
  }
  return i;
}

__attribute__((target("avx2"))) int64_t dequantize_avx2(const uint8_t* x, int64_t n, bool is_signed, float scale,
                                                        int32_t zp, float* y) {
  const __m256 s = _mm256_set1_ps(scale);
  const __m256i z = _mm256_set1_epi32(zp);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(x + i));
    const __m256i v = is_signed ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
    _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(v, z)), s));
  }
  return i;
}

bool is_8bit(DType t) { return t == DType::kInt8 || t == DType::kUInt8; }

// requantize_tile's AVX2 body (16 columns; the caller pads mult / offset to 16), with the double
// (requantize) or the float32 (requantize_f32) arithmetic.
template <typename P>
__attribute__((target("avx2"))) void requantize_tile_avx2(const int32_t* sums, int rows, int64_t cols, const P* mult,
                                                          const P* offset, P lo, P hi, bool is_signed, uint8_t* y,
                                                          int64_t ystride) {
  alignas(16) uint8_t q[8][16] = {};
  for (int r = 0; r < rows; ++r) requantize_avx2(sums + r * 16, 16, mult, offset, true, lo, hi, is_signed, q[r]);
  // 8 positions x 16 channels of bytes to 16 channels x 8 positions: three rounds of interleaving.
  __m128i a[8], b[8], c[8];
  for (int i = 0; i < 4; ++i) {
    const __m128i r0 = _mm_load_si128(reinterpret_cast<const __m128i*>(q[2 * i])),
                  r1 = _mm_load_si128(reinterpret_cast<const __m128i*>(q[2 * i + 1]));
    a[2 * i] = _mm_unpacklo_epi8(r0, r1);      // channels 0-7 of positions 2i, 2i + 1
    a[2 * i + 1] = _mm_unpackhi_epi8(r0, r1);  // channels 8-15
  }
  for (int h = 0; h < 2; ++h)      // positions 0-3 (h = 0) and 4-7
    for (int i = 0; i < 2; ++i) {  // channels 0-7 (i = 0) and 8-15
      b[4 * h + 2 * i] = _mm_unpacklo_epi16(a[4 * h + i], a[4 * h + 2 + i]);
      b[4 * h + 2 * i + 1] = _mm_unpackhi_epi16(a[4 * h + i], a[4 * h + 2 + i]);
    }
  for (int i = 0; i < 4; ++i) {  // c[2i], c[2i + 1]: channels 4i .. 4i + 3, eight positions each
    c[2 * i] = _mm_unpacklo_epi32(b[i], b[4 + i]);
    c[2 * i + 1] = _mm_unpackhi_epi32(b[i], b[4 + i]);
  }
  for (int64_t j = 0; j < cols; ++j) {
    alignas(16) uint8_t v[16];
    _mm_store_si128(reinterpret_cast<__m128i*>(v), c[j / 2]);
    uint8_t* dst = y + j * ystride;
    const uint8_t* src = v + (j % 2) * 8;
    if (rows == 6) {  // a whole tile: two fixed-size copies instead of a library call
      std::memcpy(dst, src, 4);
      std::memcpy(dst + 4, src + 4, 2);
    } else {
      for (int r = 0; r < rows; ++r) dst[r] = src[r];
    }
  }
}

}  // namespace

void requantize_row(const int32_t* acc, int64_t n, const double* mult, const double* offset, bool per_column, double lo,
                    double hi, DType out, void* y) {
  int64_t i = 0;
  if (kAvx2 && is_8bit(out))
    i = requantize_avx2(acc, n, mult, offset, per_column, lo, hi, out == DType::kInt8, static_cast<uint8_t*>(y));
  dispatch_numeric(out, [&](auto zero) {
    using Y = decltype(zero);
    Y* py = static_cast<Y*>(y);
    for (; i < n; ++i) {
      const int64_t k = per_column ? i : 0;
      py[i] = static_cast<Y>(requantize(acc[i], mult[k], offset[k], lo, hi));
    }
  });
}

namespace {

// The AVX2 tile with the parameters read in place for a whole panel of 16 channels, else (the last panel)
// from copies padded to 16.
template <typename P>
void requantize_tile_simd(const int32_t* sums, int rows, int64_t cols, const P* mult, const P* offset, P lo, P hi,
                          bool is_signed, uint8_t* y, int64_t ystride) {
  if (cols == 16) return requantize_tile_avx2<P>(sums, rows, cols, mult, offset, lo, hi, is_signed, y, ystride);
  P m16[16] = {}, o16[16] = {};
  std::copy(mult, mult + cols, m16);
  std::copy(offset, offset + cols, o16);
  requantize_tile_avx2<P>(sums, rows, cols, m16, o16, lo, hi, is_signed, y, ystride);
}

}  // namespace

void requantize_row_f32(const int32_t* acc, int64_t n, const float* mult, const float* offset, bool per_column,
                        float lo, float hi, DType out, uint8_t* y) {
  if (!is_8bit(out)) throw Error({}, "requantize_f32 writes int8 / uint8, not " + dtype_name(out));
  const bool s = out == DType::kInt8;
  int64_t i = kAvx2 ? requantize_avx2(acc, n, mult, offset, per_column, lo, hi, s, y) : 0;
  for (; i < n; ++i) {
    const int64_t k = per_column ? i : 0;
    const int32_t q = requantize_f32(acc[i], mult[k], offset[k], lo, hi);
    y[i] = s ? static_cast<uint8_t>(static_cast<int8_t>(q)) : static_cast<uint8_t>(q);
  }
}

void requantize_tile_f32(const int32_t* sums, int rows, int64_t cols, const float* mult, const float* offset, float lo,
                         float hi, DType out, uint8_t* y, int64_t ystride) {
  if (kAvx2 && is_8bit(out) && rows <= 8)
    return requantize_tile_simd(sums, rows, cols, mult, offset, lo, hi, out == DType::kInt8, y, ystride);
  uint8_t q[16];
  for (int r = 0; r < rows; ++r) {
    requantize_row_f32(sums + r * 16, cols, mult, offset, true, lo, hi, out, q);
    for (int64_t j = 0; j < cols; ++j) y[j * ystride + r] = q[j];
  }
}

void requantize_tile(const int32_t* sums, int rows, int64_t cols, const double* mult, const double* offset, double lo,
                     double hi, DType out, uint8_t* y, int64_t ystride) {
  if (kAvx2 && is_8bit(out) && rows <= 8)
    return requantize_tile_simd(sums, rows, cols, mult, offset, lo, hi, out == DType::kInt8, y, ystride);
  const size_t esize = dtype_size(out);
  alignas(8) uint8_t q[16 * sizeof(int32_t)];
  for (int r = 0; r < rows; ++r) {
    requantize_row(sums + r * 16, cols, mult, offset, true, lo, hi, out, q);
    for (int64_t j = 0; j < cols; ++j)
      std::memcpy(y + static_cast<size_t>(j * ystride + r) * esize, q + static_cast<size_t>(j) * esize, esize);
  }
}

int64_t quantize_8bit_prefix(const float* x, int64_t n, float scale, int32_t zp, DType out, void* y) {
  if (!kAvx2 || !is_8bit(out)) return 0;
  const bool s = out == DType::kInt8;
  return quantize_avx2(x, n, scale, zp, s ? -128.0f : 0.0f, s ? 127.0f : 255.0f, s, static_cast<uint8_t*>(y));
}

int64_t dequantize_8bit_prefix(const void* x, DType t, int64_t n, float scale, int32_t zp, float* y) {
  if (!kAvx2 || !is_8bit(t)) return 0;
  return dequantize_avx2(static_cast<const uint8_t*>(x), n, t == DType::kInt8, scale, zp, y);
}

}  // namespace parity::refrt::quant
