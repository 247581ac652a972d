// Internal helpers shared by the neural-network kernels (conv, pool, normalization, ...): float dtype
// dispatch with float16/bfloat16 computed in float32 and sliding-window geometry (GEMM: ../src/gemm.h).
#pragma once
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "../src/dispatch.h"
#include "../src/gemm.h"

namespace parity::refrt::nn {

// Runs `run(T{}, io)` with T = float or double; float16/bfloat16 inputs of `dtype` are widened to
// float32 first and the float32 outputs narrowed back.
template <typename Run>
void run_float(const NodeDef& node, KernelIO& io, DType dtype, Run&& run) {
  if (is_float16_like(dtype)) {
    with_float32(io, dtype, [&](KernelIO& f) { run_float(node, f, DType::kFloat32, run); });
    return;
  }
  if (!dispatch_float(dtype, [&](auto tag) { run(tag, io); }))
    node.fail("dtype " + dtype_name(dtype) + " is not implemented", ErrorKind::kUnsupported);
}

enum class AutoPad { kNotSet, kSameUpper, kSameLower, kValid };

// The window attributes common to Conv, ConvTranspose and the pools, parsed once.
struct WindowAttrs {
  AutoPad auto_pad = AutoPad::kNotSet;
  std::vector<int64_t> kernel_shape, strides, dilations, pads;
  bool ceil_mode = false;
};
WindowAttrs parse_window_attrs(const NodeDef& node);

// Per spatial dim: input, output and kernel extents, strides, dilations and the padding at both ends.
struct WindowGeometry {
  std::vector<int64_t> in, out, kernel, stride, dilation, pad_begin, pad_end;
  size_t rank() const { return in.size(); }
  int64_t in_size() const;
  int64_t out_size() const;
  int64_t kernel_size() const;
};

// Geometry of a forward window op (Conv, pools) over `in_spatial` with `kernel`; `pooling` enables
// ceil_mode. Fails on inconsistent attributes or a window larger than the padded input.
WindowGeometry forward_geometry(const NodeDef& node, const WindowAttrs& attrs, const std::vector<int64_t>& in_spatial,
                                const std::vector<int64_t>& kernel, bool pooling);

// A 1-D geometry as the 2-D one of a unit height ([N, C, L] has the memory of [N, C, 1, L]); others as they
// are. For libraries that take 2-D windows only (oneDNN's convolutions).
WindowGeometry as_2d(const WindowGeometry& g);

// sum x[i]^2 over a float32 row, in double (RMS normalisation's statistic): four AVX2 accumulators of four doubles
// where refrt's level has AVX2 (one chain of dependent adds took 0.1 ms for a [512, 512] activation), else one loop.
double sum_squares(const float* x, int64_t n);

// Spatial dims of an [N, C, D1, ...] shape.
inline std::vector<int64_t> spatial_dims(const Shape& s) { return {s.begin() + 2, s.end()}; }

}  // namespace parity::refrt::nn
