// float16 and bfloat16 as stored (uint16 bit patterns) <-> float, through Eigen's Eigen::half and
// Eigen::bfloat16: one implementation (round to nearest even, NaN stays NaN) for refrt, verify and
// conformance. Inline: kernels widen and narrow whole tensors through these.
#pragma once
#include <cstdint>

#include <Eigen/Core>

namespace parity {

inline float half_to_float(uint16_t h) { return static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(h)); }
inline uint16_t float_to_half(float f) { return Eigen::numext::bit_cast<uint16_t>(Eigen::half(f)); }
inline float bf16_to_float(uint16_t b) { return static_cast<float>(Eigen::numext::bit_cast<Eigen::bfloat16>(b)); }
inline uint16_t float_to_bf16(float f) { return Eigen::numext::bit_cast<uint16_t>(Eigen::bfloat16(f)); }

}  // namespace parity
