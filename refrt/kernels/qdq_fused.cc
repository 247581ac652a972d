// The fused QDQ nodes of optimize/fuse_qdq.cc (private domain com.parity.refrt): QConv and QGemm run
//   DequantizeLinear(x) -> Conv / MatMul / Gemm (DequantizeLinear(int8 weights), bias) [-> Relu / Clip]
//   -> QuantizeLinear
// as one integer product (qgemm.h, exact int32 sums) and a requantization epilogue:
//   y = clamp(rint(sum * x_scale * w_scale[c] / y_scale + y_zero_point + bias[c] / y_scale), lo, hi)
// in float32 (quant::requantize_f32). The unfused chain computes the same real number through other float32
// steps, so the two agree but where rounding puts the value next to a .5 tie (then by one step). Relu folds exactly
// into lo = max(lo, y_zero_point) (QuantizeLinear is monotonic and maps 0 to the zero point); Clip(a, b) into [Q(a),
// Q(b)]. The weights are the node's tensor attributes, widened and packed once here. A float island after the node
// (DequantizeLinear -> Gelu / SiLU / ... -> QuantizeLinear, optimize/fuse_qdq_activation.h) comes as a 256-entry
// table ("lut"): each block of requantized bytes is looked up while it is in cache, and the output has the table's
// type; the profile label ends in " + lookup(<ops>)".
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "../src/activation.h"
#include "../src/scratch.h"
#include "matmul_dnnl.h"
#include "qconv_dnnl.h"
#include "qlinear_conv.h"
#include "qlookup.h"
#include "quantize_common.h"

namespace parity::refrt {
namespace {

const Tensor& tensor_attr(const NodeDef& node, const char* name) {
  const Attribute* a = node.attr(name, Attribute::Type::kTensor);
  if (!a) node.fail(std::string("fused QDQ node lacks tensor attribute '") + name + "'");
  return a->t;
}

// What the epilogue needs, per output channel: multiplier, offset, and the clamp bounds.
struct Requant {
  std::vector<float> mult, offset;
  float lo = 0, hi = 0;
  DType out = DType::kUInt8;
  DType x_type = DType::kUInt8;
  int32_t x_zp = 0;
};

Requant parse_requant(const NodeDef& node, int64_t channels) {
  Requant r;
  const float xs = node.attr_float("x_scale", 0), ys = node.attr_float("y_scale", 0);
  r.x_zp = static_cast<int32_t>(node.attr_int("x_zero_point", 0));
  r.x_type = static_cast<DType>(node.attr_int("x_dtype", 2));
  r.out = static_cast<DType>(node.attr_int("y_dtype", 2));
  const int32_t yz = static_cast<int32_t>(node.attr_int("y_zero_point", 0));
  const Tensor& ws = tensor_attr(node, "w_scale");
  const Tensor* bias = node.attr("bias", Attribute::Type::kTensor) ? &tensor_attr(node, "bias") : nullptr;
  r.mult.resize(static_cast<size_t>(channels));
  r.offset.resize(r.mult.size());
  for (int64_t c = 0; c < channels; ++c) {
    const double w = ws.data<float>()[ws.numel() == 1 ? 0 : c];
    // In double, then rounded once to float32.
    r.mult[static_cast<size_t>(c)] = static_cast<float>(static_cast<double>(xs) * w / static_cast<double>(ys));
    r.offset[static_cast<size_t>(c)] =
        static_cast<float>(yz + (bias ? static_cast<double>(bias->data<float>()[c]) / static_cast<double>(ys) : 0.0));
  }
  int64_t lo = 0, hi = 0;
  quant::int_range(r.out, lo, hi);
  r.lo = static_cast<float>(lo);
  r.hi = static_cast<float>(hi);
  // QuantizeLinear of a bound, as the unfused Q computes it (float32 quotient, rint, zero point).
  auto q = [&](float v) { return std::clamp(std::nearbyint(v / ys) + static_cast<float>(yz), r.lo, r.hi); };
  if (node.attr_int("relu", 0)) r.lo = std::max(r.lo, static_cast<float>(yz));
  if (const Attribute* a = node.attr("clip_min", Attribute::Type::kFloat)) r.lo = std::max(r.lo, q(a->f));
  if (const Attribute* a = node.attr("clip_max", Attribute::Type::kFloat)) r.hi = std::min(r.hi, q(a->f));
  return r;
}

std::vector<int32_t> int_values(const Tensor& t) {
  std::vector<int32_t> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[static_cast<size_t>(i)] = quant::int_at(t, i);
  return v;
}

// row[0, n) += base[0, n) modulo 2^32 (AVX2 where the CPU has it: one pass per row of sums, in cache).
__attribute__((target("avx2"))) int64_t add_base_avx2(int32_t* row, const uint32_t* base, int64_t n) {
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    __m256i* p = reinterpret_cast<__m256i*>(row + j);
    _mm256_storeu_si256(
        p, _mm256_add_epi32(_mm256_loadu_si256(p), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(base + j))));
  }
  return j;
}

