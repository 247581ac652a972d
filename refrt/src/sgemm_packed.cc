// sgemm_packed.h: the float32 GEMM on a constant B packed in 16-column panels, AVX2 + FMA.
#include "sgemm_packed.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "backend_probe.h"
#include "sgemm_avx2_tiles.h"
#include "scratch.h"
#include "parity/refrt/cpu_isa.h"

namespace parity::refrt {
namespace {

constexpr int64_t kPanel = PackedSgemmB::kPanel;
constexpr int64_t kTileRows = PackedSgemmB::kTileRows;  // enough FMAs in flight to hide their latency
constexpr int64_t kKBlock = 512;  // B's panel slice (32 KiB) is read from L1/L2 by every row tile of a block of A
constexpr int64_t kMBlock = PackedSgemmB::kRowBlock;

using sgemm_tiles::kTiles;
static_assert(kPanel == 16, "sgemm_avx2_tiles.cc's tiles are 16 columns wide");
using sgemm_tiles::Prefetch;
using sgemm_tiles::Store;

// The register tiles of a block of A's rows: 6 rows each, but where the block is not a multiple of 6 the last ones 5
// (when there are enough tiles for that), not one short tile: a tile of 2 or 4 rows has too few accumulators to cover
// the FMA latency (4 chains of a 2-row tile run at about 40 % of the 6-row speed). BERT's 128 rows: 18 x 6 + 4 x 5
// instead of 21 x 6 + 2. Every element of C is the same FMA chain whatever its tile.
struct RowTiles {
  int64_t count, fives;
  explicit RowTiles(int64_t rows)
      : count((rows + kTileRows - 1) / kTileRows),
        fives(kTileRows * count - rows <= count ? kTileRows * count - rows : 0) {}
  // Rows of tile t, which starts at row i of the block.
  int64_t height(int64_t t, int64_t i, int64_t rows) const {
    return t >= count - fives ? kTileRows - 1 : std::min(kTileRows, rows - i);
  }
};

// A's rows [0, rows) x columns [0, kc) (row stride lda) into RowTiles' tiles, each K-major.
void pack_a(int64_t rows, int64_t kc, const float* a, int64_t lda, float* out) {
  const RowTiles split(rows);
  for (int64_t i = 0, t = 0; i < rows; i += split.height(t, i, rows), ++t) {
    const int64_t tr = split.height(t, i, rows);
    float* dst = out + i * kc;
    for (int64_t r = 0; r < tr; ++r) {
      const float* src = a + (i + r) * lda;
      for (int64_t p = 0; p < kc; ++p) dst[p * tr + r] = src[p];
    }
  }
}

}  // namespace

bool packed_sgemm_available() {
  static const bool on = [] {
    const char* v = std::getenv("PARITY_REFRT_PACKED_SGEMM");
    if (v != nullptr && std::string(v) == "0") return false;
    return isa_allows(IsaLevel::kAvx2) && !isa_allows(IsaLevel::kAvx512);
  }();
  return on;
}

void PackedSgemmB::pack(const float* b, bool trans, int64_t k, int64_t n) {
  k_ = k;
  n_ = n;
  panels_.assign(static_cast<size_t>(panels() * k * kPanel), 0.0f);
  for (int64_t p = 0; p < panels(); ++p) {
    const int64_t cols = std::min(kPanel, n - p * kPanel);
    float* dst = panels_.data() + p * k * kPanel;
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t j = 0; j < cols; ++j)
        dst[kk * kPanel + j] = trans ? b[(p * kPanel + j) * k + kk] : b[kk * n + p * kPanel + j];
  }
}

