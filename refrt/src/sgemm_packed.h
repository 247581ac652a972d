// Internal: refrt's float32 GEMM on a constant B packed once (AVX2 + FMA), for products with weights at refrt's AVX2
// level.
//
// Why refrt's own: at the AVX2 level a BLAS packs B on every call (it has no API to keep a packed constant), and
// oneDNN 2.6's AVX2 matmul is its gemm:jit, which does too and ran the MLP 1024-4096-1024 at 2.3x OpenBLAS's time
// (AMD EPYC Zen 2, 1 thread). Packed once at load in 16-column panels, B is streamed straight into a 6 x 16 register
// tile; A is repacked per block of 512 columns and 198 rows. Measured against OpenBLAS's Zen core on that host, one
// thread: 64x1024x4096 at 87 GFLOP/s against 82, 512x768x3072 at 95 against 96 (docs/performance.md).
//
// Sums: each element of C is one FMA chain over K in order, in blocks of kKBlock added to C in order: the result does
// not depend on the thread count.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

namespace parity::refrt {

// refrt's level is AVX2 exactly (the AVX-512 levels run oneDNN's brgemm) with FMA, and PARITY_REFRT_PACKED_SGEMM is
// not 0.
bool packed_sgemm_available();

class PackedSgemmB {
 public:
  static constexpr int64_t kPanel = 16;    // B's columns per panel (two AVX2 registers)
  static constexpr int64_t kTileRows = 6;  // rows of C per register tile: 6 x 16 accumulators, 12 of the 16 registers
  // Rows of A packed at a time (396 KiB of A per block of K stays in L2; ViT-B/16's 197 tokens are one block).
  static constexpr int64_t kRowBlock = 198;
  // b: [K, N] row-major, or [N, K] when trans. Copies it into panels (the last one padded with zeros).
  void pack(const float* b, bool trans, int64_t k, int64_t n);
  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  int64_t panels() const { return (n_ + kPanel - 1) / kPanel; }
  // Columns [p0 * 16, min(n, p1 * 16)) of C = A[m, K] (row stride lda) x B (+ bias, indexed by B's column), written to
  // c (row stride ldc), c pointing at C's column p0 * 16. Uses this thread's scratch.
  // `done` (optional): called with each finished block of C (rows [r0, r0 + rows) x columns [c0, c0 + cols) of c, at
  // most kRowBlock x kDoneCols) right after its last sums are stored, while it is in cache, so a caller can finish it
  // there (activations, rounding to a half type).
  using Done = std::function<void(int64_t r0, int64_t rows, int64_t c0, int64_t cols)>;
  static constexpr int64_t kDoneCols = 256;
  void run(int64_t m, const float* a, int64_t lda, const float* bias, float* c, int64_t ldc, int64_t p0, int64_t p1,
           const Done& done = nullptr) const;

 private:
  std::vector<float> panels_;  // panel p: K rows of 16 floats, at p * K * 16
  int64_t k_ = 0, n_ = 0;
};

}  // namespace parity::refrt
