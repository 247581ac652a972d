// Single elements of any numeric dtype read or written as numbers: the one place that knows how each
// dtype's bytes become a double or an int64 (verify's comparison, conformance, refrt's scalar inputs).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "parity/tensor.h"

namespace parity {

// Element i of t as double (bool 0/1, float16/bfloat16 widened). int64/uint64 above 2^53 are rounded:
// compare integers with element_as_int64 / element_as_uint64, never through this.
double element_as_double(const Tensor& t, int64_t i);
// Element i of t as int64: integers exactly, floats truncated toward zero. NaN, a float out of the
// int64 range or a uint64 above INT64_MAX is an error naming `what`.
int64_t element_as_int64(const Tensor& t, int64_t i, const std::string& what = "value");
// The bytes of `v` converted to dtype `t` (as a C++ cast with NaN -> 0 and saturation for integers;
// float16/bfloat16 rounded to nearest even).
std::vector<unsigned char> element_bytes(DType t, double v);

}  // namespace parity
