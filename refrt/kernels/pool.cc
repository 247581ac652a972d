// MaxPool (optional Indices), AveragePool (count_include_pad), GlobalAveragePool, GlobalMaxPool,
// LpPool, over 1-D to 3-D windows with strides, dilations, pads, auto_pad and ceil_mode.
#include <algorithm>
#include <cmath>
#include <utility>
#include <limits>

#include "../src/dispatch.h"
#include "spatial.h"

namespace parity::refrt {
namespace {

enum class PoolKind { kMax, kAverage, kLp };

class PoolKernel : public Kernel {
 public:
  PoolKernel(const NodeDef& node, PoolKind kind)
      : node_(node), attrs_(node), kind_(kind),
        count_include_pad_(node.attr_int("count_include_pad", 0) != 0),
        storage_order_(node.attr_int("storage_order", 0)),
        p_(node.attr_int("p", 2)) {
    if (attrs_.kernel_shape.empty()) node.fail("kernel_shape is required");
    if (storage_order_ != 0 && storage_order_ != 1) node.fail("storage_order must be 0 or 1");
  }
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    if (is_float16_like(x.dtype())) return with_float32(io, x.dtype(), [&](KernelIO& f) { compute(f); });
    const Window w = attrs_.resolve(node_, x.shape());
    Tensor out(x.dtype(), w.out_shape(x.dim(0), x.dim(1)));
    const bool want_indices = io.outputs.size() > 1 && kind_ == PoolKind::kMax;
    Tensor indices = want_indices ? Tensor(DType::kInt64, out.shape()) : Tensor();
    if (!dispatch_float(x.dtype(), [&](auto tag) { run<decltype(tag)>(io, x, w, out, want_indices ? &indices : nullptr); }))
      node_.fail("dtype " + dtype_name(x.dtype()) + " is not implemented", ErrorKind::kUnsupported);
    io.outputs[0] = std::move(out);
    if (want_indices) io.outputs[1] = std::move(indices);
  }

 private:
  // Kernel taps [lo, hi) of one output position along one dim whose input index lands in [from, to).
  static std::pair<int64_t, int64_t> taps(int64_t base, int64_t dil, int64_t k, int64_t from, int64_t to) {
    int64_t lo = base >= from ? 0 : (from - base + dil - 1) / dil;
    int64_t hi = base >= to ? 0 : std::min(k, (to - base + dil - 1) / dil);
    return {lo, std::max(lo, hi)};
  }

  template <typename T>
  void run(const KernelIO& io, const Tensor& x, const Window& w, Tensor& out, Tensor* indices) const {
    const int64_t planes = x.dim(0) * x.dim(1);
    const T* px = x.data<T>();
    T* py = out.data<T>();
    int64_t* pi = indices ? indices->data<int64_t>() : nullptr;
    parallel_for(io, planes, 1, [&](int64_t begin, int64_t end) {
      for (int64_t plane = begin; plane < end; ++plane) {
        const T* src = px + plane * w.in_size();
        int64_t o = plane * w.out_size();
        for (int64_t od = 0; od < w.out[0]; ++od) {
          const int64_t bd = od * w.stride[0] - w.pad_begin[0];
          const auto [d0, d1] = taps(bd, w.dilation[0], w.kernel[0], 0, w.in[0]);
          const auto [pd0, pd1] = taps(bd, w.dilation[0], w.kernel[0], -w.pad_begin[0], w.in[0] + w.pad_end[0]);
          for (int64_t oh = 0; oh < w.out[1]; ++oh) {
            const int64_t bh = oh * w.stride[1] - w.pad_begin[1];
            const auto [h0, h1] = taps(bh, w.dilation[1], w.kernel[1], 0, w.in[1]);
            const auto [ph0, ph1] = taps(bh, w.dilation[1], w.kernel[1], -w.pad_begin[1], w.in[1] + w.pad_end[1]);
            for (int64_t ow = 0; ow < w.out[2]; ++ow, ++o) {
              const int64_t bw = ow * w.stride[2] - w.pad_begin[2];
              const auto [w0, w1] = taps(bw, w.dilation[2], w.kernel[2], 0, w.in[2]);
              if (kind_ == PoolKind::kMax) {
                T best_v = -std::numeric_limits<T>::infinity();
                int64_t best = -1;
                bool nan = false;
                for (int64_t a = d0; a < d1; ++a)
                  for (int64_t b = h0; b < h1; ++b) {
                    const int64_t line = ((bd + a * w.dilation[0]) * w.in[1] + bh + b * w.dilation[1]) * w.in[2];
                    for (int64_t e = w0; e < w1; ++e) {
                      const int64_t idx = line + bw + e * w.dilation[2];
                      const T v = src[idx];
                      nan |= v != v;
                      if (best < 0 || v > best_v) {  // first maximum wins ties
                        best_v = v;
                        best = idx;
                      }
                    }
                  }
                py[o] = nan ? std::numeric_limits<T>::quiet_NaN() : best_v;
                if (pi) pi[o] = flat_index(plane, best, w);
                continue;
              }
              double acc = 0;
              for (int64_t a = d0; a < d1; ++a)
                for (int64_t b = h0; b < h1; ++b) {
                  const int64_t line = ((bd + a * w.dilation[0]) * w.in[1] + bh + b * w.dilation[1]) * w.in[2];
                  for (int64_t e = w0; e < w1; ++e) {
                    const double v = static_cast<double>(src[line + bw + e * w.dilation[2]]);
                    acc += kind_ == PoolKind::kAverage ? v : std::pow(std::fabs(v), static_cast<double>(p_));
                  }
                }
              if (kind_ == PoolKind::kLp) {
                py[o] = static_cast<T>(std::pow(acc, 1.0 / static_cast<double>(p_)));
                continue;
              }
              // count_include_pad counts taps in the padding (not beyond it); otherwise only real ones.
              int64_t count = (d1 - d0) * (h1 - h0) * (w1 - w0);
              if (count_include_pad_) {
                const auto [pw0, pw1] = taps(bw, w.dilation[2], w.kernel[2], -w.pad_begin[2], w.in[2] + w.pad_end[2]);
                count = (pd1 - pd0) * (ph1 - ph0) * (pw1 - pw0);
              }
              py[o] = static_cast<T>(acc / static_cast<double>(std::max<int64_t>(count, 1)));
            }
          }
        }
      }
    });
  }

