// MatMulInteger and QLinearMatMul (ai.onnx): numpy-matmul of 8-bit tensors (batch dims broadcast, 1-D
// operands promoted) minus their zero points, summed exactly in int32 (qgemm.h). MatMulInteger returns
// the int32 sums; QLinearMatMul requantizes them as the ONNX reference does:
//   y = saturate(rint(sum * (a_scale * b_scale / y_scale) + y_zero_point)),
// the multiplier computed in the scales' type, the product and the rounding in double.
// Zero points of A: per tensor (ONNX Runtime also refuses per-row ones); of B: per tensor or per column.
#include <algorithm>

#include "qgemm.h"
#include "quantize_common.h"

namespace parity::refrt {
namespace {

bool is_8bit(DType t) { return t == DType::kInt8 || t == DType::kUInt8; }

using quant::zero_points;

// Element offsets of every output batch in A and B (broadcast batch dims, size-1 dims repeat).
void batch_offsets(const Shape& a, const Shape& b, const Shape& out, int64_t a_mat, int64_t b_mat,
                   std::vector<int64_t>& ao, std::vector<int64_t>& bo) {
  const size_t r = out.size();
  int64_t total = 1;
  for (int64_t d : out) total *= d;
  ao.assign(static_cast<size_t>(total), 0);
  bo.assign(static_cast<size_t>(total), 0);
  for (int64_t i = 0; i < total; ++i) {
    int64_t rest = i, sa = a_mat, sb = b_mat, oa = 0, ob = 0;
    for (size_t d = r; d-- > 0;) {
      const int64_t idx = rest % out[d];
      rest /= out[d];
      const size_t da = a.size() - (r - d), db = b.size() - (r - d);
      const int64_t ea = d + a.size() >= r ? a[da] : 1, eb = d + b.size() >= r ? b[db] : 1;
      if (ea != 1) oa += idx * sa;
      if (eb != 1) ob += idx * sb;
      sa *= ea;
      sb *= eb;
    }
    ao[static_cast<size_t>(i)] = oa;
    bo[static_cast<size_t>(i)] = ob;
  }
}

// The int32 product of a (minus a_zp) and b (minus b_zp per column or tensor), shaped as numpy.matmul.
Tensor int_matmul(const NodeDef& node, const KernelIO& io, const Tensor& a, int32_t a_zp, const Tensor& b,
                  const std::vector<int32_t>& b_zp) {
  if (!is_8bit(a.dtype()) || !is_8bit(b.dtype()))
    node.fail("inputs " + dtype_name(a.dtype()) + " x " + dtype_name(b.dtype()) + " are not supported (int8, uint8)",
              ErrorKind::kUnsupported);
  if (a.rank() == 0 || b.rank() == 0) node.fail("operands must have rank >= 1");
  Shape as = a.shape(), bs = b.shape();
  if (as.size() == 1) as.insert(as.begin(), 1);
  if (bs.size() == 1) bs.push_back(1);
  const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  if (bs[bs.size() - 2] != k) node.fail("inner dims differ: A " + shape_str(a.shape()) + ", B " + shape_str(b.shape()));
  if (b_zp.size() > 1 && static_cast<int64_t>(b_zp.size()) != n)
    node.fail("per-column zero point needs " + std::to_string(n) + " values");
  const Shape batch = broadcast_shapes(Shape(as.begin(), as.end() - 2), Shape(bs.begin(), bs.end() - 2), &node);
  std::vector<int64_t> ao, bo;
  batch_offsets(Shape(as.begin(), as.end() - 2), Shape(bs.begin(), bs.end() - 2), batch, m * k, k * n, ao, bo);
  Shape out = batch;
  if (a.rank() > 1) out.push_back(m);
  if (b.rank() > 1) out.push_back(n);
  Tensor y(DType::kInt32, out);
  const int64_t kp = qgemm::even(k);
  std::vector<int16_t> a16(static_cast<size_t>(m * kp));
  qgemm::PackedB packed;
  int64_t packed_at = -1;
  for (size_t i = 0; i < ao.size(); ++i) {
    dispatch_numeric(a.dtype(), [&](auto za) {
      using A = decltype(za);
      for (int64_t r = 0; r < m; ++r) qgemm::widen_row(a.data<A>() + ao[i] + r * k, k, a_zp, a16.data() + r * kp);
    });
    if (packed_at != bo[i]) {
      dispatch_numeric(b.dtype(), [&](auto zb) {
        using B = decltype(zb);
        packed = qgemm::pack_b(b.data<B>() + bo[i], k, n, n, 1, b_zp.data(), b_zp.size() > 1);
      });
      packed_at = bo[i];
    }
    qgemm::gemm(io, m, a16.data(), kp, packed, y.data<int32_t>() + static_cast<int64_t>(i) * m * n, n);
  }
  return y;
}

class MatMulIntegerKernel : public Kernel {
 public:
  explicit MatMulIntegerKernel(const NodeDef& node) : node_(node) {}
  void compute(KernelIO& io) const override {
    const Tensor& a = io.in(0);
    const Tensor& b = io.in(1);
    const auto za = zero_points(node_, io.optional(2), a.dtype(), -1, "a_zero_point");
    const auto zb =
        zero_points(node_, io.optional(3), b.dtype(), b.shape().empty() ? 1 : b.shape().back(), "b_zero_point");
    io.outputs[0] = int_matmul(node_, io, a, za[0], b, zb);
  }
  double flops(const KernelIO& io) const override {
    const Tensor& a = io.in(0);
    return 2.0 * static_cast<double>(a.numel()) * static_cast<double>(io.in(1).shape().back());
  }

