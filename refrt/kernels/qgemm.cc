// The integer GEMM (see qgemm.h): 6 x 16 tiles of int32 accumulators over int16 pairs (vpmaddwd),
// the whole K in registers, work split over tiles on the session's pool.
#include "qgemm.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "parity/refrt/cpu_isa.h"

namespace parity::refrt::qgemm {
namespace {

// PARITY_REFRT_ISA=scalar caps this too, so the tests run the portable loop on AVX2 machines.
const bool kAvx2 = isa_allows(IsaLevel::kAvx2);

// c[rows, 16] (row stride ldc) = a[rows, kp] x panel, or c += that (`Add`).
template <int R, bool Add>
__attribute__((target("avx2"))) void tile_avx2(const int16_t* a, int64_t lda, const int16_t* panel, int64_t kp,
                                               int32_t* c, int64_t ldc) {
  // The row loops are unrolled so that the 2R accumulators stay in registers (no spills at -O2).
  __m256i acc0[R], acc1[R];
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
    if (Add) {
      acc0[r] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c + r * ldc));
      acc1[r] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c + r * ldc + 8));
    } else {
      acc0[r] = acc1[r] = _mm256_setzero_si256();
    }
  }
  for (int64_t k = 0; k < kp; k += 2) {
    const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + k * kPanel));
    const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + k * kPanel + 16));
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      int32_t pair;
      std::memcpy(&pair, a + r * lda + k, 4);
      const __m256i av = _mm256_set1_epi32(pair);
      acc0[r] = _mm256_add_epi32(acc0[r], _mm256_madd_epi16(av, b0));
      acc1[r] = _mm256_add_epi32(acc1[r], _mm256_madd_epi16(av, b1));
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + r * ldc), acc0[r]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + r * ldc + 8), acc1[r]);
  }
}

template <bool Add>
void tile_rows_avx2(int rows, const int16_t* a, int64_t lda, const int16_t* panel, int64_t kp, int32_t* c,
                    int64_t ldc) {
  switch (rows) {
    case 1:
      return tile_avx2<1, Add>(a, lda, panel, kp, c, ldc);
    case 2:
      return tile_avx2<2, Add>(a, lda, panel, kp, c, ldc);
    case 3:
      return tile_avx2<3, Add>(a, lda, panel, kp, c, ldc);
    case 4:
      return tile_avx2<4, Add>(a, lda, panel, kp, c, ldc);
    case 5:
      return tile_avx2<5, Add>(a, lda, panel, kp, c, ldc);
    default:
      return tile_avx2<6, Add>(a, lda, panel, kp, c, ldc);
  }
}

// The same integers (two's complement wrap-around, as vpaddd) in portable code.
void tile_portable(int rows, const int16_t* a, int64_t lda, const int16_t* panel, int64_t kp, int32_t* c, int64_t ldc,
                   bool add) {
  for (int r = 0; r < rows; ++r)
    for (int64_t col = 0; col < kPanel; ++col) {
      uint32_t s = add ? static_cast<uint32_t>(c[r * ldc + col]) : 0;
      for (int64_t k = 0; k < kp; k += 2)
        s += static_cast<uint32_t>(a[r * lda + k] * panel[k * kPanel + col * 2] +
                                   a[r * lda + k + 1] * panel[k * kPanel + col * 2 + 1]);
      c[r * ldc + col] = static_cast<int32_t>(s);
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

void tile(int rows, const int16_t* a, int64_t lda, const int16_t* panel, int64_t kp, int32_t* c, int64_t ldc,
          bool add) {
  if (!kAvx2) return tile_portable(rows, a, lda, panel, kp, c, ldc, add);
  if (add) return tile_rows_avx2<true>(rows, a, lda, panel, kp, c, ldc);
  tile_rows_avx2<false>(rows, a, lda, panel, kp, c, ldc);
}

bool uses_avx2() { return kAvx2; }

void balanced_for(const KernelIO& io, int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  const int64_t per = std::max<int64_t>(std::max<int64_t>(grain, 1), (n + 15) / 16), chunks = (n + per - 1) / per;
  parallel_each(io, chunks, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) fn(c * per, std::min(n, (c + 1) * per));
  });
}

namespace {

constexpr int64_t kBlockTiles = 32;  // row tiles per item: a block's sums are 192 x 16 int32 (12 KB)
constexpr int64_t kPiece = 256;      // k per piece: an 8 KB panel slice stays in L1 for all the block's tiles

// The sums of row tiles [t0, t1) against panel p into c (row stride 16), k in pieces of kPiece.
void block_sums(int64_t m, const int16_t* a, int64_t lda, const PackedB& b, int64_t p, int64_t t0, int64_t t1,
                int32_t* c) {
  const int16_t* panel = b.data.data() + p * b.kp * kPanel;
  for (int64_t k0 = 0; k0 < b.kp; k0 += kPiece) {
    const int64_t kc = std::min(kPiece, b.kp - k0);
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t r0 = t * kRows, rows = std::min(kRows, m - r0);
      tile(static_cast<int>(rows), a + r0 * lda + k0, lda, panel + k0 * kPanel, kc, c + (r0 - t0 * kRows) * kPanel,
           kPanel, k0 > 0);
    }
  }
}

}  // namespace

void gemm_blocks(const KernelIO& io, int64_t m, const int16_t* a, int64_t lda, const PackedB& b,
                 const BlockSink& sink) {
  const int64_t mt = (m + kRows - 1) / kRows, panels = b.panels();
  if (m == 0 || b.n == 0) return;
  const int64_t blocks = (mt + kBlockTiles - 1) / kBlockTiles;
  // Consecutive items share the larger operand's part (a panel, or a block of rows), which then stays in
  // cache while the smaller one streams past it.
  const bool panel_major = b.data.size() >= static_cast<size_t>(m * lda);
  const int64_t per_item = std::min(mt, kBlockTiles) * kRows * kPanel * b.kp;
  const int64_t grain = std::max<int64_t>(1, 262144 / std::max<int64_t>(1, per_item));
  balanced_for(io, panels * blocks, grain, [&](int64_t i0, int64_t i1) {
    alignas(32) int32_t sums[kBlockTiles * kRows * kPanel];
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t p = panel_major ? i / blocks : i % panels, blk = panel_major ? i % blocks : i / panels;
      const int64_t t0 = blk * kBlockTiles, t1 = std::min(mt, t0 + kBlockTiles);
      block_sums(m, a, lda, b, p, t0, t1, sums);
      const int64_t r0 = t0 * kRows;
      sink(r0, std::min(m, t1 * kRows) - r0, p * kPanel, sums, kPanel, std::min(kPanel, b.n - p * kPanel));
    }
  });
}

void gemm(const KernelIO& io, int64_t m, const int16_t* a, int64_t lda, const PackedB& b, int32_t* c, int64_t ldc) {
  gemm_blocks(io, m, a, lda, b,
              [&](int64_t r0, int64_t rows, int64_t c0, const int32_t* sums, int64_t ld, int64_t cols) {
                for (int64_t r = 0; r < rows; ++r)
                  std::memcpy(c + (r0 + r) * ldc + c0, sums + r * ld, static_cast<size_t>(cols) * 4);
              });
}

}  // namespace parity::refrt::qgemm
