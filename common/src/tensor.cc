#include "parity/tensor.h"

#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "parity/error.h"

namespace parity {

int64_t checked_numel(const Shape& shape, const std::string& what) {
  // Called for every tensor a run makes: no division (one per dimension made it 3 % of a small transformer block's
  // run, AMD EPYC Zen 2).
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw Error({}, what + " has negative dimension in shape " + shape_str(shape));
    if (__builtin_mul_overflow(n, d, &n))
      throw Error({}, what + " shape " + shape_str(shape) + " overflows int64 element count");
  }
  return n;
}

std::string shape_str(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

size_t allocation_limit() {
  static const size_t limit = [] {
    if (const char* env = std::getenv("PARITY_MAX_TENSOR_BYTES")) {
      char* end = nullptr;
      unsigned long long v = std::strtoull(env, &end, 10);
      if (end && *end == '\0' && v > 0) return static_cast<size_t>(v);
    }
    return size_t{8} << 30;
  }();
  return limit;
}

namespace {

// A caching allocator: freed buffers are kept by (64-byte rounded) size and handed out again, so a
// session that runs the same shapes again allocates nothing new (as PyTorch's CPU caching allocator
// does). Bounded by PARITY_BUFFER_CACHE_BYTES (default 1 GiB); the pool is never destroyed, so a
// tensor released during static destruction still finds it.
class BufferPool {
 public:
  static BufferPool& instance() {
    static BufferPool* pool = new BufferPool();
    return *pool;
  }

  void* take(size_t rounded) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = free_.find(rounded);
      if (it != free_.end() && !it->second.empty()) {
        void* p = it->second.back();
        it->second.pop_back();
        cached_ -= rounded;
        ++stats_.reused;
        return p;
      }
      ++stats_.fresh;
    }
    return std::aligned_alloc(64, rounded);
  }

  void give_back(void* p, size_t rounded) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (cached_ + rounded <= limit_) {
        free_[rounded].push_back(p);
        cached_ += rounded;
        return;
      }
    }
    std::free(p);
  }

  BufferStats stats() {
    std::lock_guard<std::mutex> lock(mutex_);
    BufferStats s = stats_;
    s.cached_bytes = cached_;
    return s;
  }

 private:
  BufferPool() {
    limit_ = size_t{1} << 30;
    if (const char* env = std::getenv("PARITY_BUFFER_CACHE_BYTES")) {
      char* end = nullptr;
      const unsigned long long v = std::strtoull(env, &end, 10);
      if (end && *end == '\0') limit_ = static_cast<size_t>(v);
    }
  }
  std::mutex mutex_;
  std::unordered_map<size_t, std::vector<void*>> free_;
  size_t cached_ = 0, limit_ = 0;
  BufferStats stats_;
};

std::shared_ptr<void> allocate(size_t nbytes, bool zero) {
  const size_t rounded = nbytes == 0 ? 64 : (nbytes + 63) / 64 * 64;
  void* p = BufferPool::instance().take(rounded);
  if (!p) throw Error({}, "out of memory allocating " + std::to_string(nbytes) + " bytes");
  if (zero) std::memset(p, 0, rounded);
  return std::shared_ptr<void>(p, [rounded](void* q) { BufferPool::instance().give_back(q, rounded); });
}

}  // namespace

BufferStats buffer_stats() { return BufferPool::instance().stats(); }

Tensor::Tensor(DType dtype, Shape shape, bool zero) : dtype_(dtype), shape_(std::move(shape)) {
  if (dtype_size(dtype) == 0) throw Error({}, "cannot allocate a tensor of dtype " + dtype_name(dtype));
  numel_ = checked_numel(shape_);
  if (static_cast<uint64_t>(numel_) > allocation_limit() / dtype_size(dtype))
    throw Error({}, "tensor of shape " + shape_str(shape_) + " and dtype " + dtype_name(dtype) +
                        " exceeds the allocation limit of " + std::to_string(allocation_limit()) +
                        " bytes (PARITY_MAX_TENSOR_BYTES)");
  auto buf = allocate(nbytes(), zero);
  data_ = buf.get();
  owner_ = std::move(buf);
}

Tensor Tensor::view(DType dtype, Shape shape, std::shared_ptr<const void> owner, const void* data) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.numel_ = checked_numel(t.shape_);
  t.owner_ = std::move(owner);
  t.data_ = data;
  t.read_only_ = true;
  return t;
}

void* Tensor::mutable_raw() {
  if (read_only_) {
    Tensor copy = clone();
    *this = std::move(copy);
  }
  return const_cast<void*>(data_);
}

Tensor Tensor::reshaped(Shape shape) const {
  if (checked_numel(shape) != numel_)
    throw Error({}, "cannot reshape " + shape_str(shape_) + " to " + shape_str(shape));
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::clone() const {
  Tensor t(dtype_, shape_);
  if (nbytes()) std::memcpy(const_cast<void*>(t.data_), data_, nbytes());
  return t;
}

bool Tensor::bitwise_equal(const Tensor& other) const {
  return dtype_ == other.dtype_ && shape_ == other.shape_ &&
         (nbytes() == 0 || std::memcmp(data_, other.data_, nbytes()) == 0);
}

}  // namespace parity
