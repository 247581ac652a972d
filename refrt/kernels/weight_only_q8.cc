// weight_only_q8.h: int8 activations x packed 4-bit / 8-bit weights, int32 sums per block (the approximate mode of
// WeightOnlyMatMul). Every path computes the same integers and then the same float operations in the same order
// (per block: scale = sw * sa, then y = fma(float(sum), scale, y)), so the paths agree bit for bit.
#include "weight_only_q8.h"

#include <immintrin.h>

// GCC 12 reports its own AVX-512 intrinsics' masked-undefined operand as maybe-uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>

#include "../src/kernel.h"
#include "../src/scratch.h"
#include "parity/refrt/cpu_isa.h"

namespace parity::refrt::q8 {
namespace {

std::atomic<bool> g_probe{false};
std::array<std::atomic<uint64_t>, kPathCount> g_counts{};

void count(Path p) {
  if (g_probe.load(std::memory_order_relaxed)) g_counts[static_cast<size_t>(p)].fetch_add(1, std::memory_order_relaxed);
}

// The quantized activations: per row and block, `padded` int8 values (zeros past the block's length), the scale
// and the exact sum of the int8 values (for the weights' zero points).
struct Act {
  int8_t* q = nullptr;
  float* scale = nullptr;
  int32_t* sum = nullptr;
  int64_t blocks = 0, padded = 0;
  const int8_t* q_of(int64_t r, int64_t b) const { return q + (r * blocks + b) * padded; }
  float scale_of(int64_t r, int64_t b) const { return scale[r * blocks + b]; }
  int32_t sum_of(int64_t r, int64_t b) const { return sum[r * blocks + b]; }
};

// One block of one row (the header's rule). Scalar: the reference the vector version must equal.
void quantize_block_scalar(const float* x, int64_t len, int64_t padded, int8_t* q, float* scale, int32_t* sum) {
  float amax = 0.0f;
  bool finite = true;
  for (int64_t i = 0; i < len; ++i) {
    const float v = std::fabs(x[i]);
    finite = finite && v <= std::numeric_limits<float>::max();
    amax = std::max(amax, v);
  }
  std::memset(q, 0, static_cast<size_t>(padded));
  *sum = 0;
  if (!finite) {  // inf or NaN in the block: the rows' outputs become NaN (the sums would hide it)
    *scale = std::numeric_limits<float>::quiet_NaN();
    return;
  }
  const float inv = amax > 0.0f ? 127.0f / amax : 0.0f;
  *scale = amax / 127.0f;
  int32_t s = 0;
  for (int64_t i = 0; i < len; ++i) {
    const auto v = static_cast<int32_t>(std::nearbyint(x[i] * inv));
    q[i] = static_cast<int8_t>(std::clamp(v, -127, 127));
    s += q[i];
  }
  *sum = s;
}

__attribute__((target("avx2,fma"))) void quantize_block_avx2(const float* x, int64_t len, int64_t padded, int8_t* q,
                                                             float* scale, int32_t* sum) {
  const __m256 sign = _mm256_set1_ps(-0.0f), big = _mm256_set1_ps(std::numeric_limits<float>::max());
  __m256 vmax = _mm256_setzero_ps(), bad = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= len; i += 8) {
    const __m256 v = _mm256_andnot_ps(sign, _mm256_loadu_ps(x + i));
    bad = _mm256_or_ps(bad, _mm256_cmp_ps(v, big, _CMP_NLE_UQ));  // > max, or unordered (NaN)
    vmax = _mm256_max_ps(vmax, v);
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, vmax);
  float amax = 0.0f;
  for (float v : lanes) amax = std::max(amax, v);
  bool finite = _mm256_movemask_ps(bad) == 0;
  for (int64_t t = i; t < len; ++t) {
    const float v = std::fabs(x[t]);
    finite = finite && v <= std::numeric_limits<float>::max();
    amax = std::max(amax, v);
  }
  std::memset(q, 0, static_cast<size_t>(padded));
  *sum = 0;
  if (!finite) {
    *scale = std::numeric_limits<float>::quiet_NaN();
    return;
  }
  const float inv = amax > 0.0f ? 127.0f / amax : 0.0f;
  *scale = amax / 127.0f;
  const __m256 vinv = _mm256_set1_ps(inv);
  __m256i vsum = _mm256_setzero_si256();
  for (i = 0; i + 8 <= len; i += 8) {
    // cvtps rounds half to even (the default MXCSR mode), as nearbyint does; |x * inv| <= 127 (+ rounding).
    const __m256i v = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + i), vinv));
    vsum = _mm256_add_epi32(vsum, v);
    const __m128i w16 = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(q + i), _mm_packs_epi16(w16, w16));
  }
  alignas(32) int32_t parts[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(parts), vsum);
  int32_t s = 0;
  for (int32_t v : parts) s += v;
  for (; i < len; ++i) {
    const auto v = static_cast<int32_t>(std::nearbyint(x[i] * inv));
    q[i] = static_cast<int8_t>(std::clamp(v, -127, 127));
    s += q[i];
  }
  *sum = s;
}

