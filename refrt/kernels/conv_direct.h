// Internal: 2-D convolution computed directly, for convs whose every output sums few products
// (depthwise convs, the 3-channel stem of an image net): an im2col + GEMM of K <= 32 spends its time
// packing, while here each kernel tap is one multiply-add over the output plane.
#pragma once
#include <vector>

#include "../src/activation.h"
#include "nn_common.h"

namespace parity::refrt::conv_direct {

// Whether run() handles this conv: 2-D, the same stride on both axes, at most kMaxTaps products per
// output (input channels per group x kernel area), not a 1x1 (those are plain GEMMs).
inline constexpr int64_t kMaxTaps = 32;
bool applies(const nn::WindowGeometry& g, int64_t channels_per_group);

// y = conv(x, w) + b [+ z] then the activations; z (optional) has y's shape. Parallel over io's pool
// by (image, group, block of output channels).
template <typename T>
void run(const KernelIO& io, const nn::WindowGeometry& g, int64_t n, int64_t c, int64_t m, int64_t group, const T* px,
         const T* pw, const T* pb, const T* pz, T* py, const std::vector<ActStep>& acts);

}  // namespace parity::refrt::conv_direct
