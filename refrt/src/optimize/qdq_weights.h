// Internal to fuse_qdq: weights that a quantizer left as QuantizeLinear of a float constant.
#pragma once
#include "../model_def.h"

namespace parity::refrt {

// Replaces QuantizeLinear(W) and QuantizeLinear(Transpose(W)), W a float32 constant and the scale and
// zero point constant (per tensor or per axis, int8 / uint8), by the quantized constant, computed as the
// QuantizeLinear kernel computes it. ONNX Runtime's quantizer writes a Linear's weights that way
// (Transpose -> QuantizeLinear -> DequantizeLinear -> Gemm); folded, fuse_qdq sees constant 8-bit weights.
bool quantize_constant_weights(GraphDef& g);

}  // namespace parity::refrt
