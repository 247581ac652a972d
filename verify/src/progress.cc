#include "progress.h"

#include <cstdio>
#include <iostream>
#include <sstream>

namespace parity::verify {

Progress::Progress(size_t total, bool tty) : total_(total), tty_(tty) {}

std::string Progress::eta_locked() const {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(0);
  if (done_ == 0)
    s << "ETA ?";
  else
    s << "ETA " << elapsed / static_cast<double>(done_) * static_cast<double>(total_ - done_) << " s";
  s << ", " << elapsed << " s elapsed";
  return s.str();
}

void Progress::draw_locked() {
  if (!tty_) return;
  constexpr int kWidth = 24;
  const int filled = total_ ? static_cast<int>(kWidth * done_ / total_) : kWidth;
  std::string bar = "[" + std::string(filled, '#') + std::string(kWidth - filled, '.') + "]";
  std::string running;
  for (const auto& r : running_) running += (running.empty() ? " " : ", ") + r;
  std::string line = bar + " " + std::to_string(done_) + "/" + std::to_string(total_) + " " + eta_locked() +
                     (running.empty() ? "" : " |" + running);
  if (line.size() > 150) line = line.substr(0, 147) + "...";
  std::cout << "\r\033[K" << line << std::flush;
}

void Progress::started(const std::string& label) {
  std::lock_guard<std::mutex> lock(mu_);
  running_.insert(label);
  draw_locked();
}

void Progress::finished(const std::string& label, const std::string& line) {
  std::lock_guard<std::mutex> lock(mu_);
  running_.erase(label);
  ++done_;
  if (tty_) std::cout << "\r\033[K";
  std::cout << "[" << done_ << "/" << total_ << "] " << line;
  if (!tty_) std::cout << "  (" << eta_locked() << ")";
  std::cout << std::endl;
  draw_locked();
}

void Progress::tick() {
  std::lock_guard<std::mutex> lock(mu_);
  draw_locked();
}

void Progress::finish() {
  std::lock_guard<std::mutex> lock(mu_);
  if (tty_) std::cout << "\r\033[K" << std::flush;
}

}  // namespace parity::verify
