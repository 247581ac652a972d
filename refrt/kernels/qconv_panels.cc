// The integer convolution over 1-D and 2-D inputs without an im2col buffer: for each panel of 16
// output positions, the columns (x - x_zp, padding 0) are gathered straight from the 8-bit input into
// qgemm's packed panel layout. Runs of up to 4 panels are gathered together, and the weight rows run
// against them in pieces of k, each piece of six rows used by all the run's panels while it is in L1.
// The runs (of every image and group), and where they are few, blocks of weight rows, are split over
// the session's pool.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "qlinear_conv.h"

namespace parity::refrt::qconv {
namespace {

// The geometry as 2-D (1-D as height 1).
struct Plane {
  int64_t h = 1, w = 1, oh = 1, ow = 1, kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
};

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

// The work items: every (image, group, run of up to kGroup panels) and, where those are too few to
// keep the pool's threads equally busy (ResNet's 7x7 stage has 4 panels: two threads got 2 each, and
// a late thread left the other idle), blocks of whole weight-row tiles. With blocks, the panels are
// gathered once for the node first (they are few) and every block reads them. The split only
// changes which thread computes a tile and how k is cut into pieces (int32 additions wrap alike in
// any order): the sums are the same integers.
struct Split {
  int64_t panels = 0, runs = 0, tiles = 0, blocks = 1, items = 0;
};

constexpr int64_t kGroup = 4;      // panels that share each piece of weight rows while it is in L1
constexpr int64_t kItems = 32;     // items wanted per node (balanced_for takes up to 16 chunks of them)
constexpr int64_t kMinTiles = 8;   // weight-row tiles per block at least
constexpr int64_t kMaxTiles = 32;  // and at most (a block's sums stay within 192 rows x 64 int32)

Split split_work(int64_t images_groups, int64_t out_size, int64_t mg) {
  Split s;
  s.panels = (out_size + qgemm::kPanel - 1) / qgemm::kPanel;
  s.runs = (s.panels + kGroup - 1) / kGroup;
  s.tiles = (mg + qgemm::kRows - 1) / qgemm::kRows;
  const int64_t base = images_groups * s.runs;
  if (base > 0 && base < kItems)
    s.blocks = std::max<int64_t>(1, std::min((kItems + base - 1) / base, s.tiles / kMinTiles));
  s.blocks = std::max(s.blocks, (s.tiles + kMaxTiles - 1) / kMaxTiles);
  s.items = base * s.blocks;
  return s;
}

// The sums of weight-row tiles [t0, t1) of group gi against np panels (`panels`, kp * 16 apart) into
// sums: row r of the block, panel q at sums[r * ld + q * 16], ld = kGroup * 16. k in pieces of kPiece,
// each piece of six weight rows used by all np panels while it is in cache (ResNet's late stages have
// 2.4-4.7 MB of weights: one panel at a time streamed all of them from L3 per 16 positions).
void block_sums(const ConvWeights& w, int64_t mg, int64_t gi, int64_t t0, int64_t t1, const int16_t* panels, int64_t np,
                int32_t* sums) {
  constexpr int64_t ld = kGroup * qgemm::kPanel;
  for (int64_t k0 = 0; k0 < w.kp; k0 += kPiece) {
    const int64_t kc = std::min(kPiece, w.kp - k0);
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t r0 = t * qgemm::kRows, rows = std::min(qgemm::kRows, mg - r0);
      for (int64_t q = 0; q < np; ++q)
        qgemm::tile(static_cast<int>(rows), w.piece(k0, gi * mg + r0), kc,
                    panels + q * w.kp * qgemm::kPanel + k0 * qgemm::kPanel, kc,
                    sums + (r0 - t0 * qgemm::kRows) * ld + q * qgemm::kPanel, ld, k0 > 0);
    }
  }
}

// What the items of one node share.
struct ConvJob {
  Plane p;
  Split sp;
  int64_t group = 1;
  const Tensor* x = nullptr;
  int32_t x_zp = 0;
  const ConvWeights* w = nullptr;
  const int16_t* gathered = nullptr;  // every panel of the node (with blocks), else each item gathers its own
};

// Panels [first, first + np) of image b, group gi into dst (kp * 16 apart).
template <typename X>
void gather_run(const ConvJob& job, int64_t b, int64_t gi, int64_t first, int64_t np, std::vector<int64_t>& ranges,
                int16_t* dst) {
  const ConvWeights& w = *job.w;
  const int64_t in_size = job.p.h * job.p.w, out_size = job.p.oh * job.p.ow;
  ranges.resize(static_cast<size_t>(2 * qgemm::kPanel * job.p.kw));
  for (int64_t q = 0; q < np; ++q) {
    const int64_t j0 = (first + q) * qgemm::kPanel;
    pack_panel(job.p, w.cg, job.x->data<X>() + (b * job.x->dim(1) + gi * w.cg) * in_size, job.x_zp, j0,
               std::min(qgemm::kPanel, out_size - j0), ranges.data(), dst + q * w.kp * qgemm::kPanel);
  }
}

// One chunk of items [i0, i1).
template <typename X>
void run_items(const ConvJob& job, const int32_t* bias, const SumSink& sink, int64_t i0, int64_t i1) {
  const Split& sp = job.sp;
  const ConvWeights& w = *job.w;
  const int64_t m = w.m, mg = m / job.group, out_size = job.p.oh * job.p.ow, ld = kGroup * qgemm::kPanel;
  thread_local std::vector<int16_t> own;
  thread_local std::vector<int32_t> sums;
  thread_local std::vector<int64_t> ranges;
  sums.resize(static_cast<size_t>(((sp.tiles + sp.blocks - 1) / sp.blocks) * qgemm::kRows * ld));
  if (!job.gathered) own.resize(static_cast<size_t>(kGroup * w.kp * qgemm::kPanel));
  for (int64_t i = i0; i < i1; ++i) {
    const int64_t ri = i / sp.blocks, blk = i % sp.blocks;
    const int64_t b = ri / (job.group * sp.runs), gi = (ri / sp.runs) % job.group, first = (ri % sp.runs) * kGroup;
    const int64_t np = std::min(kGroup, sp.panels - first);
    const int16_t* panels = own.data();
    if (job.gathered)
      panels = job.gathered + ((b * job.group + gi) * sp.panels + first) * w.kp * qgemm::kPanel;
    else
      gather_run<X>(job, b, gi, first, np, ranges, own.data());
    const int64_t t0 = sp.tiles * blk / sp.blocks, t1 = sp.tiles * (blk + 1) / sp.blocks;
    block_sums(w, mg, gi, t0, t1, panels, np, sums.data());
    const int64_t r0 = t0 * qgemm::kRows, rows = std::min(mg, t1 * qgemm::kRows) - r0;
    if (bias)
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < np * qgemm::kPanel; ++j) sums[r * ld + j] += bias[gi * mg + r0 + r];
    const int64_t j0 = first * qgemm::kPanel;
    sink(b * m + gi * mg + r0, rows, j0, sums.data(), ld, std::min(np * qgemm::kPanel, out_size - j0));
  }
}

