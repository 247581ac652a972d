// WeightOnlyMatMul (refrt's fused domain, made by optimize/fuse_weight_only.cc): Y = X · dequantize(W)
// (+ bias) for 8-bit weights W [K, N] (int8 / uint8; 4-bit values when the file held INT4 / UINT4) with a
// scale and zero point per (block of K rows, column): what DequantizeLinear(axis 0, block_size) -> MatMul
// computes, without the float weight matrix (ONNX Runtime's MatMulNBits does the same).
//
// The weights are repacked once into panels of 16 columns (a panel's rows one after the other, 16 bytes
// each). Decode steps and short prompts (under 16 rows of X) stream each panel once: per block of K, the
// exact integer differences q - zero point, converted to float, are multiplied by x and summed, and each
// block's sum is scaled once (AVX-512: one vector per panel row; AVX2: two; scalar otherwise). From 16 rows
// on, slices of columns that fit in L2 are dequantized (DequantizeLinear's values: (q - zp) * scale, one
// rounding) and multiplied by refrt's GEMM while they are in cache. Either way the float weight matrix never
// exists, and the result differs from a float GEMM on the dequantized matrix only by the rounding of the sums.
#include <immintrin.h>

// GCC 12 reports its own AVX-512 intrinsics' masked-undefined operand as maybe-uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>

#include "../src/activation.h"
#include "../src/gemm.h"
#include "../src/scratch.h"
#include "parity/refrt/cpu_isa.h"
#include "weight_only_q8.h"

namespace parity::refrt {
namespace {

const Tensor& tensor_attr(const NodeDef& node, const char* name) {
  const Attribute* a = node.attr(name, Attribute::Type::kTensor);
  if (!a) node.fail(std::string("WeightOnlyMatMul lacks tensor attribute '") + name + "'");
  return a->t;
}

// The weights in panels of kLanes columns: panel p holds rows k = 0..K-1 of columns [p * kLanes, +kLanes)
// (a product streams each panel once, front to back), and per block its zero points (int32) and scales
// (float32) for those columns. Columns past N are padding with scale 0.
constexpr int64_t kLanes = 16;

enum class Format { kS8, kU8 };

constexpr bool is_signed_format(Format f) { return f == Format::kS8; }

struct Panels {
  int64_t k = 0, n = 0, block = 0, blocks = 0, count = 0;
  Format format = Format::kS8;
  bool has_zp = false;       // some zero point is not 0 (symmetric schemes skip the subtraction)
  std::vector<uint8_t> q;    // [count][k][kLanes]
  std::vector<int32_t> zp;   // [count][blocks][kLanes]
  std::vector<float> scale;  // [count][blocks][kLanes]
  const uint8_t* q_of(int64_t p) const { return q.data() + p * k * kLanes; }
  const int32_t* zp_of(int64_t p) const { return zp.data() + p * blocks * kLanes; }
  const float* scale_of(int64_t p) const { return scale.data() + p * blocks * kLanes; }
};

int32_t int_at(const Tensor& t, int64_t i) {
  return t.dtype() == DType::kInt8 ? t.data<int8_t>()[i] : t.data<uint8_t>()[i];
}

// Lane j of a panel row, as stored.
template <Format F>
int32_t lane(const uint8_t* row, int64_t j) {
  if constexpr (F == Format::kS8) return static_cast<int8_t>(row[j]);
  return row[j];
}

inline __m128i load_row(const uint8_t* q, int64_t kk) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + kk * kLanes));
}

// rows [r0, r0 + R) of Y, panel p: y[r, j] = sum_b scale[b, j] * sum_{k in b} x[r, k] * (q[k, j] - zp[b, j]).
// The integer difference is exact, each block's sum is scaled once.
template <Format F, int R>
void panel_rows_scalar(const Panels& w, int64_t p, const float* x, int64_t ldx, float* y, int64_t ldy, int64_t cols) {
  const uint8_t* q = w.q_of(p);
  float total[R][kLanes] = {};
  for (int64_t b = 0; b < w.blocks; ++b) {
    const int64_t k0 = b * w.block, k1 = std::min(w.k, k0 + w.block);
    const int32_t* zp = w.zp_of(p) + b * kLanes;
    const float* sc = w.scale_of(p) + b * kLanes;
    float acc[R][kLanes] = {};
    for (int64_t kk = k0; kk < k1; ++kk)
      for (int64_t j = 0; j < kLanes; ++j) {
        const float d = static_cast<float>(lane<F>(q + kk * kLanes, j) - zp[j]);
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) acc[r][j] = std::fma(x[r * ldx + kk], d, acc[r][j]);
      }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r)
      for (int64_t j = 0; j < kLanes; ++j) total[r][j] = std::fma(acc[r][j], sc[j], total[r][j]);
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
    for (int64_t j = 0; j < cols; ++j) y[r * ldy + j] = total[r][j];
}