void PackedSgemmB::run(int64_t m, const float* a, int64_t lda, const float* bias, float* c, int64_t ldc, int64_t p0,
                       int64_t p1, const Done& done) const {
  backend_probe::hit(Backend::kRefrtPackedSgemm);
  if (m <= 0 || p0 >= p1) return;
  // A last panel narrower than 16 columns is computed into a tile of its own, then its columns copied out.
  const int64_t tail_cols = n_ - (panels() - 1) * kPanel;
  const bool tail = p1 == panels() && tail_cols < kPanel;
  float* tail_c = tail ? scratch<float>(static_cast<size_t>(m * kPanel), ScratchSlot::kSgemmTail) : nullptr;
  float tail_bias[kPanel] = {};
  if (tail && bias) std::memcpy(tail_bias, bias + (p1 - 1) * kPanel, static_cast<size_t>(tail_cols) * sizeof(float));
  float* packed_a = scratch<float>(static_cast<size_t>(kMBlock * kKBlock), ScratchSlot::kSgemmA);
  if (k_ == 0) {  // the empty product: C = bias
    const int64_t c0 = p0 * kPanel, c1 = std::min(n_, p1 * kPanel);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = c0; j < c1; ++j) c[i * ldc + j - c0] = bias ? bias[j] : 0.0f;
    if (done)
      for (int64_t i0 = 0; i0 < m; i0 += kMBlock)
        for (int64_t j = c0; j < c1; j += kDoneCols)
          done(i0, std::min(kMBlock, m - i0), j - c0, std::min(kDoneCols, c1 - j));
    return;
  }
  constexpr int64_t kDonePanels = kDoneCols / kPanel;
  float* tail_out = c + (p1 - 1 - p0) * kPanel;
  for (int64_t k0 = 0; k0 < k_; k0 += kKBlock) {
    const int64_t kc = std::min(kKBlock, k_ - k0);
    const Store store = k0 == 0 ? Store::kFirst : Store::kAdd;
    const bool last = k0 + kc == k_;  // C's sums are final after this block of K
    for (int64_t i0 = 0; i0 < m; i0 += kMBlock) {
      const int64_t mc = std::min(kMBlock, m - i0);
      pack_a(mc, kc, a + i0 * lda + k0, lda, packed_a);
      for (int64_t p = p0; p < p1; ++p) {
        const float* slice = panels_.data() + (p * k_ + k0) * kPanel;
        const bool own = tail && p == p1 - 1;
        float* cp = own ? tail_c + i0 * kPanel : c + i0 * ldc + (p - p0) * kPanel;
        const int64_t cld = own ? kPanel : ldc;
        const float* bp = store == Store::kFirst && bias ? (own ? tail_bias : bias + p * kPanel) : nullptr;
        const float* next = p + 1 < p1 ? slice + k_ * kPanel : nullptr;
        // The next slice's kc lines (B streams from memory: a weight is read by only mc rows) are spread over this
        // panel's tiles, each tile's share over its steps of K. The first tile pulling all of them (one a step) asked
        // for 32 KiB within a sixth of a panel's time, more than the memory delivers: the MLP 1024-4096-1024 at batch
        // 64 ran 12.7 against 11.7 ms, BERT 87.3 against 84.4 (AMD EPYC Zen 2, one thread).
        const RowTiles split(mc);
        const int64_t tiles = split.count, share = (kc + tiles - 1) / tiles;
        for (int64_t i = 0, t = 0; i < mc; i += split.height(t, i, mc), ++t) {
          const int64_t tr = split.height(t, i, mc);
          Prefetch pf;
          if (next) {
            pf.lines = std::max<int64_t>(0, std::min(share, kc - t * share));
            pf.at = next + t * share * kPanel;
            pf.every = std::max<int64_t>(1, kc / std::max<int64_t>(1, share));
          }
          kTiles[tr](kc, packed_a + i * kc, slice, cp + i * cld, cld, store, bp, pf);
        }
        if (!last) continue;
        if (own)
          for (int64_t i = i0; i < i0 + mc; ++i)
            std::memcpy(tail_out + i * ldc, tail_c + i * kPanel, static_cast<size_t>(tail_cols) * sizeof(float));
        if (done && ((p - p0 + 1) % kDonePanels == 0 || p + 1 == p1)) {
          const int64_t g0 = p0 + (p - p0) / kDonePanels * kDonePanels;
          done(i0, mc, (g0 - p0) * kPanel, std::min(n_, (p + 1) * kPanel) - g0 * kPanel);
        }
      }
    }
  }
}

}  // namespace parity::refrt