void add_base(int32_t* row, const uint32_t* base, int64_t n) {
  int64_t j = qgemm::uses_avx2() ? add_base_avx2(row, base, n) : 0;
  for (; j < n; ++j) row[j] = static_cast<int32_t>(static_cast<uint32_t>(row[j]) + base[j]);
}

void check_x(const NodeDef& node, const Tensor& x, DType want) {
  if (x.dtype() != want)
    node.fail("input dtype " + dtype_name(x.dtype()) + " differs from the fused DequantizeLinear's " +
              dtype_name(want));
}

class QConvKernel : public Kernel {
 public:
  explicit QConvKernel(const NodeDef& node)
      : node_(node),
        attrs_(nn::parse_window_attrs(node)),
        group_(node.attr_int("group", 1)),
        weights_(
            qconv::widen_weights(node, tensor_attr(node, "w"), int_values(tensor_attr(node, "w_zero_point")), group_)),
        rq_(parse_requant(node, weights_.m)),
        lut_(qlookup::parse(node)) {
    if (matmul_dnnl::int8_enabled())
      onednn_.set(tensor_attr(node, "w"), int_values(tensor_attr(node, "w_zero_point")), group_);
  }

  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    check_x(node_, x, rq_.x_type);
    const nn::WindowGeometry g = qconv::conv_geometry(node_, attrs_, group_, x, weights_);
    if (g.rank() > 2) return compute_via_sums(io, x);
    Shape out{x.dim(0), weights_.m};
    out.insert(out.end(), g.out.begin(), g.out.end());
    Tensor y(out_type(), out);
    const int64_t m = weights_.m, plane = g.out_size();
    const size_t esize = dtype_size(rq_.out);
    uint8_t* py = static_cast<uint8_t*>(y.mutable_raw());
    // oneDNN's exact int8 convolution (VNNI / AMX): each block's rows of sums requantized per channel.
    if (onednn_.defined() &&
        onednn_.run(io, g, x, rq_.x_zp, out_type(), py,
                    [&](int64_t c0, int64_t cols, int64_t rows, const int32_t* sums, uint8_t* out) {
                      // Runs of `span` rows at once, the channels' parameters repeated along them (one call
                      // per row cost more than the requantization on 16-channel rows).
                      const int64_t span = std::max<int64_t>(1, 512 / cols);
                      std::vector<float> mult(static_cast<size_t>(span * cols)), offset(mult.size());
                      for (int64_t i = 0; i < span * cols; ++i) {
                        mult[static_cast<size_t>(i)] = rq_.mult[static_cast<size_t>(c0 + i % cols)];
                        offset[static_cast<size_t>(i)] = rq_.offset[static_cast<size_t>(c0 + i % cols)];
                      }
                      for (int64_t r = 0; r < rows; r += span) {
                        const int64_t n = std::min(span, rows - r) * cols;
                        quant::requantize_row_f32(sums + r * cols, n, mult.data(), offset.data(), true, rq_.lo, rq_.hi,
                                                  rq_.out, out + r * cols);
                        if (lut_.defined) qlookup::apply(lut_, out + r * cols, n);
                      }
                    })) {
      if (lut_.defined) io.impl = qlookup::label(lut_, io.impl);
      io.outputs[0] = std::move(y);
      return;
    }
    // Each tile's sums are requantized while they are in cache.
    if (!weights_.taps.empty()) {
      qconv::nhwc_conv(io, g, x, rq_.x_zp, weights_.taps,
                       [&](int64_t image, int64_t o0, int rows, int64_t c0, int64_t cols, const int32_t* sums) {
                         quant::requantize_tile_f32(sums, rows, cols, &rq_.mult[static_cast<size_t>(c0)],
                                                    &rq_.offset[static_cast<size_t>(c0)], rq_.lo, rq_.hi, rq_.out,
                                                    py + static_cast<size_t>((image * m + c0) * plane + o0) * esize,
                                                    plane);
                       });
      finish(io, y);
      return;
    }
    qconv::panel_conv(io, g, group_, x, rq_.x_zp, weights_, nullptr,
                      [&](int64_t row, int64_t j0, const int32_t* sums, int64_t cols) {
                        const size_t c = static_cast<size_t>(row % m);
                        quant::requantize_row_f32(sums, cols, &rq_.mult[c], &rq_.offset[c], false, rq_.lo, rq_.hi,
                                                  rq_.out, py + static_cast<size_t>(row * plane + j0) * esize);
                      });
    finish(io, y);
  }

  DType out_type() const { return lut_.defined ? lut_.out : rq_.out; }

  // The table over the whole output, for the paths that write it in scattered tiles.
  void finish(KernelIO& io, Tensor& y) const {
    if (lut_.defined) {
      auto* p = static_cast<uint8_t*>(y.mutable_raw());
      parallel_for(io, y.numel(), 1 << 16, [&](int64_t i0, int64_t i1) { qlookup::apply(lut_, p + i0, i1 - i0); });
      io.impl = qlookup::label(lut_, io.impl);
    }
    io.outputs[0] = std::move(y);
  }

  // 3-D and higher convolutions: the int32 sums first, then the requantization.
  void compute_via_sums(KernelIO& io, const Tensor& x) const {
    const Tensor acc = qconv::int_conv(node_, io, attrs_, group_, x, rq_.x_zp, weights_, nullptr);
    Tensor y(out_type(), acc.shape());
    const int64_t m = weights_.m, plane = acc.numel() / std::max<int64_t>(1, acc.dim(0) * m);
    const size_t esize = dtype_size(rq_.out);
    parallel_for(
        io, acc.dim(0) * m, std::max<int64_t>(1, 16384 / std::max<int64_t>(plane, 1)), [&](int64_t r0, int64_t r1) {
          for (int64_t r = r0; r < r1; ++r) {
            const size_t c = static_cast<size_t>(r % m);
            quant::requantize_row_f32(acc.data<int32_t>() + r * plane, plane, &rq_.mult[c], &rq_.offset[c], false,
                                      rq_.lo, rq_.hi, rq_.out,
                                      static_cast<uint8_t*>(y.mutable_raw()) + static_cast<size_t>(r * plane) * esize);
          }
        });
    finish(io, y);
  }
  double flops(const KernelIO& io) const override {
    return 0;  // the integer products are not floating-point operations
  }

 private:
  NodeDef node_;
  nn::WindowAttrs attrs_;
  int64_t group_;
  qconv::ConvWeights weights_;
  Requant rq_;
  qlookup::Table lut_;
  qconv_dnnl::Conv onednn_;
};

