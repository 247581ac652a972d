// Internal: the approximate mode of WeightOnlyMatMul (weight_only.cc), what ONNX Runtime's MatMulNBits computes
// at accuracy level 4 and llama.cpp's q4 x q8 dot products: the activations are quantized to int8 per block of K
// (symmetric, one scale per row and block), each block's dot product with the 4-bit or 8-bit weights is an exact
// int32 sum, and the sums are scaled by (activation scale x weight scale):
//
//   block b of row r (k in [k0, k0 + len)):  amax = max |x[r, k]|,  sa = amax / 127,
//                                             qa[k] = round_half_even(x[r, k] * (127 / amax))  (0 when amax = 0)
//   y[r, j] = sum_b  (sa[r, b] * sw[b, j]) * float( sum_k qa[k] * (q[k, j] - zp[b, j]) )
//
// 127 / amax and x * (127 / amax) are float32 operations (as MLAS computes them), so numpy reproduces qa bit for bit.
// The blocks are the weights' groups along K, split into chunks of at most kMaxBlock (per-column and per-tensor
// weights have one group of K). A block whose amax is not finite gives NaN for its rows.
//
// The weights are stored unsigned, u = q - qmin (qmin: -8 for 4-bit int, -128 for int8, 0 for unsigned), so that
// one product operand is unsigned as VNNI's vpdpbusd wants: sum qa * (q - zp) = sum qa * u - (zp - qmin) * sum qa.
// They are packed once, in tiles of 64 output columns (threads split the tiles), per block, in groups of K:
// 4-bit: 64 bytes per 16 columns x 8 k (byte 4 c + t: k = 8 g + t in the low nibble, 8 g + 4 + t in the high one);
// 8-bit: 64 bytes per 16 columns x 4 k (byte 4 c + t: k = 4 g + t). One 64-byte row feeds one vpdpbusd (zmm: 16
// columns, each lane summing its 4 k), or two ymm halves (AVX-VNNI, or AVX2's vpmaddubsw + vpmaddwd; 4-bit
// products there are at most 15 x 127, so vpmaddubsw's int16 pair sums never saturate, and 8-bit weights are
// split into two nibbles for it).
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "parity/tensor.h"

namespace parity::refrt {

struct KernelIO;

namespace q8 {

// The instruction paths, each forced by refrt's CPU caps (PARITY_REFRT_ISA, PARITY_REFRT_MASK_FEATURES).
enum class Path : int { kScalar, kAvx2, kAvxVnni, kAvx512Vnni, kAmx, kCount };
constexpr size_t kPathCount = static_cast<size_t>(Path::kCount);
// "scalar", "avx2" (vpmaddubsw), "avx_vnni", "avx512_vnni", "amx": the label's name of the path.
const char* path_name(Path p);
// What this process runs: amx at refrt level amx; avx512_vnni at avx512_vnni and avx512_bf16; avx_vnni at levels
// avx2 / avx512 where the CPU has AVX-VNNI; avx2 at those levels without it; scalar below.
Path host_path();

constexpr int64_t kTileCols = 64;   // columns per tile (4 panels of 16)
constexpr int64_t kMaxBlock = 256;  // longest activation block (int32 sums stay far from overflow)

struct Weights {
  int64_t k = 0, n = 0, bits = 8;  // bits: 4 when every weight and zero point fits 4 bits, else 8
  int64_t padded = 0;              // each block's K padded to a multiple of 8 (zero weights, zero activations)
  int64_t blocks = 0, tiles = 0;
  std::vector<int64_t> k0, len;  // per block: first k and length
  bool uniform_zp = true;        // every column's unsigned zero point is `zp` (symmetric schemes)
  int32_t zp = 0;
  std::vector<uint8_t> q;    // [tiles][blocks][group][4 panels][64 bytes]
  std::vector<float> scale;  // [tiles][blocks][64]; 0 in padding columns
  std::vector<int32_t> zpu;  // [tiles][blocks][64] unsigned zero points, empty when uniform_zp
  int64_t block_bytes() const { return padded * kTileCols * bits / 8; }
  const uint8_t* q_of(int64_t tile, int64_t b) const { return q.data() + (tile * blocks + b) * block_bytes(); }
  const float* scale_of(int64_t tile, int64_t b) const { return scale.data() + (tile * blocks + b) * kTileCols; }
  const int32_t* zpu_of(int64_t tile, int64_t b) const { return zpu.data() + (tile * blocks + b) * kTileCols; }
};

// w: [K, N] int8 / uint8 (4-bit files unpacked, one value per byte); scale (float32) and zero_point (w's dtype, or
// nullptr) [weight blocks, N] with `block` rows of K each.
Weights pack(const Tensor& w, const Tensor& scale, const Tensor* zero_point, int64_t block);

// The amx path takes 4-bit weights whose padded block is at most 64 or a multiple of 64 (groups of 8, 16, 32, 64,
// 128, 256 and per column), 16 rows at a time; other weights, and the rows past the last 16, run avx512_vnni.
bool amx_takes(const Weights& w);

// y[m, N] = x[m, K] times the weights, as the header says, on `path` (one the CPU runs) and io's threads. Returns
// the path the label names: amx when its tiles ran (m >= 16), else the path the rows ran on.
Path matmul(const Weights& w, Path path, const float* x, int64_t m, float* y, const KernelIO& io);

// Test-only: calls of each path's tile kernel since the last reset (the label is checked against what counted).
std::array<uint64_t, kPathCount> probe_counts();
void probe_reset();

}  // namespace q8
}  // namespace parity::refrt
