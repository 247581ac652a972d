// Internal: refrt's intra-op thread pool (SessionOptions::threads, `--threads`).
//
// parallel_for splits [0, n) into at most size() contiguous chunks of at least `grain` items; the
// calling thread runs one chunk itself, so a pool of size 1 has no worker threads at all. Several
// runs of one Session may call parallel_for at the same time. A session with a pool runs BLAS on
// one thread, and the GEMM kernels split their products over the pool (gemm.h's pool_gemm, Conv's
// row chunks): one set of threads for all the work, never BLAS threads competing with the pool's.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace parity::refrt {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }
  void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t begin, int64_t end)>& fn) const;

 private:
  void work();
  mutable std::mutex mutex_;
  mutable std::condition_variable wake_;
  mutable std::deque<std::function<void()>> tasks_;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

// Sets OpenBLAS's own thread count when the linked BLAS is OpenBLAS (looked up at run time, so
// another BLAS still links); returns whether it could.
bool set_blas_threads(int threads);

}  // namespace parity::refrt
