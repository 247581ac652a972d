// Internal: 2-D MaxPool of one float32 plane, separably: per output row the max over its valid input rows (one
// contiguous, vectorised pass per row), then per output column the max over its valid taps of that row (strides 1
// and 2 vectorised too). Only for a plane without NaN: eager's and ONNX's NaN propagation needs the per-window
// test of pool.cc's exact path, which the caller runs when this returns false. A window entirely in the padding
// gives the lowest float, as there.
#pragma once
#include "nn_common.h"

namespace parity::refrt::max_pool_rows {

// out[oh * ow] = max pool of plane[ih * iw] for a rank-2 geometry; false (out untouched): the plane holds a NaN.
bool plane(const nn::WindowGeometry& g, const float* plane, float* out);

}  // namespace parity::refrt::max_pool_rows
