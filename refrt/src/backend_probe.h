// Internal: what ran a product, as a value. gemm.h's gemm<T>, gemv<T> and pool_gemm return the Backend they
// called (the profile's implementation label is made from that return value, never from a second
// computation of their branch), and, for tests, each backend entry point also counts its own calls here
// (backend_probe), apart from any label: a test compares a node's label with the backends that counted a
// call during its run, so a label that names a backend that did not run (or misses one that did) fails.
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <string>

namespace parity::refrt {

enum class Backend : int {
  kNone = 0,       // nothing ran (an empty product)
  kRefrtLoop,      // refrt's plain loop (a product with K = 0: C = beta * C)
  kRefrtGemv,      // gemv.cc, AVX2 + FMA
  kOnednnSgemm,    // dnnl_sgemm
  kOpenblasSgemm,  // cblas_sgemm
  kOpenblasDgemm,
  kOpenblasSgemv,
  kOpenblasDgemv,
  kOnednnMatmul,         // a oneDNN matmul primitive on a packed constant B (matmul_dnnl.h)
  kRefrtQgemm,           // refrt's exact int16 integer GEMM (qgemm.h)
  kRefrtPackedGemv,      // gemv_packed.h: one row x a constant B packed in panels, AVX-512
  kRefrtPackedGemvBf16,  // the same for bfloat16 B in pairs of k: AVX-512 BF16 dot products (vdpbf16ps)
  kRefrtHalfGemv,        // gemv.cc on a float16 / bfloat16 matrix widened in registers (a half KV cache)
  kRefrtPackedSgemm,     // sgemm_packed.h: a constant B packed in 16-column panels, AVX2 + FMA
  kCount,
};
constexpr size_t kBackendCount = static_cast<size_t>(Backend::kCount);

// A set of backends (one node's call may run several products, on several threads).
using BackendSet = uint32_t;
constexpr BackendSet backend_bit(Backend b) { return b == Backend::kNone ? 0u : 1u << static_cast<int>(b); }

namespace backend_probe {

extern std::atomic<bool> g_enabled;
void record(Backend b);
// Called first thing inside each backend entry point; one relaxed load when no test listens.
inline void hit(Backend b) {
  if (g_enabled.load(std::memory_order_relaxed)) record(b);
}
// Test-only: start counting (from zero) or stop.
void enable(bool on);
// The counts so far, by Backend.
std::array<uint64_t, kBackendCount> counts();
// "refrt gemv", "refrt packed gemv", "onednn sgemm", "openblas sgemm", ... (the prefix of each backend's label).
const char* name(Backend b);

}  // namespace backend_probe
}  // namespace parity::refrt
