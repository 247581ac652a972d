// Internal: depthwise 2-D convolution (one input and one output channel per group) on small planes,
// eight channels per AVX2 vector. conv_direct.h sums each channel's plane on its own: on a 7x7 or
// 14x14 plane its per-channel set-up (padded phases, short rows, epilogue) cost more than the
// multiply-adds (MobileNetV3-small's 576-channel 5x5 conv on 7x7 ran at 10 GFLOP/s). Here a block of
// 8 channels is interleaved into one zero-padded [rows, cols, 8] buffer, every tap is one vector
// multiply-add for 8 channels, and the result is de-interleaved with the epilogue.
#pragma once
#include <vector>

#include "../src/activation.h"
#include "nn_common.h"

namespace parity::refrt::conv_depthwise {

// Whether run() handles this float32 conv (AVX2+FMA CPU, 2-D, group == C == M, output plane of at most
// kMaxPlane elements). Larger planes keep conv_direct: on 28x28 outputs (3x3 on 28x28, stride 2 on
// 56x56) interleaving the input cost more than it saved (4-6 % slower), on 14x14 and 7x7 outputs this
// path took 0.26-0.67 of conv_direct's time.
inline constexpr int64_t kMaxPlane = 16 * 16;
bool applies(const nn::WindowGeometry& g, int64_t c, int64_t m, int64_t group);

// y = conv(x, w) + b [+ z] then the activations; z (optional) has y's shape. Parallel over io's pool by
// (image, block of 8 channels).
void run(const KernelIO& io, const nn::WindowGeometry& g, int64_t n, int64_t c, const float* px, const float* pw,
         const float* pb, const float* pz, float* py, const std::vector<ActStep>& acts);

// The AVX-512 path (ISA level avx512 and up): any 2-D depthwise conv (group == C == M), any plane, strides and
// dilations, straight from NCHW (each channel's plane padded and split into stride phases, 16 outputs of a row per
// vector). Preferred to run() and conv_direct where it applies.
bool applies_avx512(const nn::WindowGeometry& g, int64_t c, int64_t m, int64_t group);
void run_avx512(const KernelIO& io, const nn::WindowGeometry& g, int64_t n, int64_t c, const float* px, const float* pw,
                const float* pb, const float* pz, float* py, const std::vector<ActStep>& acts);

// The same phases on AVX2, 8 outputs of a row per vector (ISA level avx2 and up): where run() does not apply (output
// planes over kMaxPlane), in place of conv_direct.
bool applies_avx2_phases(const nn::WindowGeometry& g, int64_t c, int64_t m, int64_t group);
void run_avx2_phases(const KernelIO& io, const nn::WindowGeometry& g, int64_t n, int64_t c, const float* px,
                     const float* pw, const float* pb, const float* pz, float* py, const std::vector<ActStep>& acts);

}  // namespace parity::refrt::conv_depthwise
