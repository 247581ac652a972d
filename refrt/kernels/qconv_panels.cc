// The integer convolution over 1-D and 2-D inputs without an im2col buffer: for each panel of 16
// output positions, the columns (x - x_zp, padding 0) are gathered straight from the 8-bit input into
// qgemm's packed panel layout, and every tile of weight rows runs against that panel while it is in
// cache. One pass over the input per panel instead of widen + im2col + pack over the whole image, and
// the panels (of every image and group) are split over the session's pool.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "qlinear_conv.h"

namespace parity::refrt::qconv {
namespace {

// The columns of one panel that share an output row: [j0, j1) read input row ih and columns iw, iw + sw, ...
struct Segment {
  int64_t j0 = 0, j1 = 0, ih = 0, iw = 0;
};

// Splits output positions [o0, o0 + cols) into runs within one output row; returns their number.
int split_rows(const Plane& p, int64_t o0, int64_t cols, Segment* seg) {
  int n = 0;
  for (int64_t j = 0; j < cols;) {
    const int64_t o = o0 + j, oh = o / p.ow, ow = o % p.ow, len = std::min(cols - j, p.ow - ow);
    seg[n++] = {j, j + len, oh * p.sh - p.ph, ow * p.sw - p.pw};
    j += len;
  }
  return n;
}

// ranges[(s * kw + b) * 2 + {0, 1}] = [lo, hi): the columns j - j0 of segment s whose tap column b falls
// inside the input's width (0 <= iw + (j - j0) * sw + b * dw < w). The divisions run once per panel.
void width_ranges(const Plane& p, const Segment* seg, int nseg, int64_t* ranges) {
  for (int s = 0; s < nseg; ++s)
    for (int64_t b = 0; b < p.kw; ++b) {
      const int64_t iw = seg[s].iw + b * p.dw, len = seg[s].j1 - seg[s].j0;
      const int64_t lo = std::min(len, iw >= 0 ? 0 : (-iw + p.sw - 1) / p.sw);
      ranges[(s * p.kw + b) * 2] = lo;
      ranges[(s * p.kw + b) * 2 + 1] = std::max(lo, iw >= p.w ? 0 : std::min(len, (p.w - 1 - iw) / p.sw + 1));
    }
}

// row[j0, j1) of segment s for tap (a, b) of plane xc: x - zp where the tap falls inside the input, else 0.
template <typename X>
void gather_segment(const Plane& p, const X* xc, int32_t zp, const Segment& s, const int64_t* range, int64_t a,
                    int64_t b, int16_t* row) {
  const int64_t ih = s.ih + a * p.dh, iw = s.iw + b * p.dw;
  const bool in = ih >= 0 && ih < p.h;
  const int64_t lo = in ? range[0] : 0, hi = in ? range[1] : 0;
  std::fill(row + s.j0, row + s.j0 + lo, int16_t{0});
  std::fill(row + s.j0 + hi, row + s.j1, int16_t{0});
  const int64_t base = ih * p.w + iw;
  if (p.sw == 1)
    for (int64_t j = lo; j < hi; ++j) row[s.j0 + j] = static_cast<int16_t>(xc[base + j] - zp);
  else
    for (int64_t j = lo; j < hi; ++j) row[s.j0 + j] = static_cast<int16_t>(xc[base + j * p.sw] - zp);
}

// panel[kp * 16] = the K = cg * kh * kw rows of output positions [o0, o0 + cols) of one image and group
// (`x`: cg planes of h * w), minus zp, as k pairs of 16 interleaved columns (qgemm.h). Padding taps and
// columns past `cols` are 0. `ranges`: scratch of 2 * 16 * kw.
template <typename X>
void pack_panel(const Plane& p, int64_t cg, const X* x, int32_t zp, int64_t o0, int64_t cols, int64_t* ranges,
                int16_t* panel) {
  Segment seg[qgemm::kPanel];
  const int nseg = split_rows(p, o0, cols, seg);
  width_ranges(p, seg, nseg, ranges);
  // A 1x1 stride-1 unpadded conv reads its columns from consecutive positions, across rows too.
  const bool flat = cols == qgemm::kPanel && p.kh * p.kw == 1 && p.sh == 1 && p.sw == 1 && p.ph == 0 && p.pw == 0;
  const bool one_run = cols == qgemm::kPanel && nseg == 1 && (p.sw == 1 || p.sw == 2);
  alignas(32) int16_t rows[2][qgemm::kPanel] = {};
  int64_t k = 0;
  for (int64_t c = 0; c < cg; ++c)
    for (int64_t a = 0; a < p.kh; ++a)
      for (int64_t b = 0; b < p.kw; ++b, ++k) {
        int16_t* row = rows[k & 1];
        const X* xc = x + c * p.h * p.w;
        const int64_t ih = seg[0].ih + a * p.dh, iw = seg[0].iw + b * p.dw;
        // All 16 inside (stride 2: the 32 bytes read stay inside the row too).
        if (flat || (one_run && ih >= 0 && ih < p.h && ranges[b * 2] == 0 && ranges[b * 2 + 1] == qgemm::kPanel &&
                     (p.sw == 1 || iw + 2 * qgemm::kPanel <= p.w))) {
          if (p.sw == 2 && !flat)
            qgemm::widen16_stride2(xc + ih * p.w + iw, std::is_signed_v<X>, zp, row);
          else
            qgemm::widen16(flat ? xc + o0 : xc + ih * p.w + iw, std::is_signed_v<X>, zp, row);
        } else {
          for (int i = 0; i < nseg; ++i) gather_segment(p, xc, zp, seg[i], ranges + (i * p.kw + b) * 2, a, b, row);
          std::fill(row + cols, row + qgemm::kPanel, int16_t{0});
        }
        if (k & 1) qgemm::interleave_pair(rows[0], rows[1], panel + (k - 1) * qgemm::kPanel);
      }
  if (k & 1) {
    std::fill(rows[1], rows[1] + qgemm::kPanel, int16_t{0});
    qgemm::interleave_pair(rows[0], rows[1], panel + (k - 1) * qgemm::kPanel);
  }
}

}  // namespace

Plane plane_of(const nn::WindowGeometry& g) {
  Plane p;
  const size_t d = g.rank() - 1;  // the last (width) axis
  p.w = g.in[d];
  p.ow = g.out[d];
  p.kw = g.kernel[d];
  p.sw = g.stride[d];
  p.pw = g.pad_begin[d];
  p.dw = g.dilation[d];
  if (g.rank() == 2) {
    p.h = g.in[0];
    p.oh = g.out[0];
    p.kh = g.kernel[0];
    p.sh = g.stride[0];
    p.ph = g.pad_begin[0];
    p.dh = g.dilation[0];
  }
  return p;
}

void panel_conv(const KernelIO& io, const nn::WindowGeometry& g, int64_t group, const Tensor& x, int32_t x_zp,
                const ConvWeights& w, const int32_t* bias, const SumSink& sink) {
  const Plane p = plane_of(g);
  const int64_t c = x.dim(1), m = w.m, mg = m / group, out_size = g.out_size(), in_size = g.in_size();
  const int64_t panels = (out_size + qgemm::kPanel - 1) / qgemm::kPanel, items = x.dim(0) * group * panels;
  if (items == 0 || mg == 0) return;
  const int64_t grain = std::max<int64_t>(1, 262144 / std::max<int64_t>(1, mg * w.kp * qgemm::kPanel));
  io.impl = qgemm::label();
  const auto run = [&](auto tag) {
    using X = decltype(tag);
    qgemm::balanced_for(io, items, grain, [&](int64_t i0, int64_t i1) {
      std::vector<int16_t> panel(static_cast<size_t>(w.kp * qgemm::kPanel));
      std::vector<int64_t> ranges(static_cast<size_t>(2 * qgemm::kPanel * p.kw));
      alignas(32) int32_t local[qgemm::kRows * qgemm::kPanel];
      for (int64_t i = i0; i < i1; ++i) {
        const int64_t b = i / (group * panels), gi = (i / panels) % group, j0 = (i % panels) * qgemm::kPanel;
        const int64_t cols = std::min(qgemm::kPanel, out_size - j0);
        pack_panel(p, w.cg, x.data<X>() + (b * c + gi * w.cg) * in_size, x_zp, j0, cols, ranges.data(), panel.data());
        for (int64_t r0 = 0; r0 < mg; r0 += qgemm::kRows) {
          const int64_t rows = std::min(qgemm::kRows, mg - r0), ch = gi * mg + r0;
          qgemm::tile(static_cast<int>(rows), w.rows.data() + ch * w.kp, w.kp, panel.data(), w.kp, local);
          for (int64_t r = 0; r < rows; ++r) {
            int32_t* sums = local + r * qgemm::kPanel;
            if (bias)
              for (int64_t j = 0; j < cols; ++j) sums[j] += bias[ch + r];
            sink(b * m + ch + r, j0, sums, cols);
          }
        }
      }
    });
  };
  if (x.dtype() == DType::kInt8)
    run(int8_t{});
  else
    run(uint8_t{});
}

}  // namespace parity::refrt::qconv
