// Internal: per-thread scratch memory reused across kernel calls (im2col columns, padded input
// planes). Such buffers are hundreds of KiB: allocated per call they went through mmap / munmap and
// fresh-page faults on every run. Each thread (callers and pool workers) has its own, so concurrent
// runs never share one; a kernel uses its slots only while one of its chunks runs.
#pragma once
#include <array>
#include <cstddef>
#include <memory>

namespace parity::refrt {

enum class ScratchSlot {
  kConvPhases,
  kConvAccumulator,
  kConvColumns,
  kConvPacked,
  kQConvInput,
  kDnnlScratchpad,
  kDnnlOutput,
  kGemv,
  kWeightOnly,
  kWeightOnlyTiles,
  kWeightOnlySums,
  kPoolRow,
  kPoolPlane,  // a half plane widened for the float32 pool (pool.cc), around kPoolRow's use
  kNormRows,   // a half row widened and its normalised float32 row (normalization.cc)
  kAttentionScores,
  kAttentionKeys,
  kAttentionValues,
  kSgemmA,     // A's block packed in row tiles (sgemm_packed.cc)
  kSgemmTail,  // the last, narrower panel's columns of C
  kCount
};

// Uninitialised, at least n elements of T, 64-byte aligned; valid until the next call with the same slot
// on this thread.
template <typename T>
T* scratch(size_t n, ScratchSlot slot) {
  struct Buffer {
    std::unique_ptr<std::byte[], void (*)(void*)> data{nullptr,
                                                       [](void* p) { ::operator delete[](p, std::align_val_t{64}); }};
    size_t bytes = 0;
  };
  thread_local std::array<Buffer, static_cast<size_t>(ScratchSlot::kCount)> buffers;
  Buffer& b = buffers[static_cast<size_t>(slot)];
  const size_t bytes = n * sizeof(T);
  if (b.bytes < bytes) {
    b.data.reset(static_cast<std::byte*>(::operator new[](bytes, std::align_val_t{64})));
    b.bytes = bytes;
  }
  return reinterpret_cast<T*>(b.data.get());
}

}  // namespace parity::refrt
