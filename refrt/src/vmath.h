// Internal: vectorised float32 math for the hot loops of fused kernels (exp, sigmoid, SiLU, GELU,
// softmax rows). Compiled twice, for AVX2+FMA and for the portable baseline; the variant is chosen
// once from the CPU. exp is within 2 ulp of the correctly rounded value (polynomial after range
// reduction); erf within 1.31 ulp of the exact value over all floats, tiny ones included (checked
// exhaustively; 0.99 ulp in the AVX2+FMA build). erf inside GELU has an absolute error below 2e-7
// (Abramowitz-Stegun 7.1.26), far inside float32 tolerances. NaN propagates, exp(-inf) = 0,
// exp(+inf) = inf, erf(+-inf) = +-1, erf(-0) = -0.
#pragma once
#include <cstdint>

namespace parity::refrt::vmath {

void exp(const float* x, float* y, int64_t n);
void erf(const float* x, float* y, int64_t n);
void sigmoid(float* p, int64_t n);                                 // in place
void silu(float* p, int64_t n);                                    // x * sigmoid(x), in place
void gelu_erf(float* p, int64_t n, float c0, float c1, float c2);  // (x * c1) * (erf(x * c0) + c2), in place
// y = softmax(x) over one contiguous row of n > 0 elements.
void softmax_row(const float* x, float* y, int64_t n);
// The variant in use: "haswell" (refrt's AVX2 level and the other Haswell extensions in CPUID) or "portable".
const char* path();

}  // namespace parity::refrt::vmath
