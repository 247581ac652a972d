// sgemm_avx2_tiles.h: the packed GEMM's register tiles, built with -mavx2 -mfma -falign-loops=32. No header but the
// intrinsics': an inline function of a shared header compiled here with AVX2 could be the copy the linker keeps for
// every caller, on any CPU.
#include "sgemm_avx2_tiles.h"

#include <immintrin.h>

namespace parity::refrt::sgemm_tiles {
namespace {

constexpr int64_t kPanel = 16;  // PackedSgemmB::kPanel (sgemm_packed.cc checks it)

template <int kRows>
void tile(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, Store store, const float* bias,
          Prefetch pf) {
  __m256 acc[kRows][2];
#pragma GCC unroll 6
  for (int r = 0; r < kRows; ++r) {
    acc[r][0] = acc[r][1] = _mm256_setzero_ps();
    // The tile's rows of C, asked for now and written at the end: in a model C is mostly a buffer last touched long
    // ago, and each store that misses waited on its line (LLaMA-style prefill 512 208.7 -> 196.5 ms, Whisper-tiny
    // 113.8 -> 110.2, BERT x4 82.0 -> 80.0; AMD EPYC Zen 2, one thread; prefetchw measured the same).
    // (Its 16 floats span two lines where C's rows are not 64-byte multiples.)
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc + kPanel - 1), _MM_HINT_T0);
  }
  int64_t due = pf.lines > 0 ? 0 : kc;
  for (int64_t p = 0; p < kc; ++p) {
    const __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
    b += kPanel;
    if (p == due) {
      _mm_prefetch(reinterpret_cast<const char*>(pf.at), _MM_HINT_T0);
      pf.at += kPanel;
      due = --pf.lines > 0 ? due + pf.every : kc;
    }
#pragma GCC unroll 6
    for (int r = 0; r < kRows; ++r) {
      const __m256 av = _mm256_broadcast_ss(a + p * kRows + r);
      acc[r][0] = _mm256_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(av, b1, acc[r][1]);
    }
  }
  const __m256 add0 = bias ? _mm256_loadu_ps(bias) : _mm256_setzero_ps();
  const __m256 add1 = bias ? _mm256_loadu_ps(bias + 8) : _mm256_setzero_ps();
#pragma GCC unroll 6
  for (int r = 0; r < kRows; ++r) {
    float* row = c + r * ldc;
    const __m256 c0 = store == Store::kFirst ? add0 : _mm256_loadu_ps(row);
    const __m256 c1 = store == Store::kFirst ? add1 : _mm256_loadu_ps(row + 8);
    _mm256_storeu_ps(row, _mm256_add_ps(c0, acc[r][0]));
    _mm256_storeu_ps(row + 8, _mm256_add_ps(c1, acc[r][1]));
  }
}

}  // namespace

const TileFn kTiles[7] = {nullptr, tile<1>, tile<2>, tile<3>, tile<4>, tile<5>, tile<6>};

}  // namespace parity::refrt::sgemm_tiles