int32_t load_i32(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// ---- AVX-512 VNNI: R rows x NP panels of 16 columns (from panel p0 of the tile) in ZMM registers.
template <int Bits, int R, int NP>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"))) void tile_avx512_vnni(const Weights& w, const Act& a,
                                                                                      int64_t tile, int64_t p0,
                                                                                      int64_t r0, float* y, int64_t ldy,
                                                                                      int64_t cols) {
  constexpr int S = R == 1 && Bits == 4 ? 2 : 1;  // one row: low and high nibbles in separate chains
  __m512 total[R][NP];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int p = 0; p < NP; ++p) total[r][p] = _mm512_setzero_ps();
  const __m512i nib = _mm512_set1_epi8(0x0F);
  const int64_t groups = w.padded / (Bits == 4 ? 8 : 4);
  for (int64_t b = 0; b < w.blocks; ++b) {
    const uint8_t* q = w.q_of(tile, b) + p0 * 64;
    const int8_t* ar[R];
    __m512i acc[R][NP][S];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      ar[r] = a.q_of(r0 + r, b);
      const __m512i init = w.uniform_zp ? _mm512_set1_epi32(-w.zp * a.sum_of(r0 + r, b)) : _mm512_setzero_si512();
#pragma GCC unroll 8
      for (int p = 0; p < NP; ++p) {
        acc[r][p][0] = init;
        if constexpr (S == 2) acc[r][p][S - 1] = _mm512_setzero_si512();
      }
    }
    for (int64_t g = 0; g < groups; ++g) {
      const uint8_t* qg = q + g * 256;
#pragma GCC unroll 8
      for (int p = 0; p < NP; ++p) {
        const __m512i raw = _mm512_loadu_si512(qg + p * 64);
        if constexpr (Bits == 4) {
          const __m512i lo = _mm512_and_si512(raw, nib), hi = _mm512_and_si512(_mm512_srli_epi16(raw, 4), nib);
#pragma GCC unroll 8
          for (int r = 0; r < R; ++r) {
            acc[r][p][0] = _mm512_dpbusd_epi32(acc[r][p][0], lo, _mm512_set1_epi32(load_i32(ar[r] + g * 8)));
            acc[r][p][S - 1] =
                _mm512_dpbusd_epi32(acc[r][p][S - 1], hi, _mm512_set1_epi32(load_i32(ar[r] + g * 8 + 4)));
          }
        } else {
#pragma GCC unroll 8
          for (int r = 0; r < R; ++r)
            acc[r][p][0] = _mm512_dpbusd_epi32(acc[r][p][0], raw, _mm512_set1_epi32(load_i32(ar[r] + g * 4)));
        }
      }
    }
