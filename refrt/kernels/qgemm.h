// Internal: the integer GEMM of the quantized kernels. C[M, N] (int32) = A[M, K] x B[K, N], where A and B
// hold 8-bit values with their zero points already subtracted, widened to int16 ([-255, 255]).
//
// Why int16 and not the u8 x s8 byte products (vpmaddubsw): those add two products in a saturating
// int16, and 255 * 127 * 2 > 32767, so some weights give wrong sums (ONNX Runtime's AVX2 u8s8 path
// accepts that; its docs advise 7-bit weights). vpmaddwd multiplies int16 pairs into int32 exactly:
// every sum here is the exact integer, wrapping modulo 2^32 only past K ~ 33000, as numpy's int32 does.
//
// Layouts: A is int16 rows of `kp` elements (K rounded up to even, the pad zero). B is packed once
// (weights: at load) into panels of 16 columns; within a panel, k pairs: for each pair, 16 columns x
// (k, k + 1). The AVX-512 or AVX2 kernel is chosen at run time from the CPU's feature bits (and refrt's caps);
// a portable loop computes the same integers elsewhere.
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "../src/kernel.h"

namespace parity::refrt::qgemm {

constexpr int64_t kPanel = 16;
constexpr int64_t kRows = 6;  // rows of one GEMM tile

inline int64_t even(int64_t k) { return (k + 1) & ~int64_t{1}; }

struct PackedB {
  int64_t k = 0, n = 0, kp = 0;
  std::vector<int16_t> data;  // ceil(n / 16) panels of kp * 16
  int64_t panels() const { return (n + kPanel - 1) / kPanel; }
};

// B from `src` (element (k, n) at src[k * sk + n * sn]) minus its zero point (per column: zp[n], else zp[0]).
template <typename T>
PackedB pack_b(const T* src, int64_t k, int64_t n, int64_t sk, int64_t sn, const int32_t* zp, bool per_column) {
  PackedB b;
  b.k = k;
  b.n = n;
  b.kp = even(k);
  b.data.assign(static_cast<size_t>(b.panels() * b.kp * kPanel), 0);
  for (int64_t p = 0; p < b.panels(); ++p) {
    int16_t* dst = b.data.data() + p * b.kp * kPanel;
    const int64_t cols = std::min(kPanel, n - p * kPanel);
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t c = 0; c < cols; ++c) {
        const int64_t col = p * kPanel + c;
        dst[(kk / 2) * 2 * kPanel + c * 2 + (kk & 1)] =
            static_cast<int16_t>(static_cast<int32_t>(src[kk * sk + col * sn]) - zp[per_column ? col : 0]);
      }
  }
  return b;
}

// One A row: `dst[0, kp)` = src[0, k) - zp, the pad zero.
template <typename T>
void widen_row(const T* src, int64_t k, int32_t zp, int16_t* dst) {
  for (int64_t i = 0; i < k; ++i) dst[i] = static_cast<int16_t>(static_cast<int32_t>(src[i]) - zp);
  if (k & 1) dst[k] = 0;
}

// C[m, b.n] (row stride ldc) = A x B; A rows of b.kp int16 at stride lda. Work split on io's pool.
void gemm(const KernelIO& io, int64_t m, const int16_t* a, int64_t lda, const PackedB& b, int32_t* c, int64_t ldc);

// The same product handed over tile by tile while it is in cache: rows [r0, r0 + rows) x columns
// [c0, c0 + cols) of C in tile[r * 16 + j] (a fused epilogue requantizes there instead of storing int32 C).
using GemmSink = std::function<void(int64_t r0, int rows, int64_t c0, int64_t cols, const int32_t* tile)>;
void gemm_tiles(const KernelIO& io, int64_t m, const int16_t* a, int64_t lda, const PackedB& b, const GemmSink& sink);

// c[rows, 16] (row stride 16) = a[rows, kp] (row stride lda) x one packed panel; rows in [1, kRows].
void tile(int rows, const int16_t* a, int64_t lda, const int16_t* panel, int64_t kp, int32_t* c);

// c[rows, 16] (row stride 16) = sum over taps t of a[r * taps + t][0, kc) x the panel's k rows [t * kc, (t + 1) * kc):
// a tile whose A rows are runs of kc values at separate addresses (a convolution's taps); kc even.
void tile_taps(int rows, const int16_t* const* a, int64_t taps, int64_t kc, const int16_t* panel, int32_t* c);

// One k pair of a panel: dst[2 * j + 0] = r0[j], dst[2 * j + 1] = r1[j] for the 16 columns j.
void interleave_pair(const int16_t* r0, const int16_t* r1, int16_t* dst);

// row[0, 16) = src[0, 16) - zp, src 16 int8 (`is_signed`) or uint8 values.
void widen16(const void* src, bool is_signed, int32_t zp, int16_t* row);

// row[0, 16) = src[0], src[2], ..., src[30] minus zp (a stride-2 window row; reads src[0, 32)).
void widen16_stride2(const void* src, bool is_signed, int32_t zp, int16_t* row);

// fn(begin, end) over [0, n) in up to 16 chunks of >= grain items, each taken by whichever pool thread is
// free next: on a busy host a thread running late takes fewer (parallel_for's equal halves would wait
// for it).
void balanced_for(const KernelIO& io, int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

// Whether the AVX2 kernel runs (CPU feature bits, once).
bool uses_avx2();
// "refrt qgemm (avx512_vnni)", "(avx512)", "(avx2)" or "(portable)": the tile kernel this process runs, the
// profile's label of the nodes that run it.
std::string_view label();

}  // namespace parity::refrt::qgemm
