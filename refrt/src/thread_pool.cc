#include "thread_pool.h"

#include <dlfcn.h>

#include <algorithm>
#include <exception>

namespace parity::refrt {

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

void ThreadPool::work() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stop_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // stopping, nothing left
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

void ThreadPool::parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) const {
  if (n <= 0) return;
  const int64_t chunks = std::min<int64_t>(size(), std::max<int64_t>(1, n / std::max<int64_t>(grain, 1)));
  if (chunks <= 1) return fn(0, n);
  // Shared state of this call: chunks still running and the first exception, rethrown here.
  struct Call {
    std::mutex m;
    std::condition_variable done;
    int64_t pending;
    std::exception_ptr error;
  } call;
  call.pending = chunks - 1;
  auto chunk_range = [&](int64_t c) { return std::make_pair(n * c / chunks, n * (c + 1) / chunks); };
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (int64_t c = 1; c < chunks; ++c)
      tasks_.emplace_back([&, c] {
        std::exception_ptr error;
        try {
          auto [b, e] = chunk_range(c);
          fn(b, e);
        } catch (...) {
          error = std::current_exception();
        }
        std::lock_guard<std::mutex> l(call.m);
        if (error && !call.error) call.error = error;
        if (--call.pending == 0) call.done.notify_one();
      });
  }
  wake_.notify_all();
  std::exception_ptr mine;
  try {
    auto [b, e] = chunk_range(0);
    fn(b, e);
  } catch (...) {
    mine = std::current_exception();
  }
  std::unique_lock<std::mutex> lock(call.m);
  call.done.wait(lock, [&] { return call.pending == 0; });
  if (mine) std::rethrow_exception(mine);
  if (call.error) std::rethrow_exception(call.error);
}

bool set_blas_threads(int threads) {
  using SetThreads = void (*)(int);
  auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  if (!set) return false;
  set(threads);
  return true;
}

}  // namespace parity::refrt
