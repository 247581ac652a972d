// WeightOnlyMatMul (refrt's fused domain, made by optimize/fuse_weight_only.cc): Y = X · dequantize(W)
// (+ bias) for 8-bit weights W [K, N] (int8 / uint8; 4-bit values when the file held INT4 / UINT4) with a
// scale and zero point per (block of K rows, column): what DequantizeLinear(axis 0, block_size) -> MatMul
// computes, without the float weight matrix (ONNX Runtime's MatMulNBits does the same).
//
// The weights are repacked once, column by column (K contiguous bytes). A call dequantizes one column at a
// time into an L1-sized float strip and takes its dot products with the rows of X (decode steps and short
// prompts: the weights stream from memory once, at a quarter of float32's bytes); from 16 rows on, tiles of
// 64 columns are dequantized and multiplied by refrt's GEMM. Each dequantized weight is the float
// DequantizeLinear produces ((q - zero point) * scale, one rounding): only the order of the sums differs
// from a float GEMM on the dequantized matrix.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "../src/activation.h"
#include "../src/gemm.h"
#include "../src/scratch.h"
#include "parity/refrt/cpu_isa.h"

namespace parity::refrt {
namespace {

const Tensor& tensor_attr(const NodeDef& node, const char* name) {
  const Attribute* a = node.attr(name, Attribute::Type::kTensor);
  if (!a) node.fail(std::string("WeightOnlyMatMul lacks tensor attribute '") + name + "'");
  return a->t;
}

// One column's weights [k] as floats: (q - zero point) * scale per block.
template <bool Signed>
void dequantize_scalar(const uint8_t* q, int64_t k, int64_t block, const float* scale, const float* zp, float* out) {
  for (int64_t i = 0; i < k; ++i) {
    const float v = Signed ? static_cast<float>(static_cast<int8_t>(q[i])) : static_cast<float>(q[i]);
    out[i] = (v - zp[i / block]) * scale[i / block];
  }
}

template <bool Signed>
__attribute__((target("avx2,fma"))) void dequantize_avx2(const uint8_t* q, int64_t k, int64_t block, const float* scale,
                                                         const float* zp, float* out) {
  for (int64_t b0 = 0, bi = 0; b0 < k; b0 += block, ++bi) {
    const int64_t b1 = std::min(k, b0 + block);
    const __m256 vs = _mm256_set1_ps(scale[bi]), vz = _mm256_set1_ps(zp[bi]);
    int64_t i = b0;
    for (; i + 8 <= b1; i += 8) {
      const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(q + i));
      const __m256i ints = Signed ? _mm256_cvtepi8_epi32(bytes) : _mm256_cvtepu8_epi32(bytes);
      _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_sub_ps(_mm256_cvtepi32_ps(ints), vz), vs));
    }
    for (; i < b1; ++i) {
      const float v = Signed ? static_cast<float>(static_cast<int8_t>(q[i])) : static_cast<float>(q[i]);
      out[i] = (v - zp[bi]) * scale[bi];
    }
  }
}

float dot_scalar(const float* a, const float* b, int64_t k) {
  float s = 0;
  for (int64_t i = 0; i < k; ++i) s = std::fma(a[i], b[i], s);
  return s;
}

__attribute__((target("avx2,fma"))) float dot_avx2(const float* a, const float* b, int64_t k) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= k; i += 16) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
  }
  for (; i + 8 <= k; i += 8) s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
  const __m256 s = _mm256_add_ps(s0, s1);
  __m128 h = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
  h = _mm_add_ps(h, _mm_movehl_ps(h, h));
  h = _mm_add_ss(h, _mm_movehdup_ps(h));
  float r = _mm_cvtss_f32(h);
  for (; i < k; ++i) r = std::fma(a[i], b[i], r);
  return r;
}

constexpr int64_t kGemmRows = 16;  // from this many rows of X on, tiles go through refrt's GEMM
constexpr int64_t kTile = 64;      // columns per dequantized tile

