// Internal: load-time graph optimisation. Each pass rewrites a GraphDef whose constant subgraphs are
// already folded into initializers, replacing groups of nodes by one node that computes the same
// values (fused nodes live in kFusedDomain and remember the nodes they replaced, for the profiler).
// A value that is a graph output, or that another node still reads, is never fused away.
#pragma once
#include <set>
#include <string>
#include <vector>

#include "../model_def.h"

namespace parity::refrt {

// Pass names, in the order they run (SessionOptions::disabled_passes takes these names); each pass is
// one file of this directory named after it, registered in optimizer.cc:
//   fuse_qdq             DequantizeLinear -> Conv / MatMul / Gemm [-> Relu / Clip] -> QuantizeLinear with
//                        constant 8-bit weights: one integer QConv / QGemm node (fuse_qdq.cc); runs on the
//                        file's graph before constant folding
//   fuse_weight_only     DequantizeLinear(constant 8-bit or 4-bit W [K, N], blocked along K, per column or per
//                        tensor) -> MatMul / Gemm: one WeightOnlyMatMul reading the quantized weights
//                        (fuse_weight_only.cc, kernels/weight_only.cc); before constant folding too
//   drop_unused_outputs  optional outputs nobody reads (MaxPool indices, LayerNormalization statistics,
//                        Dropout mask) are not computed
//   fold_batch_norm      Conv -> BatchNormalization (inference) with constant weights: scaled weights and bias
//   fuse_conv_add        Conv + Add of another computed tensor (residual) as the conv's epilogue
//   fuse_activation      Conv / Gemm / MatMul + Relu, Clip, HardSigmoid, HardSwish, Sigmoid, SiLU, GELU
//                        (ONNX ops or their decomposed forms) as the kernel's epilogue
//   fuse_matmul_add      MatMul with a constant 2-D B + Add of a constant bias broadcast along rows
//   fuse_elementwise     decomposed GELU / SiLU / hardswish / hardsigmoid elsewhere: one activation node
//   fuse_rms_norm        x * (1 / sqrt(mean(x^2) + eps)) [* w]: one RMS normalisation node
//   fuse_safe_softmax    Softmax whose all -inf rows become 0 (torch's _safe_softmax decomposed, 8 nodes)
//   fuse_attention       softmax(Q K^T * scale [+ mask]) V written as MatMul [Reshape] Mul/Div [Add | Where]
//                        Softmax (or a safe softmax) [Reshape] MatMul, and Attention (23) without past /
//                        softcap: one FusedAttention (fuse_attention.cc, kernels/attention_fused.cc)
//   fold_transpose_matmul MatMul of a Transpose of the last two axes (K^T of an attention, through
//                        scalar Mul/Div, Identity and one Reshape): a GEMM with transB, no copy
//   group_sibling_matmuls MatMuls of one A with constant float32 Bs of one K (q / k / v, gate / up): one
//                        FusedSiblingMatMul, whose one-row runs stream the Bs side by side (kernels/matmul_siblings.cc)
//   keep_conv_blocks     a conv whose readers are all convs hands them oneDNN's channel blocks, not NCHW
//                        (keep_conv_blocks.cc; kernels/conv.cc takes either layout)
//   keep_widened         a float16 value read only by products on constant weights is written as float32 holding
//                        its float16 values, so that no reader widens it; one read by several products and other
//                        nodes is widened by the first product for the rest (keep_widened.cc; kernels/matmul.cc)
const std::vector<std::string>& optimization_passes();

// The passes that must see the file's graph before constant folding (fuse_qdq, fuse_weight_only), unless
// disabled.
void optimize_graph_before_folding(GraphDef& graph, const std::set<std::string>& disabled);

// The session's weight-only accuracy level (SessionOptions) on every WeightOnlyMatMul, and the level a
// SessionOptions value means (-1: PARITY_REFRT_WEIGHT_ONLY_ACCURACY, else 0; a usage error outside 0..4).
void set_weight_only_accuracy(GraphDef& g, int level);
int resolve_weight_only_accuracy(int option, const std::string& origin);

// Runs the passes not in `disabled` (unknown names are an error, kUsage).
void optimize_graph(GraphDef& graph, const std::set<std::string>& disabled, const std::string& origin);

}  // namespace parity::refrt
