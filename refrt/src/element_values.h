// Internal: single elements of any raw dtype read or written as numbers, for the kernels whose
// scalars (OneHot depth, Range bounds, Pad and ConstantOfShape values, EyeLike's 1) may come in any
// dtype. Bulk data never goes through here: data movement copies bytes.
#pragma once
#include <cstdint>
#include <vector>

#include "kernel.h"

namespace parity::refrt {

// Element i of t as double (bool 0/1, float16/bfloat16 widened).
double element_as_double(const Tensor& t, int64_t i);
// Element i of t as int64: integers exactly, floats truncated toward zero (NaN or out of the
// int64 range is an error naming `what`).
int64_t element_as_int64(const Tensor& t, int64_t i, const std::string& what);
// The bytes of `v` converted to dtype `t` (as a C++ cast; float16/bfloat16 rounded to nearest even).
std::vector<unsigned char> element_bytes(DType t, double v);
// Fills `count` elements at dst with the element `value` (dtype_size(t) bytes).
void fill_elements(void* dst, int64_t count, const void* value, size_t elem_size);

}  // namespace parity::refrt
