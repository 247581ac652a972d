// Internal: what refrt's oneDNN paths share (conv_dnnl.h, matmul_dnnl.h, gemm.h's sgemm).
//
// oneDNN picks its kernels from the CPU's feature bits (AVX2, AVX-512, VNNI, BF16, AMX), never its model
// number, so a CPU newer than the library still gets its widest kernels. refrt caps it at its own ISA level
// (PARITY_REFRT_ISA) before its first JIT, so the tests can run every lower path on one machine.
//
// Threads are refrt's: every oneDNN call is made from a pool thread with that thread's OpenMP team at one
// thread (the Debian build threads with OpenMP), so oneDNN never starts workers beside refrt's pool.
#pragma once
#include <cstdint>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <string_view>

#include "plan_cache.h"

namespace parity::refrt::dnnl_common {

// The ceiling oneDNN runs under: refrt's level (PARITY_REFRT_ISA) as oneDNN names it, lowered further by
// ONEDNN_MAX_CPU_ISA when that is set (the variable oneDNN reads itself when nobody sets the cap).
dnnl::cpu_isa onednn_isa_cap();
// Whether that ceiling includes `isa` (the CPU may still lack it: oneDNN then stays below).
bool onednn_allows(dnnl::cpu_isa isa);
// The engine, created on first use with oneDNN's ISA capped at onednn_isa_cap().
const dnnl::engine& cpu_engine();
// A stream of the calling thread on that engine.
dnnl::stream& thread_stream();
// For its lifetime, the calling thread's OpenMP thread count is one (oneDNN then runs inline, on refrt's
// thread); the count the thread had is restored after, so a program that shares the libgomp (its own
// OpenMP code, a torch linked to the same library) keeps its setting. Create one around every oneDNN call.
class OneOpenmpThread {
 public:
  OneOpenmpThread();
  ~OneOpenmpThread();
  OneOpenmpThread(const OneOpenmpThread&) = delete;
  OneOpenmpThread& operator=(const OneOpenmpThread&) = delete;

 private:
  int saved_ = 0;  // 0: nothing to restore (no libgomp loaded)
};
// Whether oneDNN may run here: refrt's level allows AVX2 (below it, refrt's portable loops and OpenBLAS)
// and the variable `env` (e.g. "PARITY_REFRT_MATMUL_DNNL") is not "0".
bool allowed(const char* env);
// Whether float32 GEMMs should run on oneDNN rather than OpenBLAS, by measurement (docs/performance.md): yes
// at refrt's AVX-512 levels (oneDNN's brgemm on packed weights beats OpenBLAS's best core), and on AVX2 CPUs
// where OpenBLAS runs a generic core (or the BLAS is not OpenBLAS); no on AVX2 CPUs with OpenBLAS's AVX2
// core (oneDNN 2.6 has no AVX2 brgemm matmul; its gemm:jit measured ~6 % slower there).
bool float_gemm_prefers_onednn();
// Whether this CPU (at refrt's level and oneDNN's cap) has exact 8-bit dot products: AVX-512 VNNI or AVX-VNNI. Without
// them oneDNN's u8 x s8 kernels sum pairs in a saturating int16 (vpmaddubsw), which refrt never inherits.
bool has_vnni();

// The ISA oneDNN actually dispatches to, as it names it ("avx512_core_amx", "avx2", ...).
std::string effective_isa();
// "oneDNN 2.6.3".
std::string version();
// A name for people and the profile: "onednn " + the implementation oneDNN chose ("brg:avx512_core",
// "jit:avx2", "gemm:jit (avx2)": the effective ISA added where the name has none), interned so that it
// outlives any plan (kernel.h's intern_impl).
std::string_view impl_name(const char* onednn_impl);

template <typename Plan>
template <typename Make>
std::shared_ptr<const Plan> PlanCache<Plan>::get(const std::vector<int64_t>& key, const Make& make) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = plans_.find(key);
  if (it != plans_.end()) return it->second;
  if (plans_.size() >= kMaxPlans) plans_.clear();
  const OneOpenmpThread one_thread;
  std::shared_ptr<const Plan> made;
  try {
    made = make();
  } catch (const dnnl::error&) {  // a geometry oneDNN does not take
  }
  plans_.emplace(key, made);
  return made;
}

}  // namespace parity::refrt::dnnl_common