#pragma GCC unroll 8
    for (int p = 0; p < NP; ++p) {
      const __m512 s = _mm512_loadu_ps(w.scale_of(tile, b) + (p0 + p) * 16);
      const __m512i z = w.uniform_zp ? _mm512_setzero_si512() : _mm512_loadu_si512(w.zpu_of(tile, b) + (p0 + p) * 16);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        __m512i d = acc[r][p][0];
        if constexpr (S == 2) d = _mm512_add_epi32(d, acc[r][p][S - 1]);
        if (!w.uniform_zp) d = _mm512_sub_epi32(d, _mm512_mullo_epi32(z, _mm512_set1_epi32(a.sum_of(r0 + r, b))));
        const __m512 scale = _mm512_mul_ps(s, _mm512_set1_ps(a.scale_of(r0 + r, b)));
        total[r][p] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d), scale, total[r][p]);
      }
    }
  }
#pragma GCC unroll 8
  for (int p = 0; p < NP; ++p) {
    const int64_t c0 = (p0 + p) * 16;
    if (c0 >= cols) break;
    const auto keep = static_cast<__mmask16>(cols - c0 >= 16 ? 0xFFFF : (1u << (cols - c0)) - 1);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) _mm512_mask_storeu_ps(y + (r0 + r) * ldy + c0, keep, total[r][p]);
  }
}

// ---- 256-bit: AVX-VNNI's vpdpbusd (VEX form, emitted by the assembler: the code around it stays plain AVX2, so no
// AVX-VNNI instruction can appear in the AVX2 instantiation), or AVX2's vpmaddubsw + vpmaddwd. A panel is two
// halves of 8 columns.
template <bool Vnni>
__attribute__((target("avx2,fma"))) inline __m256i dot4(__m256i acc, __m256i u8, __m256i s8) {
  if constexpr (Vnni) {
    __asm__("%{vex%} vpdpbusd %2, %1, %0" : "+x"(acc) : "x"(u8), "x"(s8));
    return acc;
  } else {
    return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u8, s8), _mm256_set1_epi16(1)));
  }
}

template <bool Vnni, int Bits, int R, int NP>
__attribute__((target("avx2,fma"))) void tile_ymm(const Weights& w, const Act& a, int64_t tile, int64_t p0, int64_t r0,
                                                  float* y, int64_t ldy, int64_t cols) {
  constexpr int H = 2 * NP;  // halves
  __m256 total[R][H] = {};   // zeros
  const __m256i nib = _mm256_set1_epi8(0x0F), ones = _mm256_set1_epi16(1), sixteen = _mm256_set1_epi16(16);
  const int64_t groups = w.padded / (Bits == 4 ? 8 : 4);
  for (int64_t b = 0; b < w.blocks; ++b) {
    const uint8_t* q = w.q_of(tile, b) + p0 * 64;
    const int8_t* ar[R];
    __m256i acc[R][H];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      ar[r] = a.q_of(r0 + r, b);
      const __m256i init = w.uniform_zp ? _mm256_set1_epi32(-w.zp * a.sum_of(r0 + r, b)) : _mm256_setzero_si256();
#pragma GCC unroll 8
      for (int h = 0; h < H; ++h) acc[r][h] = init;
    }
    for (int64_t g = 0; g < groups; ++g) {
      const uint8_t* qg = q + g * 256;
#pragma GCC unroll 8
      for (int h = 0; h < H; ++h) {
        const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qg + h * 32));
        const __m256i lo = _mm256_and_si256(raw, nib), hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), nib);
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
          if constexpr (Bits == 4) {
            const __m256i a0 = _mm256_set1_epi32(load_i32(ar[r] + g * 8));
            const __m256i a1 = _mm256_set1_epi32(load_i32(ar[r] + g * 8 + 4));
            if constexpr (Vnni) {
              acc[r][h] = dot4<true>(dot4<true>(acc[r][h], lo, a0), hi, a1);
            } else {  // pair sums <= 2 x 15 x 127: the two int16 results add without overflow
              const __m256i t = _mm256_add_epi16(_mm256_maddubs_epi16(lo, a0), _mm256_maddubs_epi16(hi, a1));
              acc[r][h] = _mm256_add_epi32(acc[r][h], _mm256_madd_epi16(t, ones));
            }
          } else {
            const __m256i a0 = _mm256_set1_epi32(load_i32(ar[r] + g * 4));
            if constexpr (Vnni) {
              acc[r][h] = dot4<true>(acc[r][h], raw, a0);
            } else {  // u = 16 hi + lo, each nibble's pair sums within int16
              const __m256i t = _mm256_add_epi32(_mm256_madd_epi16(_mm256_maddubs_epi16(lo, a0), ones),
                                                 _mm256_madd_epi16(_mm256_maddubs_epi16(hi, a0), sixteen));
              acc[r][h] = _mm256_add_epi32(acc[r][h], t);
            }
          }
        }
      }
    }
