// Internal: N-D im2col / col2im over a WindowGeometry, for Conv (im2col + GEMM) and ConvTranspose
// (GEMM + col2im). The column matrix is [channels * kernel_size, out_size] row-major; the inner loop
// runs along the last spatial dim so that its cost is one bounds check per element.
#pragma once
#include <algorithm>

#include "nn_common.h"

namespace parity::refrt::nn {

// Visits every (channel, kernel offset, output row) of the column matrix: `fn(col_offset, in_offset_or_-1,
// last_dim_kernel_offset, kernel_index, out_offset)` where in_offset is the element offset of the input
// row (all dims but the last; channel included), or -1 when that row lies in the padding, and
// out_offset the row's offset in one output plane. No division in the per-row path but one per dim.
template <typename Fn>
void for_each_column_row(const WindowGeometry& g, int64_t channels, Fn&& fn) {
  const size_t r = g.rank();
  const int64_t ksize = g.kernel_size(), out_last = g.out[r - 1], out_size = g.out_size(), in_size = g.in_size();
  const int64_t out_rows = out_size / std::max<int64_t>(out_last, 1);
  std::vector<int64_t> kd(r), od(r);
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t k = 0; k < ksize; ++k) {
      for (int64_t rest = k, d = static_cast<int64_t>(r) - 1; d >= 0; --d) {
        kd[static_cast<size_t>(d)] = rest % g.kernel[static_cast<size_t>(d)];
        rest /= g.kernel[static_cast<size_t>(d)];
      }
      for (int64_t row = 0; row < out_rows; ++row) {
        int64_t rest = row, off = 0, scale = 1;
        bool valid = true;
        for (int64_t d = static_cast<int64_t>(r) - 2; d >= 0; --d) {
          const size_t u = static_cast<size_t>(d);
          const int64_t o = rest % g.out[u];
          rest /= g.out[u];
          const int64_t i = o * g.stride[u] - g.pad_begin[u] + kd[u] * g.dilation[u];
          if (i < 0 || i >= g.in[u]) valid = false;
          off += i * scale;
          scale *= g.in[u];
        }
        fn((c * ksize + k) * out_size + row * out_last, valid ? c * in_size + off * g.in[r - 1] : -1, kd[r - 1], k,
           row * out_last);
      }
    }
}

template <typename T>
void im2col(const WindowGeometry& g, int64_t channels, const T* x, T* col) {
  const size_t r = g.rank();
  const int64_t out_last = g.out[r - 1], in_last = g.in[r - 1], s = g.stride[r - 1];
  const int64_t pb = g.pad_begin[r - 1], dil = g.dilation[r - 1];
  for_each_column_row(g, channels, [&](int64_t col_off, int64_t in_off, int64_t k_last, int64_t, int64_t) {
    T* dst = col + col_off;
    if (in_off < 0) {
      std::fill(dst, dst + out_last, T(0));
      return;
    }
    const T* src = x + in_off;
    const int64_t shift = k_last * dil - pb;
    if (s == 1) {  // contiguous run: copy the in-range middle, zero the padded ends
      const int64_t lo = std::clamp<int64_t>(-shift, 0, out_last),
                    hi = std::clamp<int64_t>(in_last - shift, lo, out_last);
      std::fill(dst, dst + lo, T(0));
      std::copy(src + lo + shift, src + hi + shift, dst + lo);
      std::fill(dst + hi, dst + out_last, T(0));
      return;
    }
    // Strided: outputs [lo, hi) read inside the row, the rest is padding.
    const int64_t lo = shift >= 0 ? 0 : std::min(out_last, (-shift + s - 1) / s);
    const int64_t hi = std::max(lo, std::min(out_last, in_last - shift <= 0 ? 0 : (in_last - shift - 1) / s + 1));
    std::fill(dst, dst + lo, T(0));
    for (int64_t o = lo; o < hi; ++o) dst[o] = src[o * s + shift];
    std::fill(dst + hi, dst + out_last, T(0));
  });
}

// y += col scattered back (the adjoint of im2col).
template <typename T>
void col2im(const WindowGeometry& g, int64_t channels, const T* col, T* y) {
  const size_t r = g.rank();
  const int64_t out_last = g.out[r - 1], in_last = g.in[r - 1], s = g.stride[r - 1];
  const int64_t pb = g.pad_begin[r - 1], dil = g.dilation[r - 1];
  for_each_column_row(g, channels, [&](int64_t col_off, int64_t in_off, int64_t k_last, int64_t, int64_t) {
    if (in_off < 0) return;
    const T* src = col + col_off;
    T* dst = y + in_off;
    for (int64_t o = 0; o < out_last; ++o) {
      const int64_t i = o * s + k_last * dil - pb;
      if (i >= 0 && i < in_last) dst[i] += src[o];
    }
  });
}

}  // namespace parity::refrt::nn
