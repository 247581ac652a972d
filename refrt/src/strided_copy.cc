#include "strided_copy.h"

#include <algorithm>
#include <cstring>

#include "kernel.h"
#include "thread_pool.h"

namespace parity::refrt {
namespace {

// Typed element moves for the common sizes; the inner dim is a tight loop.
template <typename T>
void copy_rows(const T* src, int64_t offset, const std::vector<int64_t>& strides, T* dst, const Shape& shape) {
  const size_t rank = shape.size();
  const int64_t inner = shape[rank - 1], inner_stride = strides[rank - 1];
  const int64_t total = checked_numel(shape);
  std::vector<int64_t> index(rank - 1, 0);
  int64_t base = offset;
  for (int64_t o = 0; o < total; o += inner) {
    const T* s = src + base;
    if (inner_stride == 1)  // contiguous rows (Expand's repeated rows, slices): a memcpy each
      std::memcpy(dst + o, s, static_cast<size_t>(inner) * sizeof(T));
    else
      for (int64_t j = 0; j < inner; ++j) dst[o + j] = s[j * inner_stride];
    for (size_t d = rank - 1; d-- > 0;) {
      base += strides[d];
      if (++index[d] < shape[d]) break;
      base -= strides[d] * index[d];
      index[d] = 0;
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
  Shape shape;
  std::vector<int64_t> strides;
  for (size_t d = 0; d < out_shape.size(); ++d) {
    if (out_shape[d] == 1) continue;
    if (!shape.empty() && strides.back() == src_strides[d] * out_shape[d]) {
      shape.back() *= out_shape[d];
      strides.back() = src_strides[d];
    } else {
      shape.push_back(out_shape[d]);
      strides.push_back(src_strides[d]);
    }
  }
  if (shape.empty() || (shape.size() == 1 && strides[0] == 1)) {
    std::memcpy(dst, static_cast<const char*>(src) + static_cast<size_t>(offset) * elem_size,
                static_cast<size_t>(checked_numel(out_shape)) * elem_size);
    return;
  }
  switch (elem_size) {
    case 1:
      return copy_rows(static_cast<const uint8_t*>(src), offset, strides, static_cast<uint8_t*>(dst), shape);
    case 2:
      return copy_rows(static_cast<const uint16_t*>(src), offset, strides, static_cast<uint16_t*>(dst), shape);
    case 4:
      return copy_rows(static_cast<const uint32_t*>(src), offset, strides, static_cast<uint32_t*>(dst), shape);
    case 8:
      return copy_rows(static_cast<const uint64_t*>(src), offset, strides, static_cast<uint64_t*>(dst), shape);
    case 16:
      return copy_rows(static_cast<const Bytes16*>(src), offset, strides, static_cast<Bytes16*>(dst), shape);
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
