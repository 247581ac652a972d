// gemv_packed.h: the one-row product with a constant B, B packed in panels of 64 columns, AVX-512.
#include "gemv_packed.h"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "dispatch.h"
#include "parity/error.h"
#include "parity/refrt/cpu_isa.h"

namespace parity::refrt {

namespace {

constexpr int64_t kPanel = 64;  // columns per panel: four ZMM registers of sums

int64_t round16(int64_t v) { return (v + 15) / 16 * 16; }

}  // namespace

// Panel p holds columns [64p, 64p + w) (w = 64 but for the last) as K rows of `stride` elements of B's dtype (w
// rounded up to 16, zero-filled), at element 64 p K of data; every row starts on a 32-byte boundary (64 for
// float32).
struct PackedGemv::Panels {
  void* data = nullptr;
  int64_t count = 0;
  ~Panels() { std::free(data); }
};

namespace {

using Panels = PackedGemv::Panels;

// Columns [c0, c0 + w) of B (row-major [k, n], or [n, k] when trans) into one panel of `stride`-element rows.
template <typename T>
void pack_panel(const T* b, bool trans, int64_t k, int64_t n, int64_t c0, int64_t w, int64_t stride, T* dst) {
  if (trans) {
    // Each column of the panel is a row of B: read in order, written into the panel (it stays in L2).
    for (int64_t c = 0; c < w; ++c) {
      const T* src = b + (c0 + c) * k;
      for (int64_t i = 0; i < k; ++i) dst[i * stride + c] = src[i];
    }
  } else {
    for (int64_t i = 0; i < k; ++i) std::memcpy(dst + i * stride, b + i * n + c0, static_cast<size_t>(w) * sizeof(T));
  }
  if (stride > w)
    for (int64_t i = 0; i < k; ++i) std::fill(dst + i * stride + w, dst + (i + 1) * stride, T(0));
}

// Pairs of k: rows 2i and 2i + 1 of a panel interleaved, 16-bit values (dst row i of 2 * stride: column c's pair at
// 2c, 2c + 1), a zero row past an odd K.
void pack_pairs(const uint16_t* b, bool trans, int64_t k, int64_t n, int64_t c0, int64_t w, int64_t stride,
                uint16_t* dst) {
  const int64_t pairs = (k + 1) / 2;
  std::fill(dst, dst + pairs * 2 * stride, uint16_t{0});
  for (int64_t c = 0; c < w; ++c)
    for (int64_t i = 0; i < k; ++i)
      dst[(i / 2) * 2 * stride + 2 * c + (i & 1)] = trans ? b[(c0 + c) * k + i] : b[i * n + c0 + c];
}

// 16 weights of a panel row as float32: loaded, or widened exactly from float16 (vcvtph2ps) / bfloat16 (the
// 16 bits moved to the top of a float32).
template <DType D>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq"))) inline __m512 load16(const void* p) {
  if constexpr (D == DType::kFloat32) {
    return _mm512_load_ps(static_cast<const float*>(p));
  } else {
    const __m256i h = _mm256_load_si256(static_cast<const __m256i*>(p));
    if constexpr (D == DType::kFloat16) return _mm512_cvtph_ps(h);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
}

// y[0, w) = the first V sums (+ bias), the last vector masked to the panel's width.
template <int V>
__attribute__((target("avx512f"))) inline void store_sums(const std::array<__m512, 4>& sums, const float* bias,
                                                          int64_t w, float* y) {
  for (int v = 0; v < V; ++v) {
    const int64_t c = 16 * v, left = std::min<int64_t>(16, w - c);
    const auto mask = static_cast<__mmask16>(left >= 16 ? 0xffffu : (1u << left) - 1u);
    __m512 s = sums[static_cast<size_t>(v)];
    if (bias) s = _mm512_add_ps(s, _mm512_maskz_loadu_ps(mask, bias + c));
    _mm512_mask_storeu_ps(y + c, mask, s);
  }
}

// y[0, w) = sum over i < k of x[i] * panel row i (+ bias), the panel V registers wide. Each column is one FMA
// chain over k in order from zero (the same sums as gemv.cc's single-thread AVX2 path). The V sums are named
// registers, not an array: GCC keeps an array of vectors in memory when it does not unroll the loop over it, and
// every FMA then waits for a store and a load (measured 20 % slower than the AVX2 path on 2048 x 5632).
template <int V, DType D>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq"))) void panel_product(int64_t k, const void* panel,
                                                                                 const float* x, const float* bias,
                                                                                 int64_t w, float* y) {
  using T = std::conditional_t<D == DType::kFloat32, float, uint16_t>;
  const T* p = static_cast<const T*>(panel);
  __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  for (int64_t i = 0; i < k; ++i) {
    const __m512 xi = _mm512_set1_ps(x[i]);
    const T* row = p + i * 16 * V;
    s0 = _mm512_fmadd_ps(load16<D>(row), xi, s0);
    if constexpr (V > 1) s1 = _mm512_fmadd_ps(load16<D>(row + 16), xi, s1);
    if constexpr (V > 2) s2 = _mm512_fmadd_ps(load16<D>(row + 32), xi, s2);
    if constexpr (V > 3) s3 = _mm512_fmadd_ps(load16<D>(row + 48), xi, s3);
  }
  store_sums<V>({s0, s1, s2, s3}, bias, w, y);
}

// The same over bfloat16 pairs: xp[i] holds x[2i] (low half) and x[2i + 1] as bfloat16, each panel row i two k.
template <int V>
__attribute__((target("avx512f,avx512bw,avx512bf16"))) void pair_product(int64_t pairs, const uint16_t* p,
                                                                         const uint32_t* xp, const float* bias,
                                                                         int64_t w, float* y) {
  __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  for (int64_t i = 0; i < pairs; ++i) {
    const __m512bh xi = (__m512bh)_mm512_set1_epi32(static_cast<int>(xp[i]));
    const uint16_t* row = p + i * 32 * V;
    s0 = _mm512_dpbf16_ps(s0, (__m512bh)_mm512_load_si512(row), xi);
    if constexpr (V > 1) s1 = _mm512_dpbf16_ps(s1, (__m512bh)_mm512_load_si512(row + 32), xi);
    if constexpr (V > 2) s2 = _mm512_dpbf16_ps(s2, (__m512bh)_mm512_load_si512(row + 64), xi);
    if constexpr (V > 3) s3 = _mm512_dpbf16_ps(s3, (__m512bh)_mm512_load_si512(row + 96), xi);
  }
  store_sums<V>({s0, s1, s2, s3}, bias, w, y);
}

void run_pairs_panel(int64_t pairs, const uint16_t* p, int64_t stride, const uint32_t* xp, const float* bias, int64_t w,
                     float* y) {
  switch (stride / 16) {
    case 1:
      return pair_product<1>(pairs, p, xp, bias, w, y);
    case 2:
      return pair_product<2>(pairs, p, xp, bias, w, y);
    case 3:
      return pair_product<3>(pairs, p, xp, bias, w, y);
    default:
      return pair_product<4>(pairs, p, xp, bias, w, y);
  }
}

template <DType D>
void run_panel(int64_t k, const void* p, int64_t stride, const float* x, const float* bias, int64_t w, float* y) {
  switch (stride / 16) {
    case 1:
      return panel_product<1, D>(k, p, x, bias, w, y);
    case 2:
      return panel_product<2, D>(k, p, x, bias, w, y);
    case 3:
      return panel_product<3, D>(k, p, x, bias, w, y);
    default:
      return panel_product<4, D>(k, p, x, bias, w, y);
  }
}

void run_panel(DType dtype, int64_t k, const void* p, int64_t stride, const float* x, const float* bias, int64_t w,
               float* y) {
  switch (dtype) {
    case DType::kFloat16:
      return run_panel<DType::kFloat16>(k, p, stride, x, bias, w, y);
    case DType::kBFloat16:
      return run_panel<DType::kBFloat16>(k, p, stride, x, bias, w, y);
    default:
      return run_panel<DType::kFloat32>(k, p, stride, x, bias, w, y);
  }
}

}  // namespace

