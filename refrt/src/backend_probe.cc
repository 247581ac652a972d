// backend_probe.h: the test-only call counters of refrt's product backends.
#include "backend_probe.h"

namespace parity::refrt::backend_probe {
namespace {

std::array<std::atomic<uint64_t>, kBackendCount>& counters() {
  static std::array<std::atomic<uint64_t>, kBackendCount> c{};
  return c;
}

}  // namespace

std::atomic<bool> g_enabled{false};

void record(Backend b) { counters()[static_cast<size_t>(b)].fetch_add(1, std::memory_order_relaxed); }

void enable(bool on) {
  if (on)
    for (auto& c : counters()) c.store(0);
  g_enabled.store(on);
}

std::array<uint64_t, kBackendCount> counts() {
  std::array<uint64_t, kBackendCount> out{};
  for (size_t i = 0; i < kBackendCount; ++i) out[i] = counters()[i].load();
  return out;
}

const char* name(Backend b) {
  static constexpr std::array<const char*, kBackendCount> names = {"none",
                                                                   "refrt",
                                                                   "refrt gemv",
                                                                   "onednn sgemm",
                                                                   "openblas sgemm",
                                                                   "openblas dgemm",
                                                                   "openblas sgemv",
                                                                   "openblas dgemv",
                                                                   "onednn matmul",
                                                                   "refrt qgemm",
                                                                   "refrt packed gemv",
                                                                   "refrt packed bf16 gemv",
                                                                   "refrt half gemv",
                                                                   "refrt packed sgemm"};
  return names.at(static_cast<size_t>(b));
}

}  // namespace parity::refrt::backend_probe
