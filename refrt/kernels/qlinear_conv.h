// Internal: the integer convolution shared by ConvInteger, QLinearConv and the fused QDQ conv.
#pragma once
#include <functional>
#include <vector>

#include "nn_common.h"
#include "qgemm.h"

namespace parity::refrt::qconv {

// The weights of nhwc_conv: qgemm panels of 16 output channels over k = (tap, channel), the channels
// padded to even (cp), so that each output position's K values are its taps' runs of cp channels.
struct TapPanels {
  int64_t cp = 0, taps = 0;
  qgemm::PackedB b;
  bool empty() const { return b.data.empty(); }
};

// W minus its zero point (per tensor or per output channel), int16 rows [M, kp] (kp = even(C/group * kernel)),
// and, where nhwc_conv suits the weights (taps_suit), the same values as TapPanels.
struct ConvWeights {
  int64_t m = 0, cg = 0, kp = 0;
  std::vector<int64_t> kernel;
  std::vector<int16_t> rows;
  TapPanels taps;
};
ConvWeights widen_weights(const NodeDef& node, const Tensor& w, const std::vector<int32_t>& zp, int64_t group);

// Whether the channels-last path suits: 1-D or 2-D, one group, kernel rows of at least 8 values (kw times
// the even channel count). The grouped and depthwise convolutions keep panel_conv.
bool taps_suit(const ConvWeights& w, int64_t group);
TapPanels pack_taps(const ConvWeights& w);

// The geometry of a 1-D or 2-D convolution as 2-D (1-D as height 1).
struct Plane {
  int64_t h = 1, w = 1, oh = 1, ow = 1, kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
};
Plane plane_of(const nn::WindowGeometry& g);

// The int32 sums [N, M, out...] of (x - x_zp) conv w, plus bias[m] when given.
Tensor int_conv(const NodeDef& node, const KernelIO& io, const nn::WindowAttrs& attrs, int64_t group, const Tensor& x,
                int32_t x_zp, const ConvWeights& w, const int32_t* bias);

// Where the sums go: output row `row` (= image * M + channel), positions [j0, j0 + cols).
using SumSink = std::function<void(int64_t row, int64_t j0, const int32_t* sums, int64_t cols)>;

// Checks x against the weights and attributes; returns the geometry (output shape [N, M, g.out...]).
nn::WindowGeometry conv_geometry(const NodeDef& node, const nn::WindowAttrs& attrs, int64_t group, const Tensor& x,
                                 const ConvWeights& w);

// Where nhwc_conv's sums go: a tile of output positions [o0, o0 + rows) of `image` x channels [c0, c0 + cols),
// sums[r * 16 + j] for position o0 + r and channel c0 + j.
using TileSink =
    std::function<void(int64_t image, int64_t o0, int rows, int64_t c0, int64_t cols, const int32_t* sums)>;

// The sums of a convolution for which taps_suit holds, tile by tile into `sink` (qconv_nhwc.cc).
void nhwc_conv(const KernelIO& io, const nn::WindowGeometry& g, const Tensor& x, int32_t x_zp, const TapPanels& tp,
               const TileSink& sink);

// The sums (plus bias[m]) of 1-D and 2-D convolutions, tile by tile into `sink` (qconv_panels.cc).
void panel_conv(const KernelIO& io, const nn::WindowGeometry& g, int64_t group, const Tensor& x, int32_t x_zp,
                const ConvWeights& w, const int32_t* bias, const SumSink& sink);

}  // namespace parity::refrt::qconv