bool packed_gemv_available() {
  static const bool on = [] {
    const char* v = std::getenv("PARITY_REFRT_PACKED_GEMV");
    return !(v && std::string(v) == "0") && isa_allows(IsaLevel::kAvx512);
  }();
  return on;
}

PackedGemv::PackedGemv() = default;
PackedGemv::~PackedGemv() = default;

void PackedGemv::set(const Tensor& b, bool trans) {
  if (b.dtype() != DType::kFloat32 && b.dtype() != DType::kFloat16 && b.dtype() != DType::kBFloat16)
    throw Error({"refrt"}, "a packed GEMV takes float32, float16 or bfloat16 weights, not " + dtype_name(b.dtype()));
  b_ = b;
  trans_ = trans;
  pairs_ = b.dtype() == DType::kBFloat16 && isa_allows(IsaLevel::kAvx512Bf16);
  k_ = trans ? b.dim(1) : b.dim(0);
  n_ = trans ? b.dim(0) : b.dim(1);
}

const PackedGemv::Panels& PackedGemv::panels(const KernelIO& io) const {
  std::call_once(packed_, [&] {
    auto made = std::make_unique<Panels>();
    made->count = (n_ + kPanel - 1) / kPanel;
    const int64_t tail = n_ - (made->count - 1) * kPanel;
    const int64_t rows = pairs_ ? (k_ + 1) / 2 * 2 : k_;  // an odd K's pairs end in a zero row
    const int64_t elements = ((made->count - 1) * kPanel + round16(tail)) * rows;
    const size_t elem = dtype_size(b_.dtype());
    const size_t bytes = (static_cast<size_t>(elements) * elem + 63) / 64 * 64;
    made->data = std::aligned_alloc(64, std::max<size_t>(bytes, 64));
    if (!made->data) throw Error({"refrt"}, "cannot allocate " + std::to_string(bytes) + " bytes for a packed GEMV");
    auto pack = [&](auto tag) {
      using T = decltype(tag);
      const T* b = static_cast<const T*>(b_.raw());
      T* data = static_cast<T*>(made->data);
      parallel_for(io, made->count, 1, [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p) {
          const int64_t w = std::min(kPanel, n_ - p * kPanel);
          if constexpr (std::is_same_v<T, uint16_t>) {
            if (pairs_) {
              pack_pairs(b, trans_, k_, n_, p * kPanel, w, round16(w), data + p * kPanel * rows);
              continue;
            }
          }
          pack_panel(b, trans_, k_, n_, p * kPanel, w, round16(w), data + p * kPanel * k_);
        }
      });
    };
    if (elem == sizeof(float))
      pack(float{});
    else
      pack(uint16_t{});
    panels_ = std::move(made);
  });
  return *panels_;
}

