// The `quantized_decomposed` ops (PT2E quantization) for the libtorch reference executor: torch defines
// them in Python only, so the reference registers C++ twins of them (reference_quantized.cc).
#pragma once
#include <vector>

namespace parity::verify {

// Idempotent; a no-op when the process already has the namespace.
void register_quantized_decomposed_ops();
// The same for torchao's affine ops (torchao::quantize_affine / dequantize_affine / choose_qparams_affine:
// reference_torchao.cc).
void register_torchao_ops();

}  // namespace parity::verify

#include <ATen/ATen.h>

namespace parity::verify {

// torchao quantize_affine's unrounded value, input * (1 / scale) under block_size, in double
// (reference_torchao.cc; the requantized rule measures how far a flipped element lay from a tie).
at::Tensor torchao_unrounded(const at::Tensor& input, const std::vector<int64_t>& block_size, const at::Tensor& scale);

}  // namespace parity::verify
