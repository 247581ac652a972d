// Shared by the libFuzzer targets (tests/fuzz/fuzz_*.cc): an in-memory file for readers that take a path,
// and a byte consumer for structured inputs. No libFuzzer header: the same targets also build into plain
// replay programs (replay_main.cc) that the normal test build runs over the seeds and regression inputs.
#pragma once
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>

namespace parity::fuzz {

// A memfd holding `bytes`, reachable by path as /proc/self/fd/N (no disk, no clean-up races).
class MemFile {
 public:
  MemFile(const uint8_t* data, size_t size) {
    fd_ = ::memfd_create("parity_fuzz", MFD_CLOEXEC);
    if (fd_ < 0) return;
    size_t done = 0;
    while (done < size) {
      const ssize_t w = ::write(fd_, data + done, size - done);
      if (w <= 0) break;
      done += static_cast<size_t>(w);
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;
  bool ok() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
};

// Takes little-endian integers and length-prefixed strings off the front of the input; zeros when empty.
class Consumer {
 public:
  Consumer(const uint8_t* data, size_t size) : p_(data), n_(size) {}
  template <typename T>
  T take() {
    T v{};
    const size_t k = n_ < sizeof(T) ? n_ : sizeof(T);
    std::memcpy(&v, p_, k);
    p_ += k;
    n_ -= k;
    return v;
  }
  std::string string(size_t max_len) {
    size_t len = take<uint8_t>();
    if (len > max_len) len = max_len;
    if (len > n_) len = n_;
    std::string s(reinterpret_cast<const char*>(p_), len);
    p_ += len;
    n_ -= len;
    return s;
  }
  std::string rest() {
    std::string s(reinterpret_cast<const char*>(p_), n_);
    p_ += n_;
    n_ = 0;
    return s;
  }
  size_t remaining() const { return n_; }

 private:
  const uint8_t* p_;
  size_t n_;
};

}  // namespace parity::fuzz
