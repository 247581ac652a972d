// Tensor: dtype + shape + a contiguous row-major buffer that is owned, shared or mapped.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "parity/dtype.h"

namespace parity {

using Shape = std::vector<int64_t>;

// Element count of `shape`; throws parity::Error on a negative dim or overflow.
int64_t checked_numel(const Shape& shape, const std::string& what = "tensor");
std::string shape_str(const Shape& shape);  // "[2, 3]"

// Largest single buffer Parity allocates (hostile files must not OOM the machine).
// Default 8 GiB, overridable by PARITY_MAX_TENSOR_BYTES.
size_t allocation_limit();

// Tensor buffers come from a caching pool: a buffer of a size seen before is reused, not allocated.
struct BufferStats {
  uint64_t fresh = 0;   // buffers obtained from the system allocator
  uint64_t reused = 0;  // buffers handed out again from the pool
  size_t cached_bytes = 0;
};
BufferStats buffer_stats();

class Tensor {
 public:
  Tensor() = default;
  // Allocates an uninitialised, 64-byte aligned buffer (zeroed when `zero` is true).
  Tensor(DType dtype, Shape shape, bool zero = false);
  // A view on memory owned by `owner` (e.g. a mapped archive); never copied, never freed by us.
  static Tensor view(DType dtype, Shape shape, std::shared_ptr<const void> owner, const void* data);
  template <typename T>
  static Tensor scalar(DType dtype, T value) {
    Tensor t(dtype, {});
    *t.data<T>() = value;
    return t;
  }

  bool defined() const { return dtype_ != DType::kUndefined; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t dim(size_t i) const { return shape_.at(i); }
  size_t rank() const { return shape_.size(); }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * dtype_size(dtype_); }

  const void* raw() const { return data_; }
  // Mutable access; views of read-only memory are copied first (copy on write).
  void* mutable_raw();
  template <typename T>
  const T* data() const {
    return static_cast<const T*>(data_);
  }
  template <typename T>
  T* data() {
    return static_cast<T*>(mutable_raw());
  }

  // Same buffer, new shape with the same element count.
  Tensor reshaped(Shape shape) const;
  // Deep copy into a fresh owned buffer.
  Tensor clone() const;
  // Same shape and dtype; compares bytes.
  bool bitwise_equal(const Tensor& other) const;

 private:
  DType dtype_ = DType::kUndefined;
  Shape shape_;
  int64_t numel_ = 0;
  std::shared_ptr<const void> owner_;
  const void* data_ = nullptr;
  bool read_only_ = false;
};

}  // namespace parity
