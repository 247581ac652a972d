// Internal: vectorised float32 math for the hot loops of fused kernels (exp, sigmoid, SiLU, GELU,
// softmax rows). Compiled three times, for AVX-512 (16-float vectors), AVX2+FMA and the portable baseline; the
// variant is chosen once from the CPU and refrt's level. The AVX-512 and AVX2 builds compute the same bits (the same
// per-element FMAs, more lanes a step). exp is within 2 ulp of the correctly rounded value (polynomial after range
// reduction); erf within 1.31 ulp of the exact value over all floats, tiny ones included (checked
// exhaustively; 0.99 ulp in the AVX2+FMA build). erf inside GELU has an absolute error below 2e-7
// (Abramowitz-Stegun 7.1.26), far inside float32 tolerances. NaN propagates, exp(-inf) = 0,
// exp(+inf) = inf, erf(+-inf) = +-1, erf(-0) = -0.
#pragma once
#include <cstdint>
#include <vector>

namespace parity::refrt::vmath {

void exp(const float* x, float* y, int64_t n);
void erf(const float* x, float* y, int64_t n);
void sigmoid(float* p, int64_t n);                                 // in place
void silu(float* p, int64_t n);                                    // x * sigmoid(x), in place
void gelu_erf(float* p, int64_t n, float c0, float c1, float c2);  // (x * c1) * (erf(x * c0) + c2), in place
// y = softmax(x) over one contiguous row of n > 0 elements.
void softmax_row(const float* x, float* y, int64_t n);
// s[j] = exp(s[j] - m) for s[j] <= m (a row's max: softmax's numerators; 0 where s[j] - m < -87.33, whose exp is
// subnormal), in place; returns their sum. One pass where minus, exp and sum took three.
float exp_sum_shifted(float* s, int64_t n, float m);
// The variant in use: "avx512" (refrt's AVX-512 level and the Haswell extensions), "haswell" (refrt's AVX2 level and
// the other Haswell extensions in CPUID: F16C, BMI1/2, LZCNT, MOVBE) or "portable".
const char* path();

// Every variant this CPU can run at refrt's level, narrowest first (the last is the one in use): for the tests, which
// check that they agree.
struct Variant {
  const char* name;
  void (*exp)(const float*, float*, int64_t);
  void (*erf)(const float*, float*, int64_t);
  void (*sigmoid)(float*, int64_t);
  void (*silu)(float*, int64_t);
  void (*gelu_erf)(float*, int64_t, float, float, float);
  void (*softmax_row)(const float*, float*, int64_t);
  float (*exp_sum_shifted)(float*, int64_t, float);
};
const std::vector<Variant>& variants();

}  // namespace parity::refrt::vmath
