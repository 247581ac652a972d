// max_pool_rows.h: separable 2-D MaxPool of NaN-free float32 planes.
#include "max_pool_rows.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "../src/scratch.h"
#include "parity/refrt/cpu_isa.h"

namespace parity::refrt::max_pool_rows {
namespace {

// The loops are written for the vectoriser (this file is built with -O3, refrt/CMakeLists.txt: GCC turns
// `a > b ? a : b` into vmaxps and the stride-2 reads into permutes); the body is inlined, and so compiled, twice:
// into the AVX2 entry and into the baseline one.
[[gnu::always_inline]] inline bool has_nan(const float* p, int64_t n) {
  int bad = 0;
  for (int64_t i = 0; i < n; ++i) bad |= p[i] != p[i];
  return bad != 0;
}

[[gnu::always_inline]] inline void row_max(const float* src, float* acc, int64_t n) {
  for (int64_t x = 0; x < n; ++x) acc[x] = src[x] > acc[x] ? src[x] : acc[x];
}

// dst[j] = max(dst[j], row[j * stride + shift]) for j in [lo, hi).
[[gnu::always_inline]] inline void tap_max(const float* row, int64_t stride, int64_t shift, int64_t lo, int64_t hi,
                                           float* dst) {
  const float* r = row + shift;
  if (stride == 1) {
    for (int64_t j = lo; j < hi; ++j) dst[j] = r[j] > dst[j] ? r[j] : dst[j];
  } else if (stride == 2) {
    for (int64_t j = lo; j < hi; ++j) dst[j] = r[2 * j] > dst[j] ? r[2 * j] : dst[j];
  } else {
    for (int64_t j = lo; j < hi; ++j) dst[j] = r[j * stride] > dst[j] ? r[j * stride] : dst[j];
  }
}

[[gnu::always_inline]] inline bool pool(const nn::WindowGeometry& g, const float* plane, float* out) {
  const int64_t ih = g.in[0], iw = g.in[1], oh = g.out[0], ow = g.out[1], kh = g.kernel[0], kw = g.kernel[1];
  const int64_t sh = g.stride[0], sw = g.stride[1], ph = g.pad_begin[0], pw = g.pad_begin[1];
  const int64_t dh = g.dilation[0], dw = g.dilation[1];
  if (has_nan(plane, ih * iw)) return false;
  // Each tap's valid output columns; a column no tap reaches (its window all padding) gives the lowest float.
  std::vector<int64_t> lo(static_cast<size_t>(kw)), hi(static_cast<size_t>(kw));
  std::vector<uint8_t> reached(static_cast<size_t>(ow), 0);
  for (int64_t b = 0; b < kw; ++b) {
    const int64_t shift = b * dw - pw;
    const int64_t l = shift >= 0 ? 0 : std::min(ow, (-shift + sw - 1) / sw);
    lo[static_cast<size_t>(b)] = l;
    hi[static_cast<size_t>(b)] = std::max(l, std::min(ow, iw - shift <= 0 ? 0 : (iw - shift - 1) / sw + 1));
    std::fill(reached.begin() + l, reached.begin() + hi[static_cast<size_t>(b)], uint8_t{1});
  }
  constexpr float kLowest = std::numeric_limits<float>::lowest();
  float* acc = scratch<float>(iw + 1, ScratchSlot::kPoolRow);
  for (int64_t r = 0; r < oh; ++r) {
    float* dst = out + r * ow;
    int64_t rows = 0;
    for (int64_t a = 0; a < kh; ++a) {
      const int64_t i = r * sh - ph + a * dh;
      if (i < 0 || i >= ih) continue;
      if (rows++ == 0)
        std::memcpy(acc, plane + i * iw, static_cast<size_t>(iw) * sizeof(float));
      else
        row_max(plane + i * iw, acc, iw);
    }
    if (rows == 0) {  // every window of the row is in the padding
      std::fill(dst, dst + ow, kLowest);
      continue;
    }
    std::fill(dst, dst + ow, -std::numeric_limits<float>::infinity());
    for (int64_t b = 0; b < kw; ++b)
      tap_max(acc, sw, b * dw - pw, lo[static_cast<size_t>(b)], hi[static_cast<size_t>(b)], dst);
    for (int64_t j = 0; j < ow; ++j)
      if (!reached[static_cast<size_t>(j)]) dst[j] = kLowest;
  }
  return true;
}

__attribute__((target("avx2,fma"))) bool pool_avx2(const nn::WindowGeometry& g, const float* p, float* out) {
  return pool(g, p, out);
}

bool pool_base(const nn::WindowGeometry& g, const float* p, float* out) { return pool(g, p, out); }

}  // namespace

bool plane(const nn::WindowGeometry& g, const float* p, float* out) {
  static const bool avx2 = isa_allows(IsaLevel::kAvx2);
  return avx2 ? pool_avx2(g, p, out) : pool_base(g, p, out);
}

}  // namespace parity::refrt::max_pool_rows
