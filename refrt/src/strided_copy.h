// Internal: gathers a strided view of a buffer into a contiguous row-major output
// (Transpose and Slice are both "read the input with other strides").
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "parity/tensor.h"

namespace parity::refrt {

// out[i0, i1, ...] = src[offset + sum_d i_d * src_strides[d]] (strides and offset in elements).
void strided_copy(const void* src, int64_t offset, const std::vector<int64_t>& src_strides, void* dst,
                  const Shape& out_shape, size_t elem_size);

}  // namespace parity::refrt
