// The integer GEMM (see qgemm.h): 6 x 16 tiles of int32 accumulators over int16 pairs (vpmaddwd),
// the whole K in registers, work split over tiles on the session's pool.
#include "qgemm.h"

#include "../src/backend_probe.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>

#include "parity/refrt/cpu_isa.h"

namespace parity::refrt::qgemm {
namespace {

// PARITY_REFRT_ISA caps these too (scalar, avx2), so the tests run every kernel on an AVX-512 machine.
const bool kAvx2 = isa_allows(IsaLevel::kAvx2);
const bool kAvx512 = isa_allows(IsaLevel::kAvx512);
const bool kAvx512Vnni = isa_allows(IsaLevel::kAvx512Vnni);

// c[R, 16] (local tile, row stride 16) = sum over taps t of the runs a[r * taps + t][0, kc) x the panel's k rows
// [t * kc, (t + 1) * kc) (qgemm.h, tile_taps); a plain tile is one run per row.
template <int R>
__attribute__((target("avx2"))) void tile_taps_avx2(const int16_t* const* a, int64_t taps, int64_t kc,
                                                    const int16_t* panel, int32_t* c) {
  __m256i acc0[R], acc1[R];
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) acc0[r] = acc1[r] = _mm256_setzero_si256();
  for (int64_t t = 0; t < taps; ++t) {
    const int16_t* row[R];
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) row[r] = a[r * taps + t];
    const int16_t* pt = panel + t * kc * kPanel;
    for (int64_t k = 0; k < kc; k += 2) {
      const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(pt + k * kPanel));
      const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(pt + k * kPanel + 16));
#pragma GCC unroll 6
      for (int r = 0; r < R; ++r) {
        int32_t pair;
        std::memcpy(&pair, row[r] + k, 4);
        const __m256i av = _mm256_set1_epi32(pair);
        acc0[r] = _mm256_add_epi32(acc0[r], _mm256_madd_epi16(av, b0));
        acc1[r] = _mm256_add_epi32(acc1[r], _mm256_madd_epi16(av, b1));
      }
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + r * 16), acc0[r]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + r * 16 + 8), acc1[r]);
  }
}

// The same on AVX-512: one k pair of a panel (16 columns x 2) is one ZMM, each row's 16 sums one accumulator; with
// VNNI, vpdpwssd does vpmaddwd's products and the add in one instruction (no saturation: the same integers).
template <int R, bool Vnni>
__attribute__((target("avx512f,avx512bw,avx512vnni"))) void tile_taps_avx512(const int16_t* const* a, int64_t taps,
                                                                             int64_t kc, const int16_t* panel,
                                                                             int32_t* c) {
  __m512i acc[R];
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_si512();
  for (int64_t t = 0; t < taps; ++t) {
    const int16_t* row[R];
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) row[r] = a[r * taps + t];
    const int16_t* pt = panel + t * kc * kPanel;
    for (int64_t k = 0; k < kc; k += 2) {
      const __m512i b = _mm512_loadu_si512(pt + k * kPanel);
#pragma GCC unroll 6
      for (int r = 0; r < R; ++r) {
        int32_t pair;
        std::memcpy(&pair, row[r] + k, 4);
        if constexpr (Vnni)
          acc[r] = _mm512_dpwssd_epi32(acc[r], _mm512_set1_epi32(pair), b);
        else
          acc[r] = _mm512_add_epi32(acc[r], _mm512_madd_epi16(_mm512_set1_epi32(pair), b));
      }
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) _mm512_storeu_si512(c + r * 16, acc[r]);
}

void tile_taps_portable(int rows, const int16_t* const* a, int64_t taps, int64_t kc, const int16_t* panel, int32_t* c) {
  for (int r = 0; r < rows; ++r)
    for (int64_t col = 0; col < kPanel; ++col) {
      int32_t s = 0;
      for (int64_t t = 0; t < taps; ++t)
        for (int64_t k = 0; k < kc; ++k)
          s += a[r * taps + t][k] * panel[(t * kc + (k & ~1)) * kPanel + col * 2 + (k & 1)];
      c[r * 16 + col] = s;
    }
}

__attribute__((target("avx2"))) void interleave_avx2(const int16_t* r0, const int16_t* r1, int16_t* dst) {
  const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r0));
  const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r1));
  // unpack works within 128-bit lanes: lo = columns 0-3 | 8-11, hi = 4-7 | 12-15.
  const __m256i lo = _mm256_unpacklo_epi16(a, b), hi = _mm256_unpackhi_epi16(a, b);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), _mm256_permute2x128_si256(lo, hi, 0x20));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 16), _mm256_permute2x128_si256(lo, hi, 0x31));
}

__attribute__((target("avx2"))) void widen16_avx2(const void* src, bool is_signed, int32_t zp, int16_t* row) {
  const __m128i b = _mm_loadu_si128(static_cast<const __m128i*>(src));
  const __m256i v = is_signed ? _mm256_cvtepi8_epi16(b) : _mm256_cvtepu8_epi16(b);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(row),
                      _mm256_sub_epi16(v, _mm256_set1_epi16(static_cast<int16_t>(zp))));
}

__attribute__((target("avx2"))) void widen16_stride2_avx2(const void* src, bool is_signed, int32_t zp, int16_t* row) {
  const __m256i b = _mm256_loadu_si256(static_cast<const __m256i*>(src));
  // The even bytes are the low bytes of the 16-bit lanes: zero- or sign-extended in place.
  const __m256i v =
      is_signed ? _mm256_srai_epi16(_mm256_slli_epi16(b, 8), 8) : _mm256_and_si256(b, _mm256_set1_epi16(0xff));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(row),
                      _mm256_sub_epi16(v, _mm256_set1_epi16(static_cast<int16_t>(zp))));
}

}  // namespace

