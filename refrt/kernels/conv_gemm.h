// Internal: the float32 GEMM of 2-D convolutions, C[M, N] = A[M, K] B[K, N], on AVX2+FMA CPUs.
// Why not OpenBLAS here: a conv runs its GEMM on chunks of ~1000 columns (im2col of a few output
// rows, kept in cache), and cblas_sgemm packs the weight matrix A again for every chunk, and its
// small-N shapes (pointwise convs on 7x7 and 14x14 planes) ran at 30-40 GFLOP/s. Here A (the conv
// weights, row-major, constant) is read in place, no packing: a 6 x 16 register tile broadcasts one
// weight of each of its 6 rows per k, which streams 6 rows of A sequentially; B (the im2col columns)
// is packed into 16-column panels by the caller (pack_b), each panel read from L1 by every tile
// of a block of A's rows.
#pragma once
#include <cstdint>

namespace parity::refrt::conv_gemm {

inline constexpr int64_t kNR = 16;  // columns per packed panel of B

// Whether this CPU runs the kernel (AVX2 and FMA); otherwise callers use gemm.h.
bool available();

// Floats of a packed B of k rows and n columns: whole 16-column panels, the last one zero-padded.
inline int64_t packed_size(int64_t k, int64_t n) { return (n + kNR - 1) / kNR * kNR * k; }

// Packs row-major b [k, n] (leading dim ldb) into panels: panel p holds columns [16p, 16p + 16),
// k rows of 16 contiguous floats (zeros past n).
void pack_b(int64_t k, int64_t n, const float* b, int64_t ldb, float* packed);

// Row r of a packed [k, n] matrix, columns [j0, j1): packed(r, j) = src[j] (src indexed by column).
void pack_run(int64_t r, int64_t k, int64_t j0, int64_t j1, const float* src, float* packed);
// dst[j] = src[2 j] for j < n (im2col of a stride-2 conv); requires available().
void gather_stride2(float* dst, const float* src, int64_t n);
// The same with zeros.
void zero_run(int64_t r, int64_t k, int64_t j0, int64_t j1, float* packed);
// Row r from n contiguous floats, zeros in the last panel past n (the same layout as pack_b).
inline void pack_row(int64_t r, int64_t k, int64_t n, const float* src, float* packed) {
  pack_run(r, k, 0, n, src, packed);
  zero_run(r, k, n, (n + kNR - 1) / kNR * kNR, packed);
}

// Applied to each finished value of c, in this order, while it is in registers (the conv's epilogue):
// + bias[row], + add[row * ldz + column], then max(0, .) if relu.
struct Epilogue {
  const float* bias = nullptr;
  const float* add = nullptr;
  int64_t ldz = 0;
  bool relu = false;
};

// c[m, n] (leading dim ldc) = a[m, k] (leading dim lda) times the packed b, then the epilogue;
// overwrites c. Requires available().
void gemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* packed_b, float* c, int64_t ldc,
          const Epilogue& epilogue = {});

// The same with B never packed: B(r, j) = base[offsets[r] + j] (an implicit im2col of a stride-1 conv over
// a zero-padded input); reads base up to max(offsets) + n rounded up to 16. Requires available() and k > 0.
void gemm_direct(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* base,
                 const int64_t* offsets, float* c, int64_t ldc, const Epilogue& epilogue = {});

}  // namespace parity::refrt::conv_gemm
