// Internal to sgemm_packed.cc: the AVX2 + FMA register tiles of refrt's packed float32 GEMM, in a file of their own.
//
// Why a file of their own: it is built with -mavx2 -mfma and -falign-loops=32 (refrt/CMakeLists.txt) instead of a
// target attribute, because GCC 12 drops -falign-loops in functions with a target attribute, and the tile's K loop
// then sat wherever the code before it left it: with it 16 bytes off a 32-byte boundary every product of the
// LLaMA-style prefill 512 ran 5 % slower (AMD EPYC Zen 2, one thread), so unrelated changes moved the GEMM's speed.
// Also measured: the same code placed after sgemm_packed.cc's in the library (a file name sorting after it) ran BERT
// and Whisper 1 % slower than placed before it, as this name places it. -fno-split-loops keeps the one-loop form the
// target-attribute build had (the form these figures are for; split, GCC doubles the loop at the prefetch step).
// Only sgemm_packed.cc calls these, after packed_sgemm_available() (AVX2 and FMA).
#pragma once
#include <cstdint>

namespace parity::refrt::sgemm_tiles {

// Lines of the next panel's slice a tile pulls into cache: `lines` of them from `at`, one every `every` steps of K.
struct Prefetch {
  const float* at = nullptr;
  int64_t lines = 0, every = 1;
};

// How a tile's sums meet C: the first block of K writes (the bias or zero, plus the sums), the others add.
enum class Store { kFirst, kAdd };

// C[rows, 16] (row stride ldc) (+)= A's packed tile (K-major: a[p * rows + r]) x one panel slice (kc rows of 16
// floats), plus the bias (16 values) with Store::kFirst when given. `pf`: this tile's share of the next panel's slice,
// pulled into cache while the tile runs. kTiles[rows] for rows 1 to 6.
using TileFn = void (*)(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, Store store,
                        const float* bias, Prefetch pf);
extern const TileFn kTiles[7];

}  // namespace parity::refrt::sgemm_tiles
