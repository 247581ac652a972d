// The local executor: each unit a `parity verify` child on this machine, up to --jobs at once, so that a crash
// or a hang is a result and not the end of the run.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "executor.h"

namespace parity::verify {

std::vector<std::string> verify_arguments(const MatrixOptions& o, const std::string& case_dir,
                                          const std::string& out_dir) {
  std::vector<std::string> argv = {case_dir, "--out", out_dir, "--quiet", "--no-html"};
  if (o.opset != 0) {
    argv.push_back("--opset");
    argv.push_back(std::to_string(o.opset));
  }
  return argv;
}

void run_units_local(const MatrixOptions& o, const std::vector<Unit>& units, Progress& progress, const UnitDone& done) {
  std::atomic<size_t> next{0};
  std::atomic<size_t> workers_left{0};
  std::mutex mu;
  std::condition_variable cv;
  auto worker = [&]() {
    for (size_t i; (i = next++) < units.size();) {
      const Unit& u = units[i];
      progress.started(u.name + "/" + u.mode);
      std::vector<std::string> argv = {o.self_exe, "verify"};
      for (auto& a : verify_arguments(o, u.case_dir, u.out_dir)) argv.push_back(std::move(a));
      const auto start = std::chrono::steady_clock::now();
      UnitOutcome outcome;
      outcome.process = run_process(argv, o.timeout_seconds, nullptr);
      outcome.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      done(u, std::move(outcome));
    }
    std::lock_guard<std::mutex> lock(mu);
    --workers_left;
    cv.notify_all();
  };
  const size_t n = std::max<size_t>(1, std::min<size_t>(static_cast<size_t>(std::max(o.jobs, 1)), units.size()));
  workers_left = n;
  std::vector<std::thread> threads;
  for (size_t t = 0; t < n; ++t) threads.emplace_back(worker);
  {
    std::unique_lock<std::mutex> lock(mu);
    while (workers_left > 0)
      if (!cv.wait_for(lock, std::chrono::milliseconds(500), [&] { return workers_left == 0; })) progress.tick();
  }
  for (auto& t : threads) t.join();
}

}  // namespace parity::verify
