#include "strided_copy.h"

#include <algorithm>
#include <cstring>

#include "kernel.h"
#include "thread_pool.h"

namespace parity::refrt {
namespace {

// Dims of a copy: on the stack up to kInline of them (every run makes many small copies: heap vectors were half the
// time of a small transformer block's head transposes, 320 floats each), on the heap past that.
constexpr size_t kInline = 12;
struct Dims {
  int64_t* data;
  int64_t inline_buf[kInline];
  std::vector<int64_t> heap;
  explicit Dims(size_t n) : data(inline_buf) {
    if (n > kInline) {
      heap.assign(n, 0);
      data = heap.data();
    }
  }
  Dims(const Dims&) = delete;
  Dims& operator=(const Dims&) = delete;
};

// Typed element moves for the common sizes; the inner dim is a tight loop.
template <typename T>
void copy_rows(const T* src, int64_t offset, const int64_t* strides, T* dst, const int64_t* shape, size_t rank) {
  const int64_t inner = shape[rank - 1], inner_stride = strides[rank - 1];
  int64_t total = 1;
  for (size_t d = 0; d < rank; ++d) total *= shape[d];  // the caller's checked_numel bounds it
  Dims index(rank);
  std::fill(index.data, index.data + rank, 0);
  int64_t base = offset;
  for (int64_t o = 0; o < total; o += inner) {
    const T* s = src + base;
    if (inner_stride == 1)  // contiguous rows (Expand's repeated rows, slices): a memcpy each
      std::memcpy(dst + o, s, static_cast<size_t>(inner) * sizeof(T));
    else
      for (int64_t j = 0; j < inner; ++j) dst[o + j] = s[j * inner_stride];
    for (size_t d = rank - 1; d-- > 0;) {
      base += strides[d];
      if (++index.data[d] < shape[d]) break;
      base -= strides[d] * index.data[d];
      index.data[d] = 0;
    }
  }
}

struct Bytes16 {
  unsigned char b[16];
};

}  // namespace

void strided_copy(const void* src, int64_t offset, const std::vector<int64_t>& src_strides, void* dst,
                  const Shape& out_shape, size_t elem_size) {
  if (checked_numel(out_shape) == 0) return;
  if (out_shape.empty()) {
    std::memcpy(dst, static_cast<const char*>(src) + static_cast<size_t>(offset) * elem_size, elem_size);
    return;
  }
  // Size-1 dims move nothing, and a dim whose stride is the next dim's stride times its extent
  // merges into it: [1, 8, 1, 64] with a "transpose" of its size-1 dims is then one memcpy.
  Dims shape(out_shape.size()), strides(out_shape.size());
  size_t rank = 0;
  for (size_t d = 0; d < out_shape.size(); ++d) {
    if (out_shape[d] == 1) continue;
    if (rank > 0 && strides.data[rank - 1] == src_strides[d] * out_shape[d]) {
      shape.data[rank - 1] *= out_shape[d];
      strides.data[rank - 1] = src_strides[d];
    } else {
      shape.data[rank] = out_shape[d];
      strides.data[rank] = src_strides[d];
      ++rank;
    }
  }
  if (rank == 0 || (rank == 1 && strides.data[0] == 1)) {
    std::memcpy(dst, static_cast<const char*>(src) + static_cast<size_t>(offset) * elem_size,
                static_cast<size_t>(checked_numel(out_shape)) * elem_size);
    return;
  }
  const int64_t *sh = shape.data, *st = strides.data;
  switch (elem_size) {
    case 1:
      return copy_rows(static_cast<const uint8_t*>(src), offset, st, static_cast<uint8_t*>(dst), sh, rank);
    case 2:
      return copy_rows(static_cast<const uint16_t*>(src), offset, st, static_cast<uint16_t*>(dst), sh, rank);
    case 4:
      return copy_rows(static_cast<const uint32_t*>(src), offset, st, static_cast<uint32_t*>(dst), sh, rank);
    case 8:
      return copy_rows(static_cast<const uint64_t*>(src), offset, st, static_cast<uint64_t*>(dst), sh, rank);
    case 16:
      return copy_rows(static_cast<const Bytes16*>(src), offset, st, static_cast<Bytes16*>(dst), sh, rank);
    default:
      throw Error({"refrt"}, "element size " + std::to_string(elem_size) + " cannot be copied");
  }
}

void strided_copy(const KernelIO& io, const void* src, int64_t offset, const std::vector<int64_t>& src_strides,
                  void* dst, const Shape& out_shape, size_t elem_size) {
  constexpr int64_t kParallelBytes = int64_t{1} << 18, kParallelElements = int64_t{1} << 16;
  const int64_t total = checked_numel(out_shape);
  size_t d = 0;
  while (d < out_shape.size() && out_shape[d] == 1) ++d;
  if (!io.pool || io.pool->size() < 2 || d == out_shape.size() ||
      (total * static_cast<int64_t>(elem_size) < kParallelBytes && total < kParallelElements))
    return strided_copy(src, offset, src_strides, dst, out_shape, elem_size);
  const int64_t slab = total / out_shape[d];  // output elements per index of dim d
  parallel_for(
      io, out_shape[d],
      std::max<int64_t>(1, (kParallelBytes / 4) / std::max<int64_t>(1, slab * static_cast<int64_t>(elem_size))),
      [&](int64_t b, int64_t e) {
        Shape mine = out_shape;
        mine[d] = e - b;
        strided_copy(src, offset + b * src_strides[d], src_strides,
                     static_cast<char*>(dst) + static_cast<size_t>(b * slab) * elem_size, mine, elem_size);
      });
}

}  // namespace parity::refrt