template <Format F>
__attribute__((target("avx2,fma"))) inline __m256i widen8(__m128i bytes) {
  return is_signed_format(F) ? _mm256_cvtepi8_epi32(bytes) : _mm256_cvtepu8_epi32(bytes);
}

template <Format F, int R>
__attribute__((target("avx2,fma"))) void panel_rows_avx2(const Panels& w, int64_t p, const float* x, int64_t ldx,
                                                         float* y, int64_t ldy, int64_t cols) {
  const uint8_t* q = w.q_of(p);
  __m256 total[R][2];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) total[r][0] = total[r][1] = _mm256_setzero_ps();
  for (int64_t b = 0; b < w.blocks; ++b) {
    const int64_t k0 = b * w.block, k1 = std::min(w.k, k0 + w.block);
    const int32_t* zp = w.zp_of(p) + b * kLanes;
    const __m256i z0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(zp));
    const __m256i z1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(zp + 8));
    __m256 acc[R][2];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
    for (int64_t kk = k0; kk < k1; ++kk) {
      const __m128i bytes = load_row(q, kk);
      const __m256i i0 = widen8<F>(bytes), i1 = widen8<F>(_mm_unpackhi_epi64(bytes, bytes));
      const __m256 d0 = _mm256_cvtepi32_ps(w.has_zp ? _mm256_sub_epi32(i0, z0) : i0);
      const __m256 d1 = _mm256_cvtepi32_ps(w.has_zp ? _mm256_sub_epi32(i1, z1) : i1);
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        const __m256 xv = _mm256_set1_ps(x[r * ldx + kk]);
        acc[r][0] = _mm256_fmadd_ps(xv, d0, acc[r][0]);
        acc[r][1] = _mm256_fmadd_ps(xv, d1, acc[r][1]);
      }
    }
    const float* sc = w.scale_of(p) + b * kLanes;
    const __m256 s0 = _mm256_loadu_ps(sc), s1 = _mm256_loadu_ps(sc + 8);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      total[r][0] = _mm256_fmadd_ps(acc[r][0], s0, total[r][0]);
      total[r][1] = _mm256_fmadd_ps(acc[r][1], s1, total[r][1]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    alignas(32) float out[kLanes];
    _mm256_store_ps(out, total[r][0]);
    _mm256_store_ps(out + 8, total[r][1]);
    std::memcpy(y + r * ldy, out, static_cast<size_t>(cols) * sizeof(float));
  }
}

template <Format F, int R>
__attribute__((target("avx512f,avx512bw,avx512vl"))) void panel_rows_avx512(const Panels& w, int64_t p, const float* x,
                                                                            int64_t ldx, float* y, int64_t ldy,
                                                                            int64_t cols) {
  const uint8_t* q = w.q_of(p);
  __m512 total[R];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) total[r] = _mm512_setzero_ps();
  for (int64_t b = 0; b < w.blocks; ++b) {
    const int64_t k0 = b * w.block, k1 = std::min(w.k, k0 + w.block);
    const __m512i z = _mm512_loadu_si512(w.zp_of(p) + b * kLanes);
    __m512 acc[R];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
    const __m512 s = _mm512_loadu_ps(w.scale_of(p) + b * kLanes);
    for (int64_t kk = k0; kk < k1; ++kk) {
      const __m128i bytes = load_row(q, kk);
      const __m512i v = is_signed_format(F) ? _mm512_cvtepi8_epi32(bytes) : _mm512_cvtepu8_epi32(bytes);
      const __m512 d = _mm512_cvtepi32_ps(w.has_zp ? _mm512_sub_epi32(v, z) : v);
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(x[r * ldx + kk]), d, acc[r]);
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) total[r] = _mm512_fmadd_ps(acc[r], s, total[r]);
  }
  const __mmask16 keep = static_cast<__mmask16>((1u << cols) - 1);
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) _mm512_mask_storeu_ps(y + r * ldy, keep, total[r]);
}

enum class Path { kScalar, kAvx2, kAvx512 };

