// The matrix's progress display: a redrawn bar with ETA on a terminal, plain lines otherwise.
#pragma once
#include <chrono>
#include <mutex>
#include <set>
#include <string>

namespace parity::verify {

class Progress {
 public:
  Progress(size_t total, bool tty);
  void started(const std::string& label);
  // Prints the finished line ("[k/total] label status ...") and redraws the bar.
  void finished(const std::string& label, const std::string& line);
  void tick();    // redraw the bar (the clock moved)
  void finish();  // clear the bar

 private:
  void draw_locked();
  std::string eta_locked() const;
  std::mutex mu_;
  size_t total_, done_ = 0;
  bool tty_;
  std::set<std::string> running_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace parity::verify
