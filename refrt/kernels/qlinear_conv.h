// Internal: the integer convolution shared by ConvInteger, QLinearConv and the fused QDQ conv.
#pragma once
#include <functional>
#include <vector>

#include "nn_common.h"
#include "qgemm.h"

namespace parity::refrt::qconv {

// k per piece of the 1-D and 2-D convolutions (qconv_panels.cc): even; 4 panels' 16 KB slices fit L1.
constexpr int64_t kPiece = 128;

// W minus its zero point (per tensor or per output channel), K = C/group * kernel, kp = even(K). 3-D and
// higher kernels: int16 rows [M, kp]. 1-D and 2-D: the same numbers piece by piece: for each k0 (a
// multiple of kPiece), the M rows' [k0, k0 + kc) at row stride kc, so that the weight rows of a piece
// stream sequentially (rows of kp at a time had the prefetchers miss every short run of a row).
struct ConvWeights {
  int64_t m = 0, cg = 0, kp = 0;
  std::vector<int64_t> kernel;
  std::vector<int16_t> rows, pieces;
  const int16_t* piece(int64_t k0, int64_t row) const {
    return pieces.data() + m * k0 + row * std::min(kPiece, kp - k0);
  }
};
ConvWeights widen_weights(const NodeDef& node, const Tensor& w, const std::vector<int32_t>& zp);

// The int32 sums [N, M, out...] of (x - x_zp) conv w, plus bias[m] when given.
Tensor int_conv(const NodeDef& node, const KernelIO& io, const nn::WindowAttrs& attrs, int64_t group, const Tensor& x,
                int32_t x_zp, const ConvWeights& w, const int32_t* bias);

// Where the sums of one block go: output rows [row, row + rows) (row = image * M + channel), positions
// [j0, j0 + cols); sums[r * ld + j] is row + r, position j0 + j. Called from the pool's threads.
using SumSink =
    std::function<void(int64_t row, int64_t rows, int64_t j0, const int32_t* sums, int64_t ld, int64_t cols)>;

// Checks x against the weights and attributes; returns the geometry (output shape [N, M, g.out...]).
nn::WindowGeometry conv_geometry(const NodeDef& node, const nn::WindowAttrs& attrs, int64_t group, const Tensor& x,
                                 const ConvWeights& w);

// The sums (plus bias[m]) of 1-D and 2-D convolutions, tile by tile into `sink` (qconv_panels.cc).
void panel_conv(const KernelIO& io, const nn::WindowGeometry& g, int64_t group, const Tensor& x, int32_t x_zp,
                const ConvWeights& w, const int32_t* bias, const SumSink& sink);

}  // namespace parity::refrt::qconv