template <Format F, int R>
void panel_rows(Path path, const Panels& w, int64_t p, const float* x, int64_t ldx, float* y, int64_t ldy,
                int64_t cols) {
  if (path == Path::kAvx512) return panel_rows_avx512<F, R>(w, p, x, ldx, y, ldy, cols);
  if (path == Path::kAvx2) return panel_rows_avx2<F, R>(w, p, x, ldx, y, ldy, cols);
  panel_rows_scalar<F, R>(w, p, x, ldx, y, ldy, cols);
}

// Rows [0, m) of Y for panel p, four rows at a time.
template <Format F>
void panel_product(Path path, const Panels& w, int64_t p, const float* x, int64_t m, float* y) {
  const int64_t c0 = p * kLanes, cols = std::min(kLanes, w.n - c0);
  int64_t r = 0;
  for (; r + 4 <= m; r += 4) panel_rows<F, 4>(path, w, p, x + r * w.k, w.k, y + r * w.n + c0, w.n, cols);
  for (; r < m; ++r) panel_rows<F, 1>(path, w, p, x + r * w.k, w.k, y + r * w.n + c0, w.n, cols);
}

void panel_product(Path path, const Panels& w, int64_t p, const float* x, int64_t m, float* y) {
  switch (w.format) {
    case Format::kS8:
      return panel_product<Format::kS8>(path, w, p, x, m, y);
    case Format::kU8:
      return panel_product<Format::kU8>(path, w, p, x, m, y);
  }
}

// Panel p dequantized into out[kk * ld + j] (DequantizeLinear's values: (q - zp) * scale, one rounding).
template <Format F>
void dequantize_panel_scalar(const Panels& w, int64_t p, float* out, int64_t ld) {
  const uint8_t* q = w.q_of(p);
  for (int64_t kk = 0; kk < w.k; ++kk) {
    const int32_t* zp = w.zp_of(p) + (kk / w.block) * kLanes;
    const float* sc = w.scale_of(p) + (kk / w.block) * kLanes;
    for (int64_t j = 0; j < kLanes; ++j)
      out[kk * ld + j] = static_cast<float>(lane<F>(q + kk * kLanes, j) - zp[j]) * sc[j];
  }
}

template <Format F>
__attribute__((target("avx2,fma"))) void dequantize_panel_avx2(const Panels& w, int64_t p, float* out, int64_t ld) {
  const uint8_t* q = w.q_of(p);
  for (int64_t b = 0; b < w.blocks; ++b) {
    const int32_t* zp = w.zp_of(p) + b * kLanes;
    const float* sc = w.scale_of(p) + b * kLanes;
    const __m256i z0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(zp));
    const __m256i z1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(zp + 8));
    const __m256 s0 = _mm256_loadu_ps(sc), s1 = _mm256_loadu_ps(sc + 8);
    for (int64_t kk = b * w.block; kk < std::min(w.k, (b + 1) * w.block); ++kk) {
      const __m128i bytes = load_row(q, kk);
      const __m256i i0 = widen8<F>(bytes), i1 = widen8<F>(_mm_unpackhi_epi64(bytes, bytes));
      _mm256_storeu_ps(out + kk * ld, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(i0, z0)), s0));
      _mm256_storeu_ps(out + kk * ld + 8, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(i1, z1)), s1));
    }
  }
}

void dequantize_panel(Path path, const Panels& w, int64_t p, float* out, int64_t ld) {
  const bool vector = path != Path::kScalar;
  if (w.format == Format::kS8)
    return vector ? dequantize_panel_avx2<Format::kS8>(w, p, out, ld)
                  : dequantize_panel_scalar<Format::kS8>(w, p, out, ld);
  vector ? dequantize_panel_avx2<Format::kU8>(w, p, out, ld) : dequantize_panel_scalar<Format::kU8>(w, p, out, ld);
}

// From this many rows of X on, the weights are dequantized for the call, a slice of columns at a time (each
// thread's float32 scratch of K x the slice: 1/(2 M) of the product's work), and multiplied by refrt's GEMM.
constexpr int64_t kGemmRows = 16;
// Dequantized weights per slice of columns, in bytes (a slice is made and multiplied while it is in L2).
constexpr int64_t kSliceBytes = int64_t{1} << 20;

