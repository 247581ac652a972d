// Internal: channel blocks between convolutions (optimize/keep_conv_blocks.cc). A float32 [N, C, H, W] tensor is
// held as [N, C / B, H, W, B] with B = block_width(C): channels last ([N, 1, H, W, C], for oneDNN's brgconv) at
// refrt's AVX-512 levels, nChw8c (its AVX2 JIT kernels) below. A conv whose X and Y are both so runs with no layout
// move (ONNX Runtime's NCHWc transformer does the same). Measured on ResNet-18 (Intel Xeon, AMX host, 1 thread,
// moves skipped on purpose): brgconv on channels-last tensors 10 % faster than the JIT kernel on nChw16c.
#pragma once
#include <cstdint>

#include "../src/kernel.h"

namespace parity::refrt::conv_dnnl {

int64_t block_width(int64_t channels);  // C at refrt's AVX-512 levels, 8 below (C: a multiple of 16)
// The moves between the layouts, over io's pool when given.
Tensor to_blocks(const Tensor& nchw, const KernelIO* io = nullptr);
Tensor from_blocks(const Tensor& blocked, const KernelIO* io = nullptr);

// Whether a float32 conv reads X and writes Y in channel blocks (an added input comes in Y's layout).
struct Blocks {
  bool x = false, y = false;
  bool any() const { return x || y; }
};

}  // namespace parity::refrt::conv_dnnl
