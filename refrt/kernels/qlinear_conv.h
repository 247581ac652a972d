// Internal: the integer convolution shared by ConvInteger, QLinearConv and the fused QDQ conv.
#pragma once
#include <functional>
#include <vector>

#include "nn_common.h"
#include "qgemm.h"

namespace parity::refrt::qconv {

// W minus its zero point (per tensor or per output channel), int16 rows [M, kp] (kp = even(C/group * kernel)).
struct ConvWeights {
  int64_t m = 0, cg = 0, kp = 0;
  std::vector<int64_t> kernel;
  std::vector<int16_t> rows;
};
ConvWeights widen_weights(const NodeDef& node, const Tensor& w, const std::vector<int32_t>& zp);

// The int32 sums [N, M, out...] of (x - x_zp) conv w, plus bias[m] when given.
Tensor int_conv(const NodeDef& node, const KernelIO& io, const nn::WindowAttrs& attrs, int64_t group, const Tensor& x,
                int32_t x_zp, const ConvWeights& w, const int32_t* bias);

// Where the sums go: output row `row` (= image * M + channel), positions [j0, j0 + cols).
using SumSink = std::function<void(int64_t row, int64_t j0, const int32_t* sums, int64_t cols)>;

// Checks x against the weights and attributes; returns the geometry (output shape [N, M, g.out...]).
nn::WindowGeometry conv_geometry(const NodeDef& node, const nn::WindowAttrs& attrs, int64_t group, const Tensor& x,
                                 const ConvWeights& w);

// The sums (plus bias[m]) of 1-D and 2-D convolutions, tile by tile into `sink` (qconv_panels.cc).
void panel_conv(const KernelIO& io, const nn::WindowGeometry& g, int64_t group, const Tensor& x, int32_t x_zp,
                const ConvWeights& w, const int32_t* bias, const SumSink& sink);

}  // namespace parity::refrt::qconv