#pragma GCC unroll 8
    for (int h = 0; h < H; ++h) {
      const __m256 s = _mm256_loadu_ps(w.scale_of(tile, b) + p0 * 16 + h * 8);
      const __m256i z = w.uniform_zp
                            ? _mm256_setzero_si256()
                            : _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.zpu_of(tile, b) + p0 * 16 + h * 8));
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        __m256i d = acc[r][h];
        if (!w.uniform_zp) d = _mm256_sub_epi32(d, _mm256_mullo_epi32(z, _mm256_set1_epi32(a.sum_of(r0 + r, b))));
        const __m256 scale = _mm256_mul_ps(s, _mm256_set1_ps(a.scale_of(r0 + r, b)));
        total[r][h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(d), scale, total[r][h]);
      }
    }
  }
#pragma GCC unroll 8
  for (int h = 0; h < H; ++h) {
    const int64_t c0 = p0 * 16 + h * 8;
    if (c0 >= cols) break;
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      if (cols - c0 >= 8) {
        _mm256_storeu_ps(y + (r0 + r) * ldy + c0, total[r][h]);
      } else {
        alignas(32) float out[8];
        _mm256_store_ps(out, total[r][h]);
        std::memcpy(y + (r0 + r) * ldy + c0, out, static_cast<size_t>(cols - c0) * sizeof(float));
      }
    }
  }
}

// ---- Scalar: the same layout, sums and float operations, one row at a time.
void tile_scalar(const Weights& w, const Act& a, int64_t tile, int64_t r, float* y, int64_t cols) {
  float total[kTileCols] = {};
  const int64_t per_group = w.bits == 4 ? 8 : 4;
  for (int64_t b = 0; b < w.blocks; ++b) {
    const uint8_t* q = w.q_of(tile, b);
    const int8_t* ar = a.q_of(r, b);
    int32_t acc[kTileCols] = {};
    for (int64_t g = 0; g < w.padded / per_group; ++g)
      for (int64_t c = 0; c < kTileCols; ++c)
        for (int64_t t = 0; t < 4; ++t) {
          const uint8_t byte = q[(g * 4 + c / 16) * 64 + (c % 16) * 4 + t];
          if (w.bits == 4) {
            acc[c] += (byte & 0x0F) * ar[g * 8 + t] + (byte >> 4) * ar[g * 8 + 4 + t];
          } else {
            acc[c] += byte * ar[g * 4 + t];
          }
        }
    for (int64_t c = 0; c < kTileCols; ++c) {
      const int32_t z = w.uniform_zp ? w.zp : w.zpu_of(tile, b)[c];
      const int32_t d = acc[c] - z * a.sum_of(r, b);
      const float scale = w.scale_of(tile, b)[c] * a.scale_of(r, b);
      total[c] = std::fma(static_cast<float>(d), scale, total[c]);
    }
  }
  std::memcpy(y, total, static_cast<size_t>(cols) * sizeof(float));
}

