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

// The same source with 16-float vectors: every loop is a per-element formula, so the lanes compute what the Haswell
// build computes (the same FMAs), twice as many a step (exp 0.8 -> 0.4 ns an element, GELU 2.7 -> 1.5, this Xeon).
// GCC keeps 256-bit vectors on AVX-512 targets unless told otherwise.
#pragma GCC push_options
#pragma GCC target("arch=haswell,avx512f,avx512bw,avx512dq,avx512vl,prefer-vector-width=512")
namespace avx512 {
#include "vmath_impl.inc"
}  // namespace avx512
#pragma GCC pop_options

// One compiled copy of the bodies, as a Variant.
#define PARITY_VMATH_VARIANT(ns, name)                                                                          \
  Variant {                                                                                                     \
    name, ns::exp_impl, ns::erf_impl, ns::sigmoid_impl, ns::silu_impl, ns::gelu_erf_impl, ns::softmax_row_impl, \
        ns::exp_sum_shifted_impl                                                                                \
  }

const std::vector<Variant>& all_variants() {
  static const std::vector<Variant> runnable = [] {
    // arch=haswell lets the compiler use every Haswell extension, not only AVX2 + FMA (refrt's avx2 level):
    // BMI1/2, LZCNT, MOVBE and F16C are checked too (a VM may hide one of them).
    const bool haswell = isa_allows(IsaLevel::kAvx2) && cpu_has(CpuFeature::kF16c) && cpu_has(CpuFeature::kBmi1) &&
                         cpu_has(CpuFeature::kBmi2) && cpu_has(CpuFeature::kLzcnt) && cpu_has(CpuFeature::kMovbe);
    std::vector<Variant> v = {PARITY_VMATH_VARIANT(base, "portable")};
    if (haswell) v.push_back(PARITY_VMATH_VARIANT(avx2, "haswell"));
    if (haswell && isa_allows(IsaLevel::kAvx512)) v.push_back(PARITY_VMATH_VARIANT(avx512, "avx512"));
    return v;
  }();
  return runnable;
}

// The widest variant this CPU (at refrt's level) runs; a function-local static, so that a caller from another
// translation unit's static initialisation still finds it.
const Variant& used() {
  static const Variant& widest = all_variants().back();
  return widest;
}

}  // namespace

const std::vector<Variant>& variants() { return all_variants(); }

const char* path() { return used().name; }

void exp(const float* x, float* y, int64_t n) { used().exp(x, y, n); }
void erf(const float* x, float* y, int64_t n) { used().erf(x, y, n); }
void sigmoid(float* p, int64_t n) { used().sigmoid(p, n); }
void silu(float* p, int64_t n) { used().silu(p, n); }
void gelu_erf(float* p, int64_t n, float c0, float c1, float c2) { used().gelu_erf(p, n, c0, c1, c2); }
void softmax_row(const float* x, float* y, int64_t n) { used().softmax_row(x, y, n); }
float exp_sum_shifted(float* s, int64_t n, float m) { return used().exp_sum_shifted(s, n, m); }

}  // namespace parity::refrt::vmath
