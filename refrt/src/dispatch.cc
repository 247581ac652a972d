#include "dispatch.h"

#include <immintrin.h>

#include "parity/refrt/cpu_isa.h"

namespace parity::refrt {
namespace {

// Why these loops: a float16/bfloat16 node widens its inputs and narrows its outputs on every run, so the
// conversions are on the hot path of every half-precision model. Written as plain integer arithmetic (the
// same rounding as parity/float16.h: nearest even, NaN kept NaN with its sign) so that the compiler
// vectorises them; float16 uses the F16C instructions where refrt's level has AVX2 and CPUID says F16C (a
// hypervisor may hide F16C from a guest that has AVX2; they round exactly as IEEE says).
inline float bf16_bits_to_float(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline uint16_t float_to_bf16_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const bool nan = (u & 0x7fffffffu) > 0x7f800000u;
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  return static_cast<uint16_t>(nan ? ((u >> 16) & 0x8000u) | 0x7fc0u : rounded);
}

// Inlined into each target-specific caller below, so that they are vectorised for its ISA.
template <bool kHalf>
[[gnu::always_inline]] inline void widen_span(const uint16_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = kHalf ? half_to_float(src[i]) : bf16_bits_to_float(src[i]);
}

template <bool kHalf>
[[gnu::always_inline]] inline void narrow_span(const float* src, uint16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = kHalf ? float_to_half(src[i]) : float_to_bf16_bits(src[i]);
}

#if defined(__x86_64__)
__attribute__((target("avx2"))) void bf16_widen_avx2(const uint16_t* src, float* dst, int64_t n) {
  widen_span<false>(src, dst, n);
}
__attribute__((target("avx2"))) void bf16_narrow_avx2(const float* src, uint16_t* dst, int64_t n) {
  narrow_span<false>(src, dst, n);
}
__attribute__((target("avx2,f16c"))) void half_widen_f16c(const uint16_t* src, float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
  widen_span<true>(src + i, dst + i, n - i);
}
__attribute__((target("avx2,f16c"))) void half_round_f16c(float* data, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(data + i, _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_loadu_ps(data + i), _MM_FROUND_TO_NEAREST_INT)));
  for (; i < n; ++i) data[i] = half_to_float(float_to_half(data[i]));
}
__attribute__((target("avx2"))) void bf16_round_avx2(float* data, int64_t n) {
  for (int64_t i = 0; i < n; ++i) data[i] = bf16_bits_to_float(float_to_bf16_bits(data[i]));
}
__attribute__((target("avx2,f16c"))) void half_narrow_f16c(const float* src, uint16_t* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
  narrow_span<true>(src + i, dst + i, n - i);
}
#endif

bool use_avx2() {
  static const bool avx2 = isa_allows(IsaLevel::kAvx2);
  return avx2;
}

bool use_f16c() {
  static const bool f16c = use_avx2() && cpu_has(CpuFeature::kF16c);
  return f16c;
}

}  // namespace

const char* half_conversion_path() { return use_f16c() ? "f16c" : "portable"; }

void widen_span(DType from, const uint16_t* src, float* dst, int64_t n) {
  const bool half = from == DType::kFloat16;
#if defined(__x86_64__)
  if (half && use_f16c()) return half_widen_f16c(src, dst, n);
  if (!half && use_avx2()) return bf16_widen_avx2(src, dst, n);
#endif
  half ? widen_span<true>(src, dst, n) : widen_span<false>(src, dst, n);
}

void narrow_span(DType to, const float* src, uint16_t* dst, int64_t n) {
  const bool half = to == DType::kFloat16;
#if defined(__x86_64__)
  if (half && use_f16c()) return half_narrow_f16c(src, dst, n);
  if (!half && use_avx2()) return bf16_narrow_avx2(src, dst, n);
#endif
  half ? narrow_span<true>(src, dst, n) : narrow_span<false>(src, dst, n);
}

void round_through(DType to, float* data, int64_t n) {
  const bool half = to == DType::kFloat16;
#if defined(__x86_64__)
  if (half && use_f16c()) return half_round_f16c(data, n);
  if (!half && use_avx2()) return bf16_round_avx2(data, n);
#endif
  for (int64_t i = 0; i < n; ++i)
    data[i] = half ? half_to_float(float_to_half(data[i])) : bf16_bits_to_float(float_to_bf16_bits(data[i]));
}

Tensor widen_to_float32(const Tensor& t, const KernelIO* io) {
  if (!is_float16_like(t.dtype())) return t;
  Tensor out(DType::kFloat32, t.shape());
  const auto* src = static_cast<const uint16_t*>(t.raw());
  float* dst = out.data<float>();
  const auto body = [&](int64_t b, int64_t e) { widen_span(t.dtype(), src + b, dst + b, e - b); };
  io ? parallel_for(*io, t.numel(), 1 << 16, body) : body(0, t.numel());
  return out;
}

Tensor narrow_from_float32(const Tensor& t, DType to, const KernelIO* io) {
  Tensor out(to, t.shape());
  const float* src = t.data<float>();
  auto* dst = static_cast<uint16_t*>(out.mutable_raw());
  const auto body = [&](int64_t b, int64_t e) { narrow_span(to, src + b, dst + b, e - b); };
  io ? parallel_for(*io, t.numel(), 1 << 16, body) : body(0, t.numel());
  return out;
}

}  // namespace parity::refrt
