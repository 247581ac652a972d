// Internal: single elements of any raw dtype read or written as numbers, for the kernels whose
// scalars (OneHot depth, Range bounds, Pad and ConstantOfShape values, EyeLike's 1) may come in any
// dtype. The conversions are common's (parity/element.h); bulk data never goes through here: data
// movement copies bytes.
#pragma once
#include <cstdint>
#include <vector>

#include "kernel.h"
#include "parity/element.h"

namespace parity::refrt {

using parity::element_as_double;
using parity::element_as_int64;
using parity::element_bytes;
// Fills `count` elements at dst with the element `value` (dtype_size(t) bytes).
void fill_elements(void* dst, int64_t count, const void* value, size_t elem_size);

}  // namespace parity::refrt