 private:
  NodeDef node_;
};

bool is_scale(DType t) { return t == DType::kFloat32 || t == DType::kFloat16 || t == DType::kBFloat16; }

class QLinearMatMulKernel : public Kernel {
 public:
  explicit QLinearMatMulKernel(const NodeDef& node) : node_(node) {}
  void compute(KernelIO& io) const override {
    const Tensor& a = io.in(0);
    const Tensor& b = io.in(3);
    const Tensor &as = io.in(1), &bs = io.in(4), &ys = io.in(6);
    const Tensor* yz = io.optional(7);
    for (const Tensor* s : {&as, &bs, &ys})
      if (!is_scale(s->dtype()) || s->dtype() != as.dtype())
        node_.fail("scales must share one float type (float32, float16, bfloat16), got " + dtype_name(s->dtype()),
                   ErrorKind::kUnsupported);
    const int64_t n = b.shape().empty() ? 1 : b.shape().back();
    if (as.numel() != 1 || ys.numel() != 1) node_.fail("a_scale and y_scale must be scalars");
    if (bs.numel() != 1 && (bs.rank() != 1 || bs.numel() != n))
      node_.fail("b_scale must be a scalar or 1-D of size " + std::to_string(n) + ", got " + shape_str(bs.shape()));
    const auto za = zero_points(node_, io.optional(2), a.dtype(), -1, "a_zero_point");
    const auto zb = zero_points(node_, io.optional(5), b.dtype(), n, "b_zero_point");
    const DType out = yz ? yz->dtype() : a.dtype();
    if (!is_8bit(out))
      node_.fail("y_zero_point dtype " + dtype_name(out) + " is not supported (int8, uint8)", ErrorKind::kUnsupported);
    const auto zy = zero_points(node_, yz, out, -1, "y_zero_point");
    const Tensor acc = int_matmul(node_, io, a, za[0], b, zb);
    std::vector<double> mult(static_cast<size_t>(bs.numel())), offset(mult.size(), zy[0]);
    for (int64_t j = 0; j < bs.numel(); ++j) {
      const float ab = quant::round_to(quant::float_at(as, 0) * quant::float_at(bs, j), as.dtype());
      mult[static_cast<size_t>(j)] = quant::round_to(ab / quant::float_at(ys, 0), as.dtype());
    }
    int64_t lo = 0, hi = 0;
    quant::int_range(out, lo, hi);
    Tensor y(out, acc.shape());
    const int64_t cols = acc.rank() > 0 && b.rank() > 1 ? n : 1;
    quant::requantize_block(acc.data<int32_t>(), acc.numel() / std::max<int64_t>(cols, 1), cols, mult, offset, false,
                            out, static_cast<double>(lo), static_cast<double>(hi), y.mutable_raw());
    io.outputs[0] = std::move(y);
  }

 private:
  NodeDef node_;
};

}  // namespace

PARITY_KERNEL("MatMulInteger", 10, MatMulIntegerKernel, {DType::kUInt8, DType::kInt8});
// 21: float16 / bfloat16 scales (and float8 inputs, which refrt does not store).
PARITY_KERNEL("QLinearMatMul", 10, QLinearMatMulKernel, {DType::kUInt8, DType::kInt8});
PARITY_KERNEL("QLinearMatMul", 21, QLinearMatMulKernel, {DType::kUInt8, DType::kInt8});

}  // namespace parity::refrt
