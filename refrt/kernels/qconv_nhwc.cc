// The integer convolution with channels-last activations, for 1-D and 2-D convolutions of one group
// (taps_suit). x - x_zp is written once as int16 [N, H', W', cp], zero-padded in space and to an even
// channel count, so that the K values of an output position are runs read in place by the GEMM tile: one
// run of kw * cp values per kernel row (cp per tap where the width is dilated). The weights are qgemm
// panels of 16 output channels in the same (tap, channel) order, packed once at load. A tile is 6
// consecutive output positions x 16 channels. panel_conv instead gathers K x 16 values for every 16
// output positions (for a 3x3 convolution, each input value 9 times): that gather cost as much as the
// products on the convolutions of 32-128 channels.
#include <algorithm>
#include <type_traits>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "../src/scratch.h"
#include "qlinear_conv.h"

namespace parity::refrt::qconv {
namespace {

#if defined(__SSE2__)
// dst[p * cp + i] = src[i * hw + p] - zp for 8 channels i and 8 positions p (SSE2 is x86-64's baseline).
template <typename X>
void transpose8(const X* src, int64_t hw, __m128i zp, int16_t* dst, int64_t cp) {
  __m128i r[8];
  for (int i = 0; i < 8; ++i) {
    const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + i * hw));
    const __m128i w =
        std::is_signed_v<X> ? _mm_srai_epi16(_mm_unpacklo_epi8(b, b), 8) : _mm_unpacklo_epi8(b, _mm_setzero_si128());
    r[i] = _mm_sub_epi16(w, zp);
  }
  __m128i a[8], b[8];
  for (int i = 0; i < 4; ++i) {
    a[2 * i] = _mm_unpacklo_epi16(r[2 * i], r[2 * i + 1]);
    a[2 * i + 1] = _mm_unpackhi_epi16(r[2 * i], r[2 * i + 1]);
  }
  for (int h = 0; h < 2; ++h)  // h: channels 0-3 or 4-7
    for (int i = 0; i < 2; ++i) {
      b[4 * h + 2 * i] = _mm_unpacklo_epi32(a[4 * h + i], a[4 * h + 2 + i]);
      b[4 * h + 2 * i + 1] = _mm_unpackhi_epi32(a[4 * h + i], a[4 * h + 2 + i]);
    }
  for (int i = 0; i < 4; ++i) {  // b[i] and b[4 + i] hold positions 2i and 2i + 1
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + (2 * i) * cp), _mm_unpacklo_epi64(b[i], b[4 + i]));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + (2 * i + 1) * cp), _mm_unpackhi_epi64(b[i], b[4 + i]));
  }
}
#endif

// Positions [p0, p1) of one image: x16[p * cp + channel] = x[channel, p] - zp.
template <typename X>
void block_channels_last(const X* x, int64_t c, int64_t hw, int64_t cp, int32_t zp, int64_t p0, int64_t p1,
                         int16_t* x16) {
  int64_t c8 = 0, q8 = p0;
#if defined(__SSE2__)
  c8 = c / 8 * 8;
  q8 = p0 + (p1 - p0) / 8 * 8;
  const __m128i z = _mm_set1_epi16(static_cast<int16_t>(zp));
  for (int64_t p = p0; p < q8; p += 8)
    for (int64_t ch = 0; ch < c8; ch += 8) transpose8(x + ch * hw + p, hw, z, x16 + p * cp + ch, cp);
#endif
  for (int64_t ch = 0; ch < c; ++ch)  // what the 8 x 8 blocks left: channels past c8, positions past q8
    for (int64_t p = ch < c8 ? q8 : p0; p < p1; ++p) x16[p * cp + ch] = static_cast<int16_t>(x[ch * hw + p] - zp);
}

// The padded channels-last input: x16[((image * hp + ph + ih) * wp + pw + iw) * cp + channel] = x - zp, the
// spatial padding 0, so that every tap of every output position is inside (the pad channel, when C is odd,
// meets zero weights: its values do not matter).
// The buffer is the calling thread's scratch: allocated per call it was mmapped and page-faulted every time
// (hundreds of KiB), on the calling thread before the pool could start.
struct Padded {
  int64_t hp = 0, wp = 0, cp = 0;
  int16_t* x16 = nullptr;
};

template <typename X>
Padded to_channels_last(const KernelIO& io, const Plane& p, const X* x, int64_t n, int64_t c, int64_t cp, int32_t zp) {
  Padded d;
  d.cp = cp;
  // As far as the last output position's last tap reaches past the input (at least the input itself).
  d.hp = std::max(p.ph + p.h, (p.oh - 1) * p.sh + (p.kh - 1) * p.dh + 1);
  d.wp = std::max(p.pw + p.w, (p.ow - 1) * p.sw + (p.kw - 1) * p.dw + 1);
  d.x16 = scratch<int16_t>(static_cast<size_t>(n * d.hp * d.wp * cp), ScratchSlot::kQConvInput);
  // Row by padded row on the pool: padding rows zeroed whole, input rows transposed with their side padding
  // zeroed (the buffer is reused scratch). The pad channel is left as it is: its weights are 0.
  parallel_for(io, n * d.hp, 4, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t image = r / d.hp, ih = r % d.hp - p.ph;
      int16_t* row = d.x16 + r * d.wp * cp;
      if (ih < 0 || ih >= p.h) {
        std::fill(row, row + d.wp * cp, int16_t{0});
        continue;
      }
      std::fill(row, row + p.pw * cp, int16_t{0});
      std::fill(row + (p.pw + p.w) * cp, row + d.wp * cp, int16_t{0});
      block_channels_last(x + image * c * p.h * p.w + ih * p.w, c, p.h * p.w, cp, zp, 0, p.w, row + p.pw * cp);
    }
  });
  return d;
}