class WeightOnlyMatMulKernel : public Kernel {
 public:
  explicit WeightOnlyMatMulKernel(const NodeDef& node) : node_(node), gemm_(node.attr_int("gemm", 0) != 0) {
    const Tensor& w = tensor_attr(node, "w");
    const Tensor& scale = tensor_attr(node, "w_scale");
    if (w.rank() != 2 || (w.dtype() != DType::kInt8 && w.dtype() != DType::kUInt8))
      node.fail("weights must be 2-D int8/uint8, got " + dtype_name(w.dtype()) + " " + shape_str(w.shape()));
    Panels& pw = w_;
    pw.k = w.dim(0), pw.n = w.dim(1), pw.block = node.attr_int("block_size", 0);
    pw.blocks = pw.block > 0 ? (pw.k + pw.block - 1) / pw.block : 0;
    if (pw.block <= 0 || scale.dtype() != DType::kFloat32 || scale.shape() != Shape{pw.blocks, pw.n})
      node.fail("scale must be float32 [" + std::to_string(pw.blocks) + ", " + std::to_string(pw.n) + "] for block " +
                std::to_string(pw.block) + ", got " + shape_str(scale.shape()));
    const Attribute* zp = node.attr("w_zero_point", Attribute::Type::kTensor);
    if (zp && (zp->t.dtype() != w.dtype() || zp->t.shape() != scale.shape()))
      node.fail("zero point must be " + dtype_name(w.dtype()) + " " + shape_str(scale.shape()));
    if (const Attribute* b = node.attr("bias", Attribute::Type::kTensor)) {
      if (b->t.dtype() != DType::kFloat32 || b->t.numel() != pw.n)
        node.fail("bias must be float32 of " + std::to_string(pw.n));
      bias_.assign(b->t.data<float>(), b->t.data<float>() + pw.n);
    }
    // accuracy_level (set by the session, fuse_weight_only.cc): 4 computes with int8 activations per block
    // (weight_only_q8.h), as ONNX Runtime's MatMulNBits does at level 4; any other level is the exact product.
    const int64_t level = node.attr_int("accuracy_level", 0);
    if (level < 0 || level > 4) node.fail("accuracy_level must be 0 to 4, got " + std::to_string(level));
    if (level == 4) {
      q8_ = q8::pack(w, scale, zp ? &zp->t : nullptr, pw.block);
      q8_path_ = q8::host_path();
      auto label = [&](q8::Path p) {
        return intern_impl(std::string("refrt weight-only int") + std::to_string(q8_.bits) + " x int8 block " +
                           std::to_string(pw.block) + " (" + q8::path_name(p) + ")");
      };
      impl_ = label(q8_path_);
      impl_vnni_ = label(q8::Path::kAvx512Vnni);  // the amx path's label where its tiles do not run
      return;
    }
    // 4-bit weights (INT4 / UINT4 in the file) are kept one per byte as well: packed two per byte they were
    // 10-15 % slower (Intel Xeon, AVX-512: a 4096 x 4096 product at one row and the LLaMA-style decode step,
    // 1 and 2 threads), the loop being bound by the int -> float conversions, not by the bytes it streams.
    pw.format = w.dtype() == DType::kInt8 ? Format::kS8 : Format::kU8;
    const auto* src = static_cast<const uint8_t*>(w.raw());
    pw.count = (pw.n + kLanes - 1) / kLanes;
    pw.q.assign(static_cast<size_t>(pw.count * pw.k * kLanes), 0);
    pw.zp.assign(static_cast<size_t>(pw.count * pw.blocks * kLanes), 0);
    pw.scale.assign(static_cast<size_t>(pw.count * pw.blocks * kLanes), 0.0f);
    for (int64_t j = 0; j < pw.n; ++j) {
      const int64_t p = j / kLanes, lane_j = j % kLanes;
      for (int64_t kk = 0; kk < pw.k; ++kk)
        pw.q[static_cast<size_t>((p * pw.k + kk) * kLanes + lane_j)] = src[kk * pw.n + j];
      for (int64_t b = 0; b < pw.blocks; ++b) {
        const size_t at = static_cast<size_t>((p * pw.blocks + b) * kLanes + lane_j);
        pw.scale[at] = scale.data<float>()[b * pw.n + j];
        pw.zp[at] = zp ? int_at(zp->t, b * pw.n + j) : 0;
        pw.has_zp = pw.has_zp || pw.zp[at] != 0;
      }
    }
    const IsaLevel isa = isa_level();
    path_ = isa >= IsaLevel::kAvx512 ? Path::kAvx512 : isa >= IsaLevel::kAvx2 ? Path::kAvx2 : Path::kScalar;
    static const char* names[] = {"scalar", "avx2", "avx512"};
    static const char* formats[] = {"int8", "uint8"};
    impl_ = intern_impl(std::string("refrt weight-only ") + formats[static_cast<int>(pw.format)] + " block " +
                        std::to_string(pw.block) + " (" + names[static_cast<int>(path_)] + ")");
  }

  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    const int64_t k = w_.k, n = w_.n;
    if (x.dtype() != DType::kFloat32) node_.fail("input must be float32, got " + dtype_name(x.dtype()));
    if (x.rank() < (gemm_ ? 2 : 1) || x.shape().back() != k || (gemm_ && x.rank() != 2))
      node_.fail("input " + shape_str(x.shape()) + " does not end in the weights' K = " + std::to_string(k));
    const int64_t m = k > 0 ? x.numel() / k : 0;
    Shape out = x.shape();
    if (x.rank() == 1)
      out = {n};
    else
      out.back() = n;
    Tensor y(DType::kFloat32, out);
    const float* px = x.data<float>();
    float* py = y.data<float>();
    io.impl = impl_;
    if (k == 0) {
      std::fill(py, py + y.numel(), 0.0f);
    } else if (q8_.k > 0) {
      if (q8::matmul(q8_, q8_path_, px, m, py, io) != q8_path_) io.impl = impl_vnni_;
    } else if (m >= kGemmRows) {
      // The weights dequantized by refrt's panels, the product on the backends that ran it.
      io.impl = intern_impl(std::string(impl_) + " dequantized + " +
                            std::string(backend_label(dequantized_product(io, px, m, py))));
    } else {
      parallel_for(io, w_.count, 1, [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p) panel_product(path_, w_, p, px, m, py);
      });
    }
    if (!bias_.empty())
      for (int64_t r = 0; r < m; ++r)
        for (int64_t j = 0; j < n; ++j) py[r * n + j] += bias_[static_cast<size_t>(j)];
    io.outputs[0] = std::move(y);
  }

  // Y = X W for 16 rows and more: slices of columns (as many as fit kSliceBytes of float32 weights) dequantized by
  // refrt's panels into a buffer that stays in cache, each multiplied by refrt's GEMM there and then.
  BackendSet dequantized_product(const KernelIO& io, const float* px, int64_t m, float* py) const {
    const int64_t k = w_.k, n = w_.n;
    if (w_.count == 0) return 0;
    // As many slices as fit the budget, rounded up to a multiple of the threads, of equal numbers of panels.
    const int64_t threads = io.pool ? io.pool->size() : 1;
    const int64_t most = std::max<int64_t>(4, kSliceBytes / (4 * k) / kLanes);
    const int64_t slices = std::min(w_.count, ((w_.count + most - 1) / most + threads - 1) / threads * threads);
    const int64_t per_slice = (w_.count + slices - 1) / slices, ld = per_slice * kLanes;
    std::atomic<BackendSet> ran{0};
    parallel_for(io, (w_.count + per_slice - 1) / per_slice, 1, [&](int64_t s0, int64_t s1) {
      float* b = scratch<float>(static_cast<size_t>(k * ld), ScratchSlot::kWeightOnly);
      for (int64_t s = s0; s < s1; ++s) {
        const int64_t p0 = s * per_slice, p1 = std::min(w_.count, p0 + per_slice);
        for (int64_t p = p0; p < p1; ++p) dequantize_panel(path_, w_, p, b + (p - p0) * kLanes, ld);
        const int64_t c0 = p0 * kLanes, c1 = std::min(n, p1 * kLanes);
        const Backend used = gemm<float>(false, false, m, c1 - c0, k, 1.0f, px, k, b, ld, 0.0f, py + c0, n);
        ran.fetch_or(backend_bit(used), std::memory_order_relaxed);
      }
    });
    return ran.load();
  }

  double flops(const KernelIO& io) const override {
    return 2.0 * static_cast<double>(io.in(0).numel()) * static_cast<double>(w_.n);
  }

 private:
  NodeDef node_;
  bool gemm_ = false;
  Panels w_;
  Path path_ = Path::kScalar;
  q8::Weights q8_;  // packed for the int8-activation mode (accuracy_level 4), else empty
  q8::Path q8_path_ = q8::Path::kScalar;
  std::vector<float> bias_;
  std::string_view impl_, impl_vnni_;  // impl_vnni_: the amx path when it ran its rows on avx512_vnni
};

}  // namespace

PARITY_FUSED_KERNEL("WeightOnlyMatMul", WeightOnlyMatMulKernel, {DType::kFloat32});

}  // namespace parity::refrt
