#include "vmath.h"

#include "parity/refrt/cpu_isa.h"

namespace parity::refrt::vmath {
namespace {

namespace base {
#include "vmath_impl.inc"
}  // namespace base

#pragma GCC push_options
#pragma GCC target("arch=haswell")
namespace avx2 {
#include "vmath_impl.inc"
}  // namespace avx2
#pragma GCC pop_options

// arch=haswell lets the compiler use every Haswell extension, not only AVX2 + FMA (refrt's avx2 level):
// BMI1/2, LZCNT, MOVBE and F16C are checked too (a VM may hide one of them).
const bool kAvx2 = isa_allows(IsaLevel::kAvx2) && cpu_has(CpuFeature::kF16c) && cpu_has(CpuFeature::kBmi1) &&
                   cpu_has(CpuFeature::kBmi2) && cpu_has(CpuFeature::kLzcnt) && cpu_has(CpuFeature::kMovbe);

}  // namespace

const char* path() { return kAvx2 ? "haswell" : "portable"; }

void exp(const float* x, float* y, int64_t n) { kAvx2 ? avx2::exp_impl(x, y, n) : base::exp_impl(x, y, n); }
void erf(const float* x, float* y, int64_t n) { kAvx2 ? avx2::erf_impl(x, y, n) : base::erf_impl(x, y, n); }
void sigmoid(float* p, int64_t n) { kAvx2 ? avx2::sigmoid_impl(p, n) : base::sigmoid_impl(p, n); }
void silu(float* p, int64_t n) { kAvx2 ? avx2::silu_impl(p, n) : base::silu_impl(p, n); }
void gelu_erf(float* p, int64_t n, float c0, float c1, float c2) {
  kAvx2 ? avx2::gelu_erf_impl(p, n, c0, c1, c2) : base::gelu_erf_impl(p, n, c0, c1, c2);
}
void softmax_row(const float* x, float* y, int64_t n) {
  kAvx2 ? avx2::softmax_row_impl(x, y, n) : base::softmax_row_impl(x, y, n);
}

}  // namespace parity::refrt::vmath
