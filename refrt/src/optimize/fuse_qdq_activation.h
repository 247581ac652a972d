// Internal to fuse_qdq: the elementwise float islands between quantized nodes.
//
//   x8 -> DequantizeLinear -> elementwise float ops (Gelu, SiLU, Sigmoid, Relu, x * c, ...) -> QuantizeLinear -> y8
//
// maps each of x8's 256 values to one of y8's: the island is a 256-entry table. It is computed at load by running
// refrt's own kernels of those very nodes on the 256 inputs, so the table holds, bit for bit, what the unfused
// plan computes. The island becomes the table: folded into the QGemm / QConv that writes x8 (attribute "lut",
// applied to each block of requantized outputs while it is in cache) when that node is x8's only reader, else a
// QLookup node (qlookup.cc). Scales and zero points must be constant scalars, every other operand of the ops a
// constant rank-0 scalar, and no value of the island may have a reader outside it (else it stays in float).
#pragma once
#include "../model_def.h"

namespace parity::refrt {

bool fuse_qdq_lookup(GraphDef& g);

// Also the 8-bit islands that are no table (called by fuse_qdq_lookup): DequantizeLinear -> MaxPool ->
// QuantizeLinear with one scale and zero point becomes MaxPool of the bytes, and DequantizeLinear(a8) +
// DequantizeLinear(b8) [-> Relu] -> QuantizeLinear a QAdd node (qadd.cc).
bool fuse_qdq_pool_add(GraphDef& g);

}  // namespace parity::refrt