  // ONNX Indices: flattened over (N, C, spatial); storage_order 1 = column-major spatial dims.
  int64_t flat_index(int64_t plane, int64_t idx, const Window& w) const {
    if (idx < 0) return -1;
    int64_t spatial = idx;
    if (storage_order_ == 1) {
      const int64_t h = idx / w.in[2] % w.in[1], ww = idx % w.in[2], d = idx / (w.in[1] * w.in[2]);
      spatial = (ww * w.in[1] + h) * w.in[0] + d;
    }
    return plane * w.in_size() + spatial;
  }

  NodeDef node_;
  WindowAttrs attrs_;
  PoolKind kind_;
  bool count_include_pad_;
  int64_t storage_order_, p_;
};

struct MaxPoolKernel : PoolKernel {
  explicit MaxPoolKernel(const NodeDef& n) : PoolKernel(n, PoolKind::kMax) {}
};
struct AveragePoolKernel : PoolKernel {
  explicit AveragePoolKernel(const NodeDef& n) : PoolKernel(n, PoolKind::kAverage) {}
};
struct LpPoolKernel : PoolKernel {
  explicit LpPoolKernel(const NodeDef& n) : PoolKernel(n, PoolKind::kLp) {}
};

// Global pools: one value per (N, C) over every spatial position; spatial dims kept as 1.
template <bool kMax>
class GlobalPoolKernel : public Kernel {
 public:
  explicit GlobalPoolKernel(const NodeDef& node) : node_(node) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    if (is_float16_like(x.dtype())) return with_float32(io, x.dtype(), [&](KernelIO& f) { compute(f); });
    if (x.rank() < 3) node_.fail("input must be [N, C, D1..Dn], got " + shape_str(x.shape()));
    Shape shape{x.dim(0), x.dim(1)};
    int64_t size = 1;
    for (size_t d = 2; d < x.rank(); ++d) {
      shape.push_back(1);
      size *= x.dim(d);
    }
    Tensor out(x.dtype(), shape);
    if (!dispatch_float(x.dtype(), [&](auto tag) {
          using T = decltype(tag);
          const T* px = x.data<T>();
          T* py = out.data<T>();
          for (int64_t p = 0; p < out.numel(); ++p) {
            double acc = kMax ? -std::numeric_limits<double>::infinity() : 0.0;
            for (int64_t i = 0; i < size; ++i) {
              const double v = static_cast<double>(px[p * size + i]);
              acc = kMax ? (std::isnan(v) || std::isnan(acc) ? std::numeric_limits<double>::quiet_NaN() : std::max(acc, v)) : acc + v;
            }
            py[p] = static_cast<T>(kMax ? acc : acc / static_cast<double>(size));
          }
        }))
      node_.fail("dtype " + dtype_name(x.dtype()) + " is not implemented", ErrorKind::kUnsupported);
    io.outputs[0] = std::move(out);
  }

 private:
  NodeDef node_;
};

}  // namespace

// MaxPool 8: Indices output and storage_order; 10: ceil_mode and dilations; 11: pads semantics; 12: int8/uint8.
PARITY_KERNEL("MaxPool", 8, MaxPoolKernel, kFloatTypes16);
PARITY_KERNEL("MaxPool", 10, MaxPoolKernel, kFloatTypes16);
PARITY_KERNEL("MaxPool", 11, MaxPoolKernel, kFloatTypes16);
PARITY_KERNEL("MaxPool", 12, MaxPoolKernel, kFloatTypes16);
// AveragePool 7: count_include_pad; 10: ceil_mode; 11: pads; 19: dilations.
PARITY_KERNEL("AveragePool", 7, AveragePoolKernel, kFloatTypes16);
PARITY_KERNEL("AveragePool", 10, AveragePoolKernel, kFloatTypes16);
PARITY_KERNEL("AveragePool", 11, AveragePoolKernel, kFloatTypes16);
PARITY_KERNEL("AveragePool", 19, AveragePoolKernel, kFloatTypes16);
PARITY_KERNEL("LpPool", 11, LpPoolKernel, kFloatTypes16);
PARITY_KERNEL("LpPool", 18, LpPoolKernel, kFloatTypes16);
PARITY_KERNEL("GlobalAveragePool", 1, GlobalPoolKernel<false>, kFloatTypes16);
PARITY_KERNEL("GlobalMaxPool", 1, GlobalPoolKernel<true>, kFloatTypes16);

}  // namespace parity::refrt
