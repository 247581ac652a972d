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

struct KernelIO;
// The same over io's pool: copies of 256 KiB or 64 Ki elements and more are split along the output's outermost dim of
// extent > 1 (a transformer's head transposes, [B, S, H, D] -> [B, H, S, D], ran on one core at 2 threads, slower than
// at 1 thread when the product before them left half of their input in the other core's cache; float16 BERT's, 192
// KiB each, ran so until the element count counted too).
void strided_copy(const KernelIO& io, const void* src, int64_t offset, const std::vector<int64_t>& src_strides,
                  void* dst, const Shape& out_shape, size_t elem_size);

}  // namespace parity::refrt
