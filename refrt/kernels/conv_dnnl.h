// Internal: float32 1-D and 2-D convolutions through oneDNN (Debian libdnnl), whose JIT kernels match the CPU
// at run time (AVX2, AVX-512, AMX) and are capped by PARITY_REFRT_ISA (cpu_isa.h). Only for a Conv
// whose weights are a constant of the session: they are reordered into oneDNN's blocked layout once,
// per block of output channels, when the first input shape is seen (one primitive per block, cached
// per input shape). Threads are refrt's: each pool thread runs whole blocks of output channels, every
// primitive single-threaded (oneDNN's OpenMP team is never started), so there is one set of threads.
// X and Y stay NCHW: X is reordered into the primitive's channel blocks by the pool, and each block's
// output is copied back into Y's rows with the conv's epilogue (added input, activations).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "../src/activation.h"
#include "channel_blocks.h"
#include "nn_common.h"
#include "plan_cache.h"

namespace parity::refrt::conv_dnnl {

// Whether oneDNN convs may run: the ISA level allows avx2 (below it: refrt's portable loops) and
// PARITY_REFRT_CONV_DNNL is not 0.
bool enabled();
// Whether bfloat16 convs may run: enabled() and the ISA level allows avx512_core_bf16.
bool bf16_enabled();

struct Plan;

class Conv {
 public:
  // The session's constant W [M, C, kh, kw] (kept, shared buffer), float32 or bfloat16.
  void set_weights(const Tensor& w) { w_ = w; }
  // Whether this call can run here: constant W (the one given), one group, 1-D or 2-D, a kernel larger than 1
  // (1-D runs as 2-D with a unit height); a bfloat16 W needs a CPU with BF16 (AVX-512 BF16 or AMX), and takes
  // 1x1 kernels too (the widened alternative converts X and Y as whole tensors). Measured on AVX2 (Zen 3): ResNet-18's
  // 3x3 / 7x7 convs 18 % faster at 1 thread, 10 % at 2, MobileNetV3's stem 30-38 %, Whisper's 1-D stem convs tied at 1
  // thread and 1.8x faster at 2; 1x1 convs tie or lose (the reorders cost what the GEMM saves), so they keep refrt's
  // GEMM, and depthwise keeps refrt's direct kernel.
  // With `blocks` (X or Y in channel blocks), float32 1x1 kernels run here too: the blocked layouts need no move.
  bool applies(const Tensor& w, const nn::WindowGeometry& g, int64_t group, bool blocks = false) const;
  // Y = conv(X, W) + bias (+ z, same shape as Y), then the activations. false: no primitive for this
  // geometry (the caller runs its own kernel).
  // With `blocks`, X, z and Y are read and written in the layouts it names (z in Y's: the caller moves it); the
  // primitive is then asked for channel blocks of block_width() only (never channels-last).
  // `rounded_to` float16 / bfloat16: X, z and Y hold values of that type (a half chain's values handed widened,
  // optimize/keep_conv_blocks.cc); each of Y's values is rounded to it once, after z and the activations.
  bool run(const KernelIO& io, const nn::WindowGeometry& g, int64_t n, int64_t c, int64_t m, const float* px,
           const float* pb, const float* pz, float* py, const std::vector<ActStep>& acts, Blocks blocks = {},
           DType rounded_to = DType::kFloat32) const;
  // The same for X, z and Y of the half dtype `half` (float16 or bfloat16) and a float32 bias: on a bfloat16 W,
  // oneDNN's bfloat16 convolution (float32 sums); on a float32 W (a half W widened once), X widened to float32 as
  // it is moved into channel blocks. Either way Y is rounded once, after the bias, z and the activations, as the
  // widened path rounds, and no whole-tensor float32 copy of X or Y is made.
  // With `blocks` (a float32 W only), X, z and Y are half tensors in a chain's layout: X widened as it is, Y rounded
  // into place.
  bool run(const KernelIO& io, const nn::WindowGeometry& g, int64_t n, int64_t c, int64_t m, DType half,
           const uint16_t* px, const float* pb, const uint16_t* pz, uint16_t* py, const std::vector<ActStep>& acts,
           Blocks blocks = {}) const;

 private:
  template <typename T>
  bool run_typed(const KernelIO& io, const nn::WindowGeometry& g, int64_t n, int64_t c, int64_t m, DType io_type,
                 const T* px, const float* pb, const T* pz, T* py, const std::vector<ActStep>& acts,
                 Blocks blocks) const;
  std::shared_ptr<const Plan> plan_for(const nn::WindowGeometry& g, int64_t n, int64_t c, int64_t m, bool bias,
                                       int64_t threads, bool blocks) const;
  Tensor w_;
  dnnl_common::PlanCache<Plan> plans_;
};

}  // namespace parity::refrt::conv_dnnl