// x [..., K] times W (MatMul's [K, N], or Gemm's [N, K] with trans_b) as [M, K] x [K, N].
class QGemmKernel : public Kernel {
 public:
  explicit QGemmKernel(const NodeDef& node) : node_(node) {
    const Tensor& w = tensor_attr(node, "w");
    if (w.rank() != 2 || (w.dtype() != DType::kInt8 && w.dtype() != DType::kUInt8))
      node.fail("fused weights must be 2-D int8/uint8, got " + dtype_name(w.dtype()) + " " + shape_str(w.shape()));
    const bool tb = node.attr_int("trans_b", 0) != 0;
    k_ = tb ? w.dim(1) : w.dim(0);
    n_ = tb ? w.dim(0) : w.dim(1);
    const std::vector<int32_t> zp = int_values(tensor_attr(node, "w_zero_point"));
    dispatch_numeric(w.dtype(), [&](auto tag) {
      using W = decltype(tag);
      packed_ = qgemm::pack_b(w.data<W>(), k_, n_, tb ? 1 : n_, tb ? k_ : 1, zp.data(), zp.size() > 1);
    });
    rq_ = parse_requant(node, n_);
    lut_ = qlookup::parse(node);
    if (matmul_dnnl::int8_enabled()) prepare_onednn(w, tb, zp);
  }

  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    check_x(node_, x, rq_.x_type);
    if (x.rank() == 0 || x.shape().back() != k_)
      node_.fail("input " + shape_str(x.shape()) + " does not end in the weights' K = " + std::to_string(k_));
    if (onednn_.defined() && compute_onednn(io, x)) return;
    const int64_t m = x.numel() / k_, kp = packed_.kp;
    // The calling thread's scratch (a vector of this size was mmapped and page-faulted on every call).
    int16_t* a = scratch<int16_t>(static_cast<size_t>(m * kp), ScratchSlot::kQConvInput);
    dispatch_numeric(x.dtype(), [&](auto tag) {
      using X = decltype(tag);
      parallel_for(io, m, 64, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) qgemm::widen_row(x.data<X>() + r * k_, k_, rq_.x_zp, a + r * kp);
      });
    });
    Shape out = x.shape();
    out.back() = n_;
    Tensor y(out_type(), out);
    uint8_t* py = static_cast<uint8_t*>(y.mutable_raw());
    // Each tile's sums are requantized (and looked up) while they are in cache (no int32 [M, N] in memory).
    qgemm::gemm_tiles(io, m, a, kp, packed_, [&](int64_t r0, int rows, int64_t c0, int64_t cols, const int32_t* tile) {
      for (int r = 0; r < rows; ++r) {
        uint8_t* row = py + (r0 + r) * n_ + c0;
        quant::requantize_row_f32(tile + r * 16, cols, &rq_.mult[static_cast<size_t>(c0)],
                                  &rq_.offset[static_cast<size_t>(c0)], true, rq_.lo, rq_.hi, rq_.out, row);
        if (lut_.defined) qlookup::apply(lut_, row, cols);
      }
    });
    if (lut_.defined) io.impl = qlookup::label(lut_, io.impl);
    io.outputs[0] = std::move(y);
  }

  DType out_type() const { return lut_.defined ? lut_.out : rq_.out; }

 private:
  // oneDNN's u8 x s8 product (VNNI / AMX: exact int32 sums) on uint8 A' = x (+ 128 for int8 x) and int8
  // B' = w (- 128 for uint8 w), then the zero points as a correction of the sums:
  //   sum_k (a - za)(b - zb) = sum_k a' b' - za' colsum(B') - zb' rowsum(A') + K za' zb'
  // (za' = za + 128 or za, zb' likewise), all exact in int32, so the requantization sees the very sums
  // refrt's own kernel computes.
  void prepare_onednn(const Tensor& w, bool tb, const std::vector<int32_t>& zp) {
    const bool shift = w.dtype() == DType::kUInt8;
    Tensor b(DType::kInt8, w.shape());
    auto* pb = b.data<int8_t>();
    for (int64_t i = 0; i < w.numel(); ++i) pb[i] = static_cast<int8_t>(quant::int_at(w, i) - (shift ? 128 : 0));
    w_zp_.resize(static_cast<size_t>(n_));
    col_sum_.assign(static_cast<size_t>(n_), 0);
    for (int64_t j = 0; j < n_; ++j) {
      w_zp_[static_cast<size_t>(j)] = zp[zp.size() > 1 ? static_cast<size_t>(j) : 0] - (shift ? 128 : 0);
      for (int64_t kk = 0; kk < k_; ++kk) col_sum_[static_cast<size_t>(j)] += pb[tb ? j * k_ + kk : kk * n_ + j];
    }
    w_zp_zero_ = std::all_of(w_zp_.begin(), w_zp_.end(), [](int32_t z) { return z == 0; });
    za_ = rq_.x_zp + (rq_.x_type == DType::kInt8 ? 128 : 0);
    base_ = correction_base(za_);
    onednn_.set(b, tb, matmul_dnnl::ConstantB::Kind::kInt8);
  }

  // The sums' correction that does not depend on the row: K za' zb' - za' colsum(B'), modulo 2^32.
  std::vector<uint32_t> correction_base(int32_t za) const {
    std::vector<uint32_t> base(static_cast<size_t>(n_));
    for (size_t j = 0; j < base.size(); ++j)
      base[j] = static_cast<uint32_t>(k_) * static_cast<uint32_t>(za) * static_cast<uint32_t>(w_zp_[j]) -
                static_cast<uint32_t>(za) * static_cast<uint32_t>(col_sum_[j]);
    return base;
  }

  bool compute_onednn(KernelIO& io, const Tensor& x) const {
    const int64_t m = x.numel() / k_;
    const bool shift = x.dtype() == DType::kInt8;
    const int32_t za = rq_.x_zp + (shift ? 128 : 0);
    const uint8_t* a = static_cast<const uint8_t*>(x.raw());
    if (shift) {  // int8 x as uint8 x + 128: flip the sign bit
      auto* moved = scratch<uint8_t>(static_cast<size_t>(m * k_), ScratchSlot::kQConvInput);
      parallel_for(io, m * k_, 1 << 16, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) moved[i] = static_cast<uint8_t>(a[i] ^ 0x80);
      });
      a = moved;
    }
    // The sums in this thread's scratch (a fresh [M, N] int32 tensor page-faulted in on every call).
    int32_t* ps = scratch<int32_t>(static_cast<size_t>(m * n_), ScratchSlot::kConvAccumulator);
    if (!onednn_.run(io, m, a, k_, nullptr, ps)) return false;
    Shape out = x.shape();
    out.back() = n_;
    Tensor y(out_type(), out);
    uint8_t* py = static_cast<uint8_t*>(y.mutable_raw());
    const std::string_view impl = io.impl;
    const std::vector<uint32_t>& base = za == za_ ? base_ : correction_base(za);
    parallel_for(io, m, std::max<int64_t>(1, 16384 / std::max<int64_t>(n_, 1)), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        int32_t* row = ps + r * n_;
        if (w_zp_zero_) {
          add_base(row, base.data(), n_);
        } else {
          int32_t row_sum = 0;
          for (int64_t kk = 0; kk < k_; ++kk) row_sum += a[r * k_ + kk];
          for (int64_t j = 0; j < n_; ++j)  // unsigned: wraps modulo 2^32 as the other kernels' int32 sums do
            row[j] = static_cast<int32_t>(static_cast<uint32_t>(row[j]) + base[static_cast<size_t>(j)] -
                                          static_cast<uint32_t>(w_zp_[static_cast<size_t>(j)]) *
                                              static_cast<uint32_t>(row_sum));
        }
        uint8_t* out_row = py + r * n_;
        quant::requantize_row_f32(row, n_, rq_.mult.data(), rq_.offset.data(), true, rq_.lo, rq_.hi, rq_.out, out_row);
        if (lut_.defined) qlookup::apply(lut_, out_row, n_);
      }
    });
    io.impl = lut_.defined ? qlookup::label(lut_, impl) : impl;
    io.outputs[0] = std::move(y);
    return true;
  }

  NodeDef node_;
  int64_t k_ = 0, n_ = 0;
  qgemm::PackedB packed_;
  Requant rq_;
  qlookup::Table lut_;
  matmul_dnnl::ConstantB onednn_;
  std::vector<int32_t> w_zp_, col_sum_;
  bool w_zp_zero_ = true;
  int32_t za_ = 0;              // the input's zero point as oneDNN's uint8 sees it
  std::vector<uint32_t> base_;  // correction_base(za_)
};

}  // namespace

PARITY_FUSED_KERNEL("QConv", QConvKernel, {DType::kUInt8, DType::kInt8});
PARITY_FUSED_KERNEL("QGemm", QGemmKernel, {DType::kUInt8, DType::kInt8});

}  // namespace parity::refrt
