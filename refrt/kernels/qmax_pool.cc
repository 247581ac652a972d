// QMaxPool (private domain, optimize/fuse_qdq_activation.h): MaxPool of 8-bit values, for
//   DequantizeLinear -> MaxPool -> QuantizeLinear with one scale and zero point (the maximum of the bytes is the
//   byte of the maximum). 2-D windows: the plane copied once into padded rows, per output row the maximum of its
//   kernel-height input rows (whole AVX2 vectors), then of each window's kernel-width columns. Padding never wins (the
//   lowest value fills it), as ONNX's MaxPool ignores it. Other ranks and dilations: the pass leaves a plain MaxPool on
//   the bytes.
#include <immintrin.h>

#include <algorithm>
#include <limits>
#include <type_traits>
#include <vector>

#include "../src/dispatch.h"
#include "nn_common.h"
#include "parity/refrt/cpu_isa.h"

namespace parity::refrt {
namespace {

const bool kAvx2 = isa_allows(IsaLevel::kAvx2);

// dst[0, n) = max(dst, src) of bytes (signed or not), 32 at a time.
__attribute__((target("avx2"))) int64_t max_avx2(bool is_signed, uint8_t* dst, const uint8_t* src, int64_t n) {
  int64_t j = 0;
  for (; j + 32 <= n; j += 32) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(dst + j));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + j));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + j), is_signed ? _mm256_max_epi8(a, b) : _mm256_max_epu8(a, b));
  }
  return j;
}

template <typename T>
void max_into(T* dst, const T* src, int64_t n) {
  int64_t j = 0;
  if constexpr (sizeof(T) == 1)
    if (kAvx2)
      j = max_avx2(std::is_signed_v<T>, reinterpret_cast<uint8_t*>(dst), reinterpret_cast<const uint8_t*>(src), n);
  for (; j < n; ++j) dst[j] = std::max(dst[j], src[j]);
}

// Rows are kept at a multiple of 32 bytes (the tail filled with the lowest value), so every pass is whole vectors.
inline int64_t round32(int64_t n) { return (n + 31) / 32 * 32; }

template <typename T>
void pool_plane(const nn::WindowGeometry& g, const T* in, T* out, std::vector<T>& padded, std::vector<T>& vmax) {
  const int64_t ih = g.in[0], iw = g.in[1], oh = g.out[0], ow = g.out[1], kh = g.kernel[0], kw = g.kernel[1];
  const int64_t sh = g.stride[0], sw = g.stride[1], ph = g.pad_begin[0], pw = g.pad_begin[1];
  const T low = std::numeric_limits<T>::lowest();
  // A row with its padding: columns [-pw, (ow - 1) * sw - pw + kw) of the input, then the lowest value to 32 bytes.
  const int64_t width = (ow - 1) * sw + kw, stride = round32(width + kw);
  padded.assign(static_cast<size_t>(ih * stride), low);
  const int64_t c0 = std::max<int64_t>(0, pw), c1 = std::min<int64_t>(width, iw + pw);
  if (c1 > c0)
    for (int64_t i = 0; i < ih; ++i)
      std::copy(in + i * iw + (c0 - pw), in + i * iw + (c1 - pw), padded.begin() + i * stride + c0);
  vmax.resize(static_cast<size_t>(stride));
  for (int64_t o = 0; o < oh; ++o) {
    // The window rows' maximum (vertical), then the maximum over each run of kw columns, sampled every sw.
    std::fill(vmax.begin(), vmax.end(), low);
    for (int64_t a = 0; a < kh; ++a) {
      const int64_t i = o * sh - ph + a;
      if (i >= 0 && i < ih) max_into(vmax.data(), padded.data() + i * stride, stride);
    }
    T* dst = out + o * ow;
    for (int64_t j = 0; j < ow; ++j) {
      const T* w = vmax.data() + j * sw;
      T m = w[0];
      for (int64_t b = 1; b < kw; ++b) m = std::max(m, w[b]);
      dst[j] = m;
    }
  }
}

class QMaxPoolKernel : public Kernel {
 public:
  explicit QMaxPoolKernel(const NodeDef& node) : node_(node), attrs_(nn::parse_window_attrs(node)) {
    if (attrs_.kernel_shape.size() != 2) node.fail("QMaxPool takes 2-D windows");
    for (int64_t d : attrs_.dilations)
      if (d != 1) node.fail("QMaxPool takes dilation 1");
  }
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    if (x.rank() != 4 || (x.dtype() != DType::kUInt8 && x.dtype() != DType::kInt8))
      node_.fail("X must be int8 / uint8 [N, C, H, W], got " + dtype_name(x.dtype()) + " " + shape_str(x.shape()));
    const nn::WindowGeometry g =
        nn::forward_geometry(node_, attrs_, nn::spatial_dims(x.shape()), attrs_.kernel_shape, true);
    Tensor y(x.dtype(), {x.dim(0), x.dim(1), g.out[0], g.out[1]});
    const int64_t planes = x.dim(0) * x.dim(1), in_size = g.in_size(), out_size = g.out_size();
    if (out_size > 0)
      dispatch_numeric(x.dtype(), [&](auto tag) {
        using T = decltype(tag);
        if constexpr (sizeof(T) != 1) return;  // the constructor's callers give bytes only (checked above)
        const T* px = x.data<T>();
        T* py = y.data<T>();
        parallel_for(io, planes, 1, [&](int64_t p0, int64_t p1) {
          std::vector<T> padded, vmax;
          for (int64_t p = p0; p < p1; ++p) pool_plane<T>(g, px + p * in_size, py + p * out_size, padded, vmax);
        });
      });
    io.impl = "refrt qmaxpool";
    io.outputs[0] = std::move(y);
  }

 private:
  NodeDef node_;
  nn::WindowAttrs attrs_;
};

}  // namespace

PARITY_FUSED_KERNEL("QMaxPool", QMaxPoolKernel, {DType::kUInt8, DType::kInt8});

}  // namespace parity::refrt