// ---- AMX (4-bit weights): tdpbssd on int8 activations (A: 16 rows x up to 64 k) and the weights as signed
// q - zp (B: 16 columns x 4 k a row, |q - zp| <= 15), so each tile product is the block's exact int32 sum; then the
// same float operations as every path, into float32 sums kept per row in `acc` across the blocks.
struct alignas(64) TileConfig {
  uint8_t palette = 1, start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

// Block b of one tile as four B operands (one per 16-column panel): padded / 4 rows of 64 bytes, row j = k 4j..4j+3.
__attribute__((target("avx512f,avx512bw"))) void unpack_for_amx(const Weights& w, int64_t tile, int64_t b,
                                                                int8_t* out) {
  const __m512i nib = _mm512_set1_epi8(0x0F);
  const int64_t groups = w.padded / 8, rows = w.padded / 4;
  const uint8_t* q = w.q_of(tile, b);
  for (int p = 0; p < 4; ++p) {
    // Each column's zero point in the four bytes of its lane.
    const __m512i zp = w.uniform_zp ? _mm512_set1_epi8(static_cast<char>(w.zp))
                                    : _mm512_mullo_epi32(_mm512_loadu_si512(w.zpu_of(tile, b) + p * 16),
                                                         _mm512_set1_epi32(0x01010101));
    int8_t* bp = out + p * rows * 64;
    for (int64_t g = 0; g < groups; ++g) {  // the low nibbles hold k 8g..8g+3, the high ones 8g+4..8g+7
      const __m512i raw = _mm512_loadu_si512(q + (g * 4 + p) * 64);
      _mm512_store_si512(bp + 2 * g * 64, _mm512_sub_epi8(_mm512_and_si512(raw, nib), zp));
      _mm512_store_si512(bp + (2 * g + 1) * 64, _mm512_sub_epi8(_mm512_and_si512(_mm512_srli_epi16(raw, 4), nib), zp));
    }
  }
}

// acc[r][64] += (sa[r] * sw) * float(sums[p][r]) for the 16 rows of row tile rt (the other paths' operations).
__attribute__((target("avx512f"))) void finish_amx_block(const int32_t (*sums)[16][16], const Act& a, const float* sw,
                                                         int64_t b, int64_t r0, float* acc) {
  __m512 s[4];
  for (int p = 0; p < 4; ++p) s[p] = _mm512_loadu_ps(sw + p * 16);
  for (int r = 0; r < 16; ++r) {
    const __m512 sa = _mm512_set1_ps(a.scale_of(r0 + r, b));
    float* row = acc + (r0 + r) * kTileCols;
    for (int p = 0; p < 4; ++p) {
      const __m512 d = _mm512_cvtepi32_ps(_mm512_load_si512(sums[p][r]));
      _mm512_store_ps(row + p * 16, _mm512_fmadd_ps(d, _mm512_mul_ps(s[p], sa), _mm512_load_ps(row + p * 16)));
    }
  }
}

// Rows [0, rows16) of one tile (rows16 a multiple of 16) on AMX tiles: C in tiles 0-3, A in 4, B in 5.
__attribute__((target("avx512f,avx512bw,amx-tile,amx-int8"))) void tiles_amx(const Weights& w, const Act& a,
                                                                             int64_t tile, int64_t rows16, float* y,
                                                                             int64_t ldy, int64_t cols) {
  const int64_t kc = std::min<int64_t>(w.padded, 64), chunks = w.padded / kc, brows = w.padded / 4;
  const int64_t lda = a.blocks * a.padded;
  TileConfig cfg;
  for (int t = 0; t < 4; ++t) cfg.rows[t] = 16, cfg.colsb[t] = 64;
  cfg.rows[4] = 16, cfg.colsb[4] = static_cast<uint16_t>(kc);
  cfg.rows[5] = static_cast<uint8_t>(kc / 4), cfg.colsb[5] = 64;
  auto* bt = scratch<int8_t>(static_cast<size_t>(4 * brows * 64), ScratchSlot::kWeightOnlyTiles);
  float* acc = scratch<float>(static_cast<size_t>(rows16 * kTileCols), ScratchSlot::kWeightOnlySums);
  std::fill(acc, acc + rows16 * kTileCols, 0.0f);
  alignas(64) int32_t sums[4][16][16];
  asm volatile("" ::: "memory");  // the config is written before ldtilecfg reads it
  _tile_loadconfig(&cfg);
  for (int64_t b = 0; b < w.blocks; ++b) {
    unpack_for_amx(w, tile, b, bt);
    asm volatile("" ::: "memory");  // B is stored before the tile loads read it
    for (int64_t r0 = 0; r0 < rows16; r0 += 16) {
      _tile_zero(0);
      _tile_zero(1);
      _tile_zero(2);
      _tile_zero(3);
      for (int64_t c = 0; c < chunks; ++c) {
        const int8_t* bc = bt + c * (kc / 4) * 64;
        _tile_loadd(4, a.q_of(r0, b) + c * kc, lda);
        _tile_loadd(5, bc, 64);
        _tile_dpbssd(0, 4, 5);
        _tile_loadd(5, bc + brows * 64, 64);
        _tile_dpbssd(1, 4, 5);
        _tile_loadd(5, bc + 2 * brows * 64, 64);
        _tile_dpbssd(2, 4, 5);
        _tile_loadd(5, bc + 3 * brows * 64, 64);
        _tile_dpbssd(3, 4, 5);
      }
      _tile_stored(0, sums[0], 64);
      _tile_stored(1, sums[1], 64);
      _tile_stored(2, sums[2], 64);
      _tile_stored(3, sums[3], 64);
      finish_amx_block(sums, a, w.scale_of(tile, b), b, r0, acc);
    }
  }
  _tile_release();
  for (int p = 0; p < 4 && p * 16 < cols; ++p) {
    const auto keep = static_cast<__mmask16>(cols - p * 16 >= 16 ? 0xFFFF : (1u << (cols - p * 16)) - 1);
    for (int64_t r = 0; r < rows16; ++r)
      _mm512_mask_storeu_ps(y + r * ldy + p * 16, keep, _mm512_load_ps(acc + r * kTileCols + p * 16));
  }
}

// Rows [r, m) of one tile (y: the tile's first column of row 0, rows ldy apart); amx runs the rows past the last 16
// (the only ones it is given) on avx512_vnni.
template <int Bits>
void run_tile(Path path, const Weights& w, const Act& a, int64_t tile, int64_t r, int64_t m, float* y, int64_t ldy,
              int64_t cols) {
  if (path == Path::kAmx) path = Path::kAvx512Vnni;
  if (r < m) count(path);
  switch (path) {
    case Path::kAvx512Vnni:
      // Six (then four) rows share each weight load (two passes of 32 columns: 24 accumulators and sums in the 32
      // ZMM registers); the rest one row over the 64 columns.
      for (; r + 6 <= m; r += 6)
        for (int64_t p0 = 0; p0 < 4 && p0 * 16 < cols; p0 += 2)
          tile_avx512_vnni<Bits, 6, 2>(w, a, tile, p0, r, y, ldy, cols);
      for (; r + 4 <= m; r += 4)
        for (int64_t p0 = 0; p0 < 4 && p0 * 16 < cols; p0 += 2)
          tile_avx512_vnni<Bits, 4, 2>(w, a, tile, p0, r, y, ldy, cols);
      for (; r < m; ++r) tile_avx512_vnni<Bits, 1, 4>(w, a, tile, 0, r, y, ldy, cols);
      return;
    case Path::kAvxVnni:
    case Path::kAvx2: {
      const bool vnni = path == Path::kAvxVnni;
      for (; r + 2 <= m; r += 2)
        for (int64_t p0 = 0; p0 < 4 && p0 * 16 < cols; ++p0)
          vnni ? tile_ymm<true, Bits, 2, 1>(w, a, tile, p0, r, y, ldy, cols)
               : tile_ymm<false, Bits, 2, 1>(w, a, tile, p0, r, y, ldy, cols);
      for (; r < m; ++r)
        for (int64_t p0 = 0; p0 < 4 && p0 * 16 < cols; p0 += 2)
          vnni ? tile_ymm<true, Bits, 1, 2>(w, a, tile, p0, r, y, ldy, cols)
               : tile_ymm<false, Bits, 1, 2>(w, a, tile, p0, r, y, ldy, cols);
      return;
    }
    default:
      for (; r < m; ++r) tile_scalar(w, a, tile, r, y + r * ldy, cols);
  }
}

int32_t int_at(const Tensor& t, int64_t i) {
  return t.dtype() == DType::kInt8 ? t.data<int8_t>()[i] : t.data<uint8_t>()[i];
}

}  // namespace