Backend PackedGemv::run(const KernelIO& io, const float* x, const float* bias, float* y) const {
  const Panels& packed = panels(io);
  const Backend used = pairs_ ? Backend::kRefrtPackedGemvBf16 : Backend::kRefrtPackedGemv;
  backend_probe::hit(used);
  const DType dtype = b_.dtype();
  const int64_t pairs = (k_ + 1) / 2, rows = pairs_ ? 2 * pairs : k_;  // panel rows of k (an odd K's last pair padded)
  // For the pairs: x as bfloat16 pairs (exact: a bfloat16 B comes with a bfloat16 row), a zero past an odd K.
  std::vector<uint32_t> xp;
  if (pairs_) {
    std::vector<uint16_t> xb(static_cast<size_t>(2 * pairs), 0);
    narrow_span(DType::kBFloat16, x, xb.data(), k_);
    xp.resize(static_cast<size_t>(pairs));
    std::memcpy(xp.data(), xb.data(), xb.size() * sizeof(uint16_t));
  }
  // A panel is 64 k multiply-adds; below ~32k per task, waking the pool costs more than it saves.
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 15) / (kPanel * std::max<int64_t>(k_, 1)));
  parallel_for(io, packed.count, grain, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t c0 = p * kPanel, w = std::min(kPanel, n_ - c0);
      const void* panel = static_cast<const char*>(packed.data) + c0 * rows * static_cast<int64_t>(dtype_size(dtype));
      const float* b = bias ? bias + c0 : nullptr;
      if (pairs_)
        run_pairs_panel(pairs, static_cast<const uint16_t*>(panel), round16(w), xp.data(), b, w, y + c0);
      else
        run_panel(dtype, k_, panel, round16(w), x, b, w, y + c0);
    }
  });
  return used;
}

}  // namespace parity::refrt
