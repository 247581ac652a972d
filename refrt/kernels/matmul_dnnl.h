// Internal: GEMM-shaped nodes whose B is a constant of the session (MatMul / Gemm / FusedMatMul / FusedGemm
// with weights, and the integer products of the quantized kernels) through oneDNN's matmul primitive.
//
// Why: oneDNN picks its kernels from the CPU's feature bits (brgemm on AVX-512, VNNI and AMX for int8), and
// B is reordered into the layout it asks for (format_tag::any) once, at the first run, instead of on
// every call as a BLAS does. Measured on an Intel Xeon with AVX-512 + AMX (docs/performance.md): the
// 64x1024x4096 product at ~205 GFLOP/s on one thread against 125 for OpenBLAS's SkylakeX core and 55 for
// the generic core OpenBLAS 0.3.21 falls back to on CPUs it does not know.
//
// Threads are refrt's (dnnl_common.h). With T threads, B is cut into T column blocks (when it has at
// least 64 columns per thread), each packed once and run as its own single-threaded primitive on a pool
// thread; narrower B are packed whole and A's rows are split over the pool instead. Primitives are cached
// per row count (oneDNN's runtime-dimension matmul falls back to a slower GEMM, so each M gets its own).
//
// At refrt's AVX2 level a float32 B goes to refrt's own packed GEMM instead (sgemm_packed.h: oneDNN 2.6 has no
// packed-weight float32 matmul for AVX2), behind the same interface.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <utility>
#include <vector>

#include "../src/activation.h"
#include "../src/kernel.h"
#include "../src/sgemm_packed.h"

namespace parity::refrt::matmul_dnnl {

// Whether oneDNN's matmul may run at all: refrt's level allows AVX2 and PARITY_REFRT_MATMUL_DNNL is not 0.
bool enabled();
// The float32 path: enabled() and float GEMMs belong on oneDNN here (dnnl_common::float_gemm_prefers_onednn).
bool float_enabled();
// Whether the int8 path may run: enabled(), and the CPU has exact 8-bit dot products (VNNI or AMX) at
// refrt's level.
bool int8_enabled();
// Whether the bfloat16 path may run: enabled(), and refrt's level has AVX-512 BF16 (or AMX), where oneDNN
// multiplies bfloat16 natively (elsewhere bfloat16 nodes compute in float32 with widened weights).
bool bf16_enabled();

struct Packs;

// A constant B, and the products with it.
class ConstantB {
 public:
  enum class Kind {
    kFloat32,   // float32 A x float32 B -> float32 C (+ bias, then refrt's activations)
    kInt8,      // uint8 A x int8 B -> exact int32 C (zero points are the caller's)
    kBFloat16,  // bfloat16 A x bfloat16 B -> float32 C (+ float32 bias, activations); the caller rounds C once
  };
  // b: [K, N] row-major, or [N, K] when trans (the transB of Gemm). Kept (a shared buffer). kInt8 takes
  // an int8 B, kBFloat16 a bfloat16 B. `acts` (kFloat32, kBFloat16): the activations applied to C after the bias: as
  // oneDNN post-ops where each has one (Relu, exact GELU: computed in the kernel's registers), else by refrt on each
  // block.
  void set(const Tensor& b, bool trans, Kind kind, std::vector<ActStep> acts = {});
  bool defined() const { return b_.defined(); }
  // Whether `b` is the tensor given to set() (a graph input overriding it would not be).
  bool holds(const Tensor& b) const { return b_.defined() && b.raw() == b_.raw(); }
  Kind kind() const { return kind_; }
  int64_t k() const { return k_; }
  int64_t n() const { return n_; }

  // C[m, n] (row stride n) = A[m, k] (row stride lda) x B (+ bias[n]), then the activations (kFloat32).
  // For kInt8, A is uint8 and C int32 (bias must be null); for kBFloat16, A is bfloat16 and C float32. false: oneDNN
  // declined this shape (nothing written; the caller runs its own kernel). On success io.impl names the implementation
  // oneDNN chose. c_type float16 / bfloat16 (kFloat32, kBFloat16): C is of that type, each block's float32 rows
  // rounded into it once, after the bias and the activations, while they are in cache; with c_widened, C is float32
  // holding those rounded values (a value kept widened for its readers, optimize/keep_widened.cc).
  bool run(const KernelIO& io, int64_t m, const void* a, int64_t lda, const float* bias, void* c,
           DType c_type = DType::kFloat32, bool c_widened = false) const;

 private:
  std::shared_ptr<const Packs> packs_for(int64_t threads, int64_t m, bool narrow) const;
  // kFloat32 at refrt's AVX2 level (sgemm_packed.h): B in refrt's panels, packed at the first run. false (nothing
  // written) for one row.
  const PackedSgemmB& refrt_panels() const;
  bool run_refrt(const KernelIO& io, int64_t m, const float* a, int64_t lda, const float* bias, void* c, DType c_type,
                 bool c_widened) const;
  Tensor b_;
  bool trans_ = false;
  Kind kind_ = Kind::kFloat32;
  std::vector<ActStep> acts_;
  int64_t k_ = 0, n_ = 0;
  mutable std::mutex mutex_;
  // By thread count and whether C is rounded to a half type (2 * threads + narrow); nullptr: declined.
  mutable std::map<int64_t, std::shared_ptr<const Packs>> packs_;
  mutable std::unique_ptr<PackedSgemmB> refrt_panels_;
};

}  // namespace parity::refrt::matmul_dnnl