void widen16_stride2(const void* src, bool is_signed, int32_t zp, int16_t* row) {
  if (kAvx2) return widen16_stride2_avx2(src, is_signed, zp, row);
  for (int j = 0; j < kPanel; ++j)
    row[j] = static_cast<int16_t>(
        (is_signed ? static_cast<const int8_t*>(src)[2 * j] : static_cast<const uint8_t*>(src)[2 * j]) - zp);
}

void widen16(const void* src, bool is_signed, int32_t zp, int16_t* row) {
  if (kAvx2) return widen16_avx2(src, is_signed, zp, row);
  for (int j = 0; j < kPanel; ++j)
    row[j] = static_cast<int16_t>(
        (is_signed ? static_cast<const int8_t*>(src)[j] : static_cast<const uint8_t*>(src)[j]) - zp);
}

void interleave_pair(const int16_t* r0, const int16_t* r1, int16_t* dst) {
  if (kAvx2) return interleave_avx2(r0, r1, dst);
  for (int j = 0; j < kPanel; ++j) {
    dst[2 * j] = r0[j];
    dst[2 * j + 1] = r1[j];
  }
}

namespace {

// fn(std::integral_constant<int, R>) for R = rows in [1, kRows]: the tiles are unrolled per row count.
template <typename Fn>
void with_rows(int rows, Fn&& fn) {
  switch (rows) {
    case 1:
      return fn(std::integral_constant<int, 1>{});
    case 2:
      return fn(std::integral_constant<int, 2>{});
    case 3:
      return fn(std::integral_constant<int, 3>{});
    case 4:
      return fn(std::integral_constant<int, 4>{});
    case 5:
      return fn(std::integral_constant<int, 5>{});
    default:
      return fn(std::integral_constant<int, 6>{});
  }
}

}  // namespace

void tile(int rows, const int16_t* a, int64_t lda, const int16_t* panel, int64_t kp, int32_t* c) {
  const int16_t* row[kRows];
  for (int r = 0; r < rows; ++r) row[r] = a + r * lda;
  tile_taps(rows, row, 1, kp, panel, c);
}

void tile_taps(int rows, const int16_t* const* a, int64_t taps, int64_t kc, const int16_t* panel, int32_t* c) {
  if (!kAvx2) return tile_taps_portable(rows, a, taps, kc, panel, c);
  if (kAvx512Vnni)
    return with_rows(rows, [&](auto r) { tile_taps_avx512<decltype(r)::value, true>(a, taps, kc, panel, c); });
  if (kAvx512)
    return with_rows(rows, [&](auto r) { tile_taps_avx512<decltype(r)::value, false>(a, taps, kc, panel, c); });
  with_rows(rows, [&](auto r) { tile_taps_avx2<decltype(r)::value>(a, taps, kc, panel, c); });
}

bool uses_avx2() { return kAvx2; }

std::string_view label() {
  const char* isa = kAvx512Vnni ? "avx512_vnni" : kAvx512 ? "avx512" : kAvx2 ? "avx2" : "portable";
  static const std::string_view l = intern_impl(std::string("refrt qgemm (") + isa + ")");
  return l;
}

void balanced_for(const KernelIO& io, int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  const int64_t per = std::max<int64_t>(std::max<int64_t>(grain, 1), (n + 15) / 16), chunks = (n + per - 1) / per;
  parallel_each(io, chunks, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) fn(c * per, std::min(n, (c + 1) * per));
  });
}

void gemm(const KernelIO& io, int64_t m, const int16_t* a, int64_t lda, const PackedB& b, int32_t* c, int64_t ldc) {
  gemm_tiles(io, m, a, lda, b, [&](int64_t r0, int rows, int64_t c0, int64_t cols, const int32_t* tile) {
    for (int r = 0; r < rows; ++r) std::memcpy(c + (r0 + r) * ldc + c0, tile + r * 16, static_cast<size_t>(cols) * 4);
  });
}

void gemm_tiles(const KernelIO& io, int64_t m, const int16_t* a, int64_t lda, const PackedB& b, const GemmSink& sink) {
  const int64_t mt = (m + kRows - 1) / kRows, panels = b.panels();
  if (m == 0 || b.n == 0) return;
  backend_probe::hit(Backend::kRefrtQgemm);
  io.impl = label();
  // The outer loop walks the larger operand once; the inner one reuses the smaller from cache.
  const bool panel_outer = b.data.size() >= static_cast<size_t>(m * lda);
  const int64_t outer = panel_outer ? panels : mt, inner = panel_outer ? mt : panels;
  const int64_t grain = std::max<int64_t>(1, 262144 / std::max<int64_t>(1, inner * kRows * kPanel * b.kp));
  balanced_for(io, outer, grain, [&](int64_t o0, int64_t o1) {
    alignas(32) int32_t local[kRows * 16];
    for (int64_t o = o0; o < o1; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t p = panel_outer ? o : i, t = panel_outer ? i : o;
        const int64_t r0 = t * kRows, rows = std::min(kRows, m - r0);
        const int64_t c0 = p * kPanel, cols = std::min(kPanel, b.n - c0);
        tile(static_cast<int>(rows), a + r0 * lda, lda, b.data.data() + p * b.kp * kPanel, b.kp, local);
        sink(r0, static_cast<int>(rows), c0, cols, local);
      }
  });
}

}  // namespace parity::refrt::qgemm
