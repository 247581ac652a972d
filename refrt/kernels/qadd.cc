// QAdd (private domain, optimize/fuse_qdq_activation.h): the 8-bit residual sum
//   y = QuantizeLinear([Relu](DequantizeLinear(a) + DequantizeLinear(b)))
// with per-tensor scales and zero points, element by element in the float32 steps of those nodes (each
// DequantizeLinear's float(x - zp) * scale, the float32 sum, Relu as x < 0 ? 0 : x, the float32 quotient by
// y's scale rounded half to even, plus the zero point, saturated): the values of the unfused plan, bit for bit,
// without its three float tensors. Broadcasting as Add (numpy rules); the common equal-shape case runs AVX-512.
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "parity/refrt/cpu_isa.h"
#include "quantize_common.h"

namespace parity::refrt {
namespace {

struct Side {
  float scale = 1;
  int32_t zp = 0;
  DType type = DType::kUInt8;
};

Side side(const NodeDef& n, const std::string& s) {
  return {n.attr_float(s + "_scale", 1), static_cast<int32_t>(n.attr_int(s + "_zero_point", 0)),
          static_cast<DType>(n.attr_int(s + "_dtype", 2))};
}

inline int32_t byte_value(const uint8_t* p, int64_t i, bool is_signed) {
  return is_signed ? static_cast<int8_t>(p[i]) : p[i];
}

struct Params {
  Side a, b, y;
  bool relu = false;
  float lo = 0, hi = 255;
};

// One element, as the unfused nodes compute it.
inline uint8_t one(const Params& p, int32_t a, int32_t b) {
  float v = static_cast<float>(a - p.a.zp) * p.a.scale + static_cast<float>(b - p.b.zp) * p.b.scale;
  if (p.relu) v = v < 0 ? 0.0f : v;
  float q = v / p.y.scale;
  const float lo = p.lo - static_cast<float>(p.y.zp) - 1, hi = p.hi - static_cast<float>(p.y.zp) + 1;
  q = q >= lo ? (q <= hi ? q : hi) : lo;
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23: rounds half to even for |q| < 2^22
  const float r = ((q + kMagic) - kMagic) + static_cast<float>(p.y.zp);
  const int32_t out = static_cast<int32_t>(r >= p.lo ? (r > p.hi ? p.hi : r) : p.lo);
  return static_cast<uint8_t>(out);
}

__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq"))) int64_t same_shape_avx512(const Params& p,
                                                                                        const uint8_t* a,
                                                                                        const uint8_t* b, uint8_t* y,
                                                                                        int64_t n) {
  const bool sa = p.a.type == DType::kInt8, sb = p.b.type == DType::kInt8;
  const __m512i za = _mm512_set1_epi32(p.a.zp), zb = _mm512_set1_epi32(p.b.zp);
  const __m512 ma = _mm512_set1_ps(p.a.scale), mb = _mm512_set1_ps(p.b.scale), ys = _mm512_set1_ps(p.y.scale);
  const __m512 zero = _mm512_setzero_ps(), zy = _mm512_set1_ps(static_cast<float>(p.y.zp));
  const __m512 lo = _mm512_set1_ps(p.lo), hi = _mm512_set1_ps(p.hi);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i ra = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i));
    const __m128i rb = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i));
    const __m512i ia = sa ? _mm512_cvtepi8_epi32(ra) : _mm512_cvtepu8_epi32(ra);
    const __m512i ib = sb ? _mm512_cvtepi8_epi32(rb) : _mm512_cvtepu8_epi32(rb);
    // Two float32 products, then their sum: no FMA (the unfused nodes round each step).
    const __m512 fa = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(ia, za)), ma);
    const __m512 fb = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(ib, zb)), mb);
    __m512 v = _mm512_add_ps(fa, fb);
    if (p.relu) v = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, zero, _CMP_LT_OQ), v, zero);
    __m512 q = _mm512_roundscale_ps(_mm512_div_ps(v, ys), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    q = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(q, zy), lo), hi);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(q)));
  }
  return i;
}

class QAddKernel : public Kernel {
 public:
  explicit QAddKernel(const NodeDef& node) : node_(node) {
    p_.a = side(node, "a");
    p_.b = side(node, "b");
    p_.y = side(node, "y");
    p_.relu = node.attr_int("relu", 0) != 0;
    if (!(p_.y.scale > 0)) node.fail("QAdd needs a positive y_scale");
    int64_t lo = 0, hi = 0;
    quant::int_range(p_.y.type, lo, hi);
    p_.lo = static_cast<float>(lo);
    p_.hi = static_cast<float>(hi);
  }

  void compute(KernelIO& io) const override {
    const Tensor& a = io.in(0);
    const Tensor& b = io.in(1);
    if (a.dtype() != p_.a.type || b.dtype() != p_.b.type)
      node_.fail("input dtypes " + dtype_name(a.dtype()) + ", " + dtype_name(b.dtype()) +
                 " differ from the fused DequantizeLinear's " + dtype_name(p_.a.type) + ", " + dtype_name(p_.b.type));
    const Shape out = broadcast_shapes(a.shape(), b.shape(), &node_);
    Tensor y(p_.y.type, out);
    const auto* pa = static_cast<const uint8_t*>(a.raw());
    const auto* pb = static_cast<const uint8_t*>(b.raw());
    auto* py = static_cast<uint8_t*>(y.mutable_raw());
    const bool sa = p_.a.type == DType::kInt8, sb = p_.b.type == DType::kInt8;
    if (a.shape() == b.shape()) {
      parallel_for(io, y.numel(), 1 << 15, [&](int64_t i0, int64_t i1) {
        int64_t i = i0;
        if (kAvx512) i += same_shape_avx512(p_, pa + i0, pb + i0, py + i0, i1 - i0);
        for (; i < i1; ++i) py[i] = one(p_, byte_value(pa, i, sa), byte_value(pb, i, sb));
      });
    } else {  // broadcast: each output index mapped to its elements of a and b
      const size_t r = out.size();
      auto strides = [&](const Shape& s) {
        std::vector<int64_t> st(r, 0);
        int64_t step = 1;
        for (size_t d = s.size(); d-- > 0;) {
          if (s[d] != 1) st[r - s.size() + d] = step;
          step *= s[d];
        }
        return st;
      };
      const std::vector<int64_t> st_a = strides(a.shape()), st_b = strides(b.shape());
      std::vector<int64_t> idx(r, 0);
      for (int64_t i = 0; i < y.numel(); ++i) {
        int64_t ia = 0, ib = 0;
        for (size_t d = 0; d < r; ++d) {
          ia += idx[d] * st_a[d];
          ib += idx[d] * st_b[d];
        }
        py[i] = one(p_, byte_value(pa, ia, sa), byte_value(pb, ib, sb));
        for (size_t d = r; d-- > 0;) {
          if (++idx[d] < out[d]) break;
          idx[d] = 0;
        }
      }
    }
    io.impl = kAvx512 ? "refrt qadd (avx512)" : "refrt qadd";
    io.outputs[0] = std::move(y);
  }

 private:
  const bool kAvx512 = isa_allows(IsaLevel::kAvx512);
  NodeDef node_;
  Params p_;
};

}  // namespace

PARITY_FUSED_KERNEL("QAdd", QAddKernel, {DType::kUInt8, DType::kInt8});

}  // namespace parity::refrt
