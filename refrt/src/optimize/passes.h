// Internal to refrt's load-time passes: one function per pass, each in the file of its name. A pass
// rewrites the graph in place and returns whether it changed anything (optimizer.h lists what each does).
#pragma once
#include "../model_def.h"

namespace parity::refrt {

bool fuse_qdq(GraphDef& g);
bool fuse_weight_only(GraphDef& g);
bool drop_unused_outputs(GraphDef& g);
bool fold_batch_norm(GraphDef& g);
bool fuse_matmul_add(GraphDef& g);
bool fuse_conv_add(GraphDef& g);
bool fuse_activation(GraphDef& g);
bool fuse_elementwise(GraphDef& g);
bool fuse_rms_norm(GraphDef& g);
bool fuse_safe_softmax(GraphDef& g);
bool fuse_attention(GraphDef& g);
bool fold_transpose_matmul(GraphDef& g);
bool group_sibling_matmuls(GraphDef& g);
bool keep_conv_blocks(GraphDef& g);
bool keep_widened(GraphDef& g);

}  // namespace parity::refrt
