#include "thread_pool.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <exception>

namespace parity::refrt {

// One parallel_for call: chunks are taken by an atomic counter, by the caller and by any worker that
// joined (`active`, counted under the pool's mutex so the caller knows when none still uses the job).
struct ThreadPool::Job {
  const std::function<void(int64_t, int64_t)>* fn = nullptr;
  int64_t n = 0, chunks = 0;
  std::atomic<int64_t> next{0};
  // Workers inside drain(): changed under the pool's mutex, read without it by the caller spinning at the end.
  std::atomic<int> active{0};
  std::mutex error_mutex;
  std::exception_ptr error;

  bool exhausted() const { return next.load(std::memory_order_relaxed) >= chunks; }
  void drain() {
    for (int64_t c; (c = next.fetch_add(1, std::memory_order_relaxed)) < chunks;) {
      try {
        (*fn)(n * c / chunks, n * (c + 1) / chunks);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
      }
    }
  }
};

namespace {

// How long a thread keeps polling (a worker for the next job, the caller for its workers' last chunks)
// before it sleeps on a condition variable: about the gap between two kernels of one run, far below a
// scheduler tick. Interleaved runs at 2 threads, p50 of 300 runs (with the caller polling too):
// MobileNetV3-small 2.6-3.0 ms at 50 us, 2.1-2.6 at 200 us, 1.8-2.9 at 1 ms; the LLaMA decode step
// 2.6-3.0 / 1.9-2.4 / 2.0-3.3. (Before the caller polled, 1 ms had measured slower than 50 us.)
constexpr auto kSpin = std::chrono::microseconds(200);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

ThreadPool::ThreadPool(int threads) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { work(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

// The oldest job with chunks left (finished ones are dropped from the queue), or nullptr on stop.
// Called with the lock held; returns with it held.
ThreadPool::Job* ThreadPool::wait_for_job(std::unique_lock<std::mutex>& lock) const {
  for (;;) {
    while (!jobs_.empty() && jobs_.front()->exhausted()) {
      jobs_.pop_front();
      queued_.fetch_sub(1, std::memory_order_relaxed);
    }
    if (!jobs_.empty()) return jobs_.front();
    if (stop_) return nullptr;
    // Spin without the lock for a little while: the next kernel of the run usually comes soon.
    lock.unlock();
    const auto until = std::chrono::steady_clock::now() + kSpin;
    bool seen = false;
    for (int i = 0; !seen; ++i) {
      seen = queued_.load(std::memory_order_relaxed) > 0;
      if (!seen && (i & 63) == 63 && std::chrono::steady_clock::now() > until) break;
      cpu_relax();
    }
    lock.lock();
    if (!seen) wake_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
  }
}

void ThreadPool::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (Job* job = wait_for_job(lock)) {
    ++job->active;
    lock.unlock();
    job->drain();
    lock.lock();
    if (job->active.fetch_sub(1, std::memory_order_release) == 1) finished_.notify_all();
  }
}

void ThreadPool::parallel_for(int64_t n, int64_t grain, int64_t max_chunks,
                              const std::function<void(int64_t, int64_t)>& fn) const {
  if (n <= 0) return;
  const int64_t chunks =
      std::min<int64_t>(std::max<int64_t>(1, max_chunks), std::max<int64_t>(1, n / std::max<int64_t>(grain, 1)));
  if (chunks <= 1) return fn(0, n);
  Job job;
  job.fn = &fn;
  job.n = n;
  job.chunks = chunks;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back(&job);
    queued_.fetch_add(1, std::memory_order_relaxed);
  }
  for (int64_t i = 1; i < std::min<int64_t>(chunks, size()); ++i) wake_.notify_one();
  job.drain();
  {
    // No worker may join once the job has left the queue; then wait for those inside it.
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = std::find(jobs_.begin(), jobs_.end(), &job);
    if (it != jobs_.end()) {
      jobs_.erase(it);
      queued_.fetch_sub(1, std::memory_order_relaxed);
    }
  }
  // A worker still in its last chunk usually leaves within microseconds: poll before sleeping, as the
  // workers do (kSpin). Sleeping on the condition variable cost a futex wake-up per parallel op, which on this
  // VM's halted vCPUs took long enough to double the median of a 2-thread int8 conv (998 us against a
  // best of 655).
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (int i = 0; job.active.load(std::memory_order_acquire) > 0; ++i) {
    if ((i & 63) == 63 && std::chrono::steady_clock::now() > until) break;
    cpu_relax();
  }
  if (job.active.load(std::memory_order_acquire) > 0) {
    std::unique_lock<std::mutex> lock(mutex_);
    finished_.wait(lock, [&] { return job.active.load(std::memory_order_acquire) == 0; });
  }
  if (job.error) std::rethrow_exception(job.error);
}

bool set_blas_threads(int threads) {
  using SetThreads = void (*)(int);
  auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  if (!set) return false;
  set(threads);
  return true;
}

bool blas_threads_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("PARITY_REFRT_BLAS_THREADS");
    if (v == nullptr || std::string(v) != "1") return false;
    return dlsym(RTLD_DEFAULT, "openblas_set_num_threads") != nullptr;
  }();
  return on;
}

}  // namespace parity::refrt