const char* path_name(Path p) {
  static constexpr std::array<const char*, kPathCount> names = {"scalar", "avx2", "avx_vnni", "avx512_vnni", "amx"};
  return names.at(static_cast<size_t>(p));
}

Path host_path() {
  if (isa_allows(IsaLevel::kAmx)) return Path::kAmx;
  if (isa_allows(IsaLevel::kAvx512Vnni)) return Path::kAvx512Vnni;
  if (!isa_allows(IsaLevel::kAvx2)) return Path::kScalar;
  return cpu_has(CpuFeature::kAvxVnni) ? Path::kAvxVnni : Path::kAvx2;
}

Weights pack(const Tensor& wt, const Tensor& scale, const Tensor* zero_point, int64_t block) {
  Weights w;
  w.k = wt.dim(0), w.n = wt.dim(1);
  const bool is_signed = wt.dtype() == DType::kInt8;
  auto fits4 = [&](const Tensor& t) {
    for (int64_t i = 0; i < t.numel(); ++i) {
      const int32_t v = int_at(t, i);
      if (is_signed ? (v < -8 || v > 7) : v > 15) return false;
    }
    return true;
  };
  // 4-bit files arrive unpacked (one value per byte); so do 8-bit weights that happen to fit 4 bits: both pack
  // as 4-bit, which changes no product.
  w.bits = fits4(wt) && (!zero_point || fits4(*zero_point)) ? 4 : 8;
  const int32_t qmin = is_signed ? (w.bits == 4 ? -8 : -128) : 0;
  const int64_t chunk = std::min(block, kMaxBlock);
  std::vector<int64_t> wblock;
  for (int64_t wb = 0; wb * block < w.k; ++wb) {
    const int64_t end = std::min(w.k, (wb + 1) * block);
    for (int64_t s = wb * block; s < end; s += chunk) {
      w.k0.push_back(s);
      w.len.push_back(std::min(chunk, end - s));
      wblock.push_back(wb);
    }
  }
  w.padded = (chunk + 7) / 8 * 8;
  w.blocks = static_cast<int64_t>(w.k0.size());
  w.tiles = (w.n + kTileCols - 1) / kTileCols;
  auto zpu = [&](int64_t wb, int64_t j) { return (zero_point ? int_at(*zero_point, wb * w.n + j) : 0) - qmin; };
  w.zp = w.n > 0 && w.blocks > 0 ? zpu(0, 0) : 0;
  for (int64_t wb = 0; wb * block < w.k && w.uniform_zp; ++wb)
    for (int64_t j = 0; j < w.n; ++j) w.uniform_zp = w.uniform_zp && zpu(wb, j) == w.zp;
  w.q.assign(static_cast<size_t>(w.tiles * w.blocks * w.block_bytes()), 0);
  w.scale.assign(static_cast<size_t>(w.tiles * w.blocks * kTileCols), 0.0f);
  if (!w.uniform_zp) w.zpu.assign(static_cast<size_t>(w.tiles * w.blocks * kTileCols), 0);
  const auto* src = static_cast<const uint8_t*>(wt.raw());
  for (int64_t b = 0; b < w.blocks; ++b) {
    for (int64_t kk = 0; kk < w.len[static_cast<size_t>(b)]; ++kk) {
      const int64_t row = w.k0[static_cast<size_t>(b)] + kk;
      for (int64_t j = 0; j < w.n; ++j) {
        const int32_t q = is_signed ? static_cast<int8_t>(src[row * w.n + j]) : src[row * w.n + j];
        const auto u = static_cast<uint8_t>(q - qmin);
        const int64_t tile = j / kTileCols, c = j % kTileCols, p = c / 16, lane = c % 16;
        uint8_t* dst = w.q.data() + (tile * w.blocks + b) * w.block_bytes();
        if (w.bits == 4) {
          dst[((kk / 8) * 4 + p) * 64 + lane * 4 + kk % 4] |= static_cast<uint8_t>(kk % 8 < 4 ? u : u << 4);
        } else {
          dst[((kk / 4) * 4 + p) * 64 + lane * 4 + kk % 4] = u;
        }
      }
    }
    const int64_t wb = wblock[static_cast<size_t>(b)];
    for (int64_t j = 0; j < w.n; ++j) {
      const size_t at = static_cast<size_t>(((j / kTileCols) * w.blocks + b) * kTileCols + j % kTileCols);
      w.scale[at] = scale.data<float>()[wb * w.n + j];
      if (!w.uniform_zp) w.zpu[at] = zpu(wb, j);
    }
  }
  return w;
}