template <typename X>
void run_conv(const KernelIO& io, ConvJob& job, const int32_t* bias, const SumSink& sink) {
  const Split& sp = job.sp;
  std::vector<int16_t> gathered;
  if (sp.blocks > 1) {
    const int64_t all = job.x->dim(0) * job.group * sp.panels;
    gathered.resize(static_cast<size_t>(all * job.w->kp * qgemm::kPanel));
    parallel_for(io, all, 1, [&](int64_t p0, int64_t p1) {
      std::vector<int64_t> ranges;
      for (int64_t i = p0; i < p1; ++i)
        gather_run<X>(job, i / (job.group * sp.panels), (i / sp.panels) % job.group, i % sp.panels, 1, ranges,
                      gathered.data() + i * job.w->kp * qgemm::kPanel);
    });
    job.gathered = gathered.data();
  }
  // About 1M products per chunk at least (small convs: fewer, larger chunks).
  const int64_t per_item = (sp.tiles / sp.blocks) * qgemm::kRows * job.w->kp * qgemm::kPanel * kGroup;
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 20) / std::max<int64_t>(1, per_item));
  qgemm::balanced_for(io, sp.items, grain, [&](int64_t i0, int64_t i1) { run_items<X>(job, bias, sink, i0, i1); });
}

}  // namespace

void panel_conv(const KernelIO& io, const nn::WindowGeometry& g, int64_t group, const Tensor& x, int32_t x_zp,
                const ConvWeights& w, const int32_t* bias, const SumSink& sink) {
  ConvJob job;
  job.p = plane_of(g);
  job.sp = split_work(x.dim(0) * group, g.out_size(), w.m / group);
  if (job.sp.items == 0 || w.m / group == 0) return;
  job.group = group;
  job.x = &x;
  job.x_zp = x_zp;
  job.w = &w;
  if (x.dtype() == DType::kInt8)
    run_conv<int8_t>(io, job, bias, sink);
  else
    run_conv<uint8_t>(io, job, bias, sink);
}

}  // namespace parity::refrt::qconv