class WeightOnlyMatMulKernel : public Kernel {
 public:
  explicit WeightOnlyMatMulKernel(const NodeDef& node)
      : node_(node), block_(node.attr_int("block_size", 0)), gemm_(node.attr_int("gemm", 0) != 0) {
    const Tensor& w = tensor_attr(node, "w");
    const Tensor& scale = tensor_attr(node, "w_scale");
    if (w.rank() != 2 || (w.dtype() != DType::kInt8 && w.dtype() != DType::kUInt8))
      node.fail("weights must be 2-D int8/uint8, got " + dtype_name(w.dtype()) + " " + shape_str(w.shape()));
    k_ = w.dim(0), n_ = w.dim(1);
    blocks_ = block_ > 0 ? (k_ + block_ - 1) / block_ : 0;
    if (block_ <= 0 || scale.dtype() != DType::kFloat32 || scale.shape() != Shape{blocks_, n_})
      node.fail("scale must be float32 [" + std::to_string(blocks_) + ", " + std::to_string(n_) + "] for block " +
                std::to_string(block_) + ", got " + shape_str(scale.shape()));
    signed_ = w.dtype() == DType::kInt8;
    // Column-major repack: column n's K bytes contiguous; its qparams per block contiguous.
    q_.resize(static_cast<size_t>(k_ * n_));
    const auto* src = static_cast<const uint8_t*>(w.raw());
    for (int64_t kk = 0; kk < k_; ++kk)
      for (int64_t j = 0; j < n_; ++j) q_[static_cast<size_t>(j * k_ + kk)] = src[kk * n_ + j];
    scale_.resize(static_cast<size_t>(blocks_ * n_));
    zp_.assign(static_cast<size_t>(blocks_ * n_), 0.0f);
    const Attribute* zp = node.attr("w_zero_point", Attribute::Type::kTensor);
    if (zp && (zp->t.dtype() != w.dtype() || zp->t.shape() != scale.shape()))
      node.fail("zero point must be " + dtype_name(w.dtype()) + " " + shape_str(scale.shape()));
    for (int64_t b = 0; b < blocks_; ++b)
      for (int64_t j = 0; j < n_; ++j) {
        const size_t at = static_cast<size_t>(j * blocks_ + b), from = static_cast<size_t>(b * n_ + j);
        scale_[at] = scale.data<float>()[from];
        if (zp)
          zp_[at] = signed_ ? static_cast<float>(zp->t.data<int8_t>()[from])
                            : static_cast<float>(zp->t.data<uint8_t>()[from]);
      }
    if (const Attribute* b = node.attr("bias", Attribute::Type::kTensor)) {
      if (b->t.dtype() != DType::kFloat32 || b->t.numel() != n_)
        node.fail("bias must be float32 of " + std::to_string(n_));
      bias_.assign(b->t.data<float>(), b->t.data<float>() + n_);
    }
    avx2_ = isa_level() >= IsaLevel::kAvx2;
    impl_ = intern_impl(std::string("refrt weight-only ") + (signed_ ? "int8" : "uint8") + " block " +
                        std::to_string(block_) + (avx2_ ? " (avx2)" : " (scalar)"));
  }

  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    if (x.dtype() != DType::kFloat32) node_.fail("input must be float32, got " + dtype_name(x.dtype()));
    if (x.rank() < (gemm_ ? 2 : 1) || x.shape().back() != k_ || (gemm_ && x.rank() != 2))
      node_.fail("input " + shape_str(x.shape()) + " does not end in the weights' K = " + std::to_string(k_));
    const int64_t m = x.numel() / std::max<int64_t>(k_, 1);
    Shape out = x.shape();
    if (x.rank() == 1)
      out = {n_};
    else
      out.back() = n_;
    Tensor y(DType::kFloat32, out);
    const float* px = x.data<float>();
    float* py = y.data<float>();
    io.impl = impl_;
    if (m >= kGemmRows && k_ > 0) {
      const int64_t tiles = (n_ + kTile - 1) / kTile;
      parallel_for(io, tiles, 1, [&](int64_t t0, int64_t t1) {
        float* tile = scratch<float>(static_cast<size_t>(kTile * k_), ScratchSlot::kWeightOnly);
        for (int64_t t = t0; t < t1; ++t) {
          const int64_t c0 = t * kTile, cols = std::min(kTile, n_ - c0);
          for (int64_t j = 0; j < cols; ++j) dequantize(c0 + j, tile + j * k_);
          gemm<float>(false, true, m, cols, k_, 1.0f, px, k_, tile, k_, 0.0f, py + c0, n_);
        }
      });
    } else {
      parallel_for(io, n_, std::max<int64_t>(1, 4096 / std::max<int64_t>(k_, 1)), [&](int64_t j0, int64_t j1) {
        float* strip = scratch<float>(static_cast<size_t>(std::max<int64_t>(k_, 1)), ScratchSlot::kWeightOnly);
        for (int64_t j = j0; j < j1; ++j) {
          dequantize(j, strip);
          for (int64_t r = 0; r < m; ++r)
            py[r * n_ + j] = avx2_ ? dot_avx2(px + r * k_, strip, k_) : dot_scalar(px + r * k_, strip, k_);
        }
      });
    }
    if (!bias_.empty())
      for (int64_t r = 0; r < m; ++r)
        for (int64_t j = 0; j < n_; ++j) py[r * n_ + j] += bias_[static_cast<size_t>(j)];
    io.outputs[0] = std::move(y);
  }

  double flops(const KernelIO& io) const override {
    return 2.0 * static_cast<double>(io.in(0).numel()) * static_cast<double>(n_);
  }

 private:
  void dequantize(int64_t j, float* out) const {
    const uint8_t* q = q_.data() + j * k_;
    const float* s = scale_.data() + j * blocks_;
    const float* z = zp_.data() + j * blocks_;
    if (avx2_)
      signed_ ? dequantize_avx2<true>(q, k_, block_, s, z, out) : dequantize_avx2<false>(q, k_, block_, s, z, out);
    else
      signed_ ? dequantize_scalar<true>(q, k_, block_, s, z, out) : dequantize_scalar<false>(q, k_, block_, s, z, out);
  }

  NodeDef node_;
  int64_t k_ = 0, n_ = 0, block_ = 0, blocks_ = 0;
  bool gemm_ = false, signed_ = true, avx2_ = false;
  std::vector<uint8_t> q_;
  std::vector<float> scale_, zp_, bias_;
  std::string_view impl_;
};

}  // namespace

PARITY_FUSED_KERNEL("WeightOnlyMatMul", WeightOnlyMatMulKernel, {DType::kFloat32});

}  // namespace parity::refrt