bool amx_takes(const Weights& w) { return w.bits == 4 && w.padded > 0 && (w.padded <= 64 || w.padded % 64 == 0); }

Path matmul(const Weights& w, Path path, const float* x, int64_t m, float* y, const KernelIO& io) {
  Act a;
  a.blocks = w.blocks, a.padded = w.padded;
  const size_t values = static_cast<size_t>(m * w.blocks * w.padded), heads = static_cast<size_t>(m * w.blocks);
  const size_t q_bytes = (values + 63) / 64 * 64;
  auto* buffer = scratch<std::byte>(q_bytes + heads * (sizeof(float) + sizeof(int32_t)), ScratchSlot::kWeightOnly);
  a.q = reinterpret_cast<int8_t*>(buffer);
  a.scale = reinterpret_cast<float*>(buffer + q_bytes);
  a.sum = reinterpret_cast<int32_t*>(buffer + q_bytes + heads * sizeof(float));
  const bool vector = path != Path::kScalar;
  parallel_for(io, m, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, w.k)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t b = 0; b < w.blocks; ++b) {
        const float* xb = x + r * w.k + w.k0[static_cast<size_t>(b)];
        int8_t* q = a.q + (r * w.blocks + b) * w.padded;
        float* s = a.scale + r * w.blocks + b;
        int32_t* sum = a.sum + r * w.blocks + b;
        const int64_t len = w.len[static_cast<size_t>(b)];
        vector ? quantize_block_avx2(xb, len, w.padded, q, s, sum)
               : quantize_block_scalar(xb, len, w.padded, q, s, sum);
      }
  });
  const int64_t rows16 = path == Path::kAmx && amx_takes(w) ? m / 16 * 16 : 0;
  parallel_for(io, w.tiles, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t cols = std::min(kTileCols, w.n - t * kTileCols);
      float* yt = y + t * kTileCols;
      if (rows16 > 0) {
        count(Path::kAmx);
        tiles_amx(w, a, t, rows16, yt, w.n, cols);
      }
      w.bits == 4 ? run_tile<4>(path, w, a, t, rows16, m, yt, w.n, cols)
                  : run_tile<8>(path, w, a, t, rows16, m, yt, w.n, cols);
    }
  });
  if (rows16 > 0) return Path::kAmx;
  return path == Path::kAmx ? Path::kAvx512Vnni : path;
}

std::array<uint64_t, kPathCount> probe_counts() {
  std::array<uint64_t, kPathCount> out{};
  for (size_t i = 0; i < kPathCount; ++i) out[i] = g_counts[i].load();
  return out;
}

void probe_reset() {
  for (auto& c : g_counts) c.store(0);
  g_probe.store(true);
}

}  // namespace parity::refrt::q8