// How the tile reads an output position's K values: `runs` runs of `len` values at `off[t]` from the
// position's first tap. With unit width dilation a kernel row's taps are one run (kw * cp values).
struct Runs {
  int64_t runs = 0, len = 0;
  std::vector<int64_t> off;
};

Runs runs_of(const Plane& p, const Padded& d) {
  Runs r;
  const bool rows = p.dw == 1;
  r.runs = rows ? p.kh : p.kh * p.kw;
  r.len = rows ? p.kw * d.cp : d.cp;
  for (int64_t i = 0; i < p.kh; ++i)
    for (int64_t j = 0; j < (rows ? 1 : p.kw); ++j) r.off.push_back((i * p.dh * d.wp + j * p.dw) * d.cp);
  return r;
}

}  // namespace

// A kernel row's run (kw * cp values) of at least 8: the 3-channel stems qualify, the depthwise convolutions
// (groups) do not.
bool taps_suit(const ConvWeights& w, int64_t group) {
  return group == 1 && w.kernel.size() <= 2 && w.kernel.back() * qgemm::even(w.cg) >= 8;
}

TapPanels pack_taps(const ConvWeights& w) {
  TapPanels tp;
  tp.cp = qgemm::even(w.cg);
  tp.taps = 1;
  for (int64_t k : w.kernel) tp.taps *= k;
  // Row (t * cp + channel) of a [K', M] matrix, from W's rows in (channel, tap) order.
  const int64_t kk = tp.taps * tp.cp;
  std::vector<int16_t> dense(static_cast<size_t>(kk * w.m), 0);
  for (int64_t n = 0; n < w.m; ++n)
    for (int64_t ch = 0; ch < w.cg; ++ch)
      for (int64_t t = 0; t < tp.taps; ++t)
        dense[static_cast<size_t>((t * tp.cp + ch) * w.m + n)] =
            w.rows[static_cast<size_t>(n * w.kp + ch * tp.taps + t)];
  const int32_t zero = 0;
  tp.b = qgemm::pack_b<int16_t>(dense.data(), kk, w.m, w.m, 1, &zero, false);
  return tp;
}

void nhwc_conv(const KernelIO& io, const nn::WindowGeometry& g, const Tensor& x, int32_t x_zp, const TapPanels& tp,
               const TileSink& sink) {
  const Plane p = plane_of(g);
  const int64_t n = x.dim(0), c = x.dim(1), out = p.oh * p.ow, m = tp.b.n, panels = tp.b.panels();
  // Positions per task: about 8 tiles against one weight panel, in equal chunks of whole tiles.
  const int64_t chunks = (out + 47) / 48,
                per = ((out + chunks - 1) / chunks + qgemm::kRows - 1) / qgemm::kRows * qgemm::kRows;
  const int64_t items = n * panels * chunks;
  if (items == 0) return;
  const Padded d = x.dtype() == DType::kInt8 ? to_channels_last(io, p, x.data<int8_t>(), n, c, tp.cp, x_zp)
                                             : to_channels_last(io, p, x.data<uint8_t>(), n, c, tp.cp, x_zp);
  const Runs runs = runs_of(p, d);
  // Items: image, then the outer and the inner of (weight panel, position chunk). Where all the weights fit
  // in L2 (the early layers, the stems), a chunk's input rows stay in L1 while every panel passes over them;
  // otherwise a task's chunks share one panel (the late layers: megabytes of weights, a small plane).
  const bool panel_inner = tp.b.data.size() * sizeof(int16_t) <= (size_t{256} << 10);
  io.impl = qgemm::label();
  qgemm::balanced_for(io, items, 1, [&](int64_t i0, int64_t i1) {
    std::vector<const int16_t*> a(static_cast<size_t>(qgemm::kRows * runs.runs));
    alignas(32) int32_t local[qgemm::kRows * qgemm::kPanel];
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t j = i % (chunks * panels), image = i / (chunks * panels);
      const int64_t chunk = panel_inner ? j / panels : j % chunks, panel = panel_inner ? j % panels : j / chunks;
      const int64_t c0 = panel * qgemm::kPanel, cols = std::min(qgemm::kPanel, m - c0);
      const int16_t* weights = tp.b.data.data() + panel * tp.b.kp * qgemm::kPanel;
      const int16_t* image16 = d.x16 + image * d.hp * d.wp * d.cp;
      for (int64_t o0 = chunk * per; o0 < std::min(out, (chunk + 1) * per); o0 += qgemm::kRows) {
        const int rows = static_cast<int>(std::min(qgemm::kRows, out - o0));
        int64_t oy = o0 / p.ow, ox = o0 % p.ow;  // one division per tile, not two per row
        for (int r = 0; r < rows; ++r) {
          const int16_t* first = image16 + (oy * p.sh * d.wp + ox * p.sw) * d.cp;
          for (int64_t t = 0; t < runs.runs; ++t) a[static_cast<size_t>(r * runs.runs + t)] = first + runs.off[t];
          if (++ox == p.ow) {
            ox = 0;
            ++oy;
          }
        }
        qgemm::tile_taps(rows, a.data(), runs.runs, runs.len, weights, local);
        sink(image, o0, rows, c0, cols, local);
      }
    }
  });
}

}  // namespace parity::refrt::qconv
