// Internal: refrt's intra-op thread pool (SessionOptions::threads, `--threads`).
//
// parallel_for splits [0, n) into at most size() (or max_chunks) contiguous chunks of at least `grain`
// items (the split depends only on those numbers, so results do not depend on timing). The calling thread
// takes chunks too, and keeps taking them until none is left: it never waits for a worker to wake up
// for a chunk it could run itself, and only waits for chunks already running (polling briefly before it
// sleeps). Workers poll briefly after a job before sleeping, so the many small parallel ops of a decode
// step do not each pay a futex wake-up. Several runs of one Session may call parallel_for at the same time (each call
// is a job in a queue; every thread drains the oldest unfinished one). A session with a pool runs BLAS on one thread,
// and the GEMM kernels split their products over the pool (gemm.h's pool_gemm, Conv's row chunks): never BLAS threads
// competing with the pool's. With PARITY_REFRT_BLAS_THREADS=1 a large product called from the run's own thread
// (pool_gemm) runs on OpenBLAS's threads instead.
#pragma once
#include <atomic>
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
  void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t begin, int64_t end)>& fn) const {
    parallel_for(n, grain, size(), fn);
  }
  // The same with up to max_chunks chunks: more chunks than threads balance the load when some thread
  // runs late (a busy host), as each thread takes the next chunk left when it finishes one.
  void parallel_for(int64_t n, int64_t grain, int64_t max_chunks,
                    const std::function<void(int64_t begin, int64_t end)>& fn) const;

  struct Job;

 private:
  void work();
  Job* wait_for_job(std::unique_lock<std::mutex>& lock) const;
  mutable std::mutex mutex_;
  mutable std::condition_variable wake_;      // workers: a job was queued, or stop
  mutable std::condition_variable finished_;  // callers: a worker left a job
  mutable std::deque<Job*> jobs_;             // jobs with chunks not yet taken, oldest first
  mutable std::atomic<int> queued_{0};        // jobs_.size(), read by spinning workers without the lock
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

// Sets OpenBLAS's own thread count when the linked BLAS is OpenBLAS (looked up at run time, so
// another BLAS still links); returns whether it could.
bool set_blas_threads(int threads);

// Whether one large product of a session with a pool of T threads runs on OpenBLAS's own T threads
// (BlasThreads below): only with PARITY_REFRT_BLAS_THREADS=1 and OpenBLAS linked. Off by default:
// the product itself is faster, but OpenBLAS 0.3.21's workers keep spinning (sched_yield) for a
// long while after it and take the cores from the pool's next kernels (softmax, activations).
bool blas_threads_enabled();

// OpenBLAS's thread count raised to `threads` for the scope, back to 1 after (the session's setting).
// For one product on the calling thread while the pool is idle: its threads then share the packed
// panels of that product, where the pool's column blocks would each pack all of A again. The count
// is process-wide: another session's concurrent GEMMs may run threaded meanwhile (results alike).
class BlasThreads {
 public:
  explicit BlasThreads(int threads) { set_blas_threads(threads); }
  ~BlasThreads() { set_blas_threads(1); }
  BlasThreads(const BlasThreads&) = delete;
  BlasThreads& operator=(const BlasThreads&) = delete;
};

}  // namespace parity::refrt
