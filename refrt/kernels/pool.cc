// Pools over [N, C, D1, ...]: MaxPool (dilations, ceil_mode, storage_order, optional Indices),
// AveragePool (count_include_pad, ceil_mode, dilations), LpPool and the Global* pools.
// Every (n, c) plane is pooled independently; a window visits the precomputed kernel offsets and
// skips those that fall in the padding.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "../src/scratch.h"
#include "max_pool_rows.h"
#include "nn_common.h"

namespace parity::refrt {
namespace {

using nn::WindowGeometry;

enum class PoolKind { kMax, kAverage, kLp };

// The windows of one plane, computed once per call and shared by every (n, c) plane: for output o,
// offsets[begin[o] .. begin[o+1]) are the in-plane offsets of its window positions inside the input,
// and padded_count[o] counts its positions inside the padded input (for count_include_pad).
struct WindowTable {
  std::vector<int64_t> begin, offsets, padded_count;
};

WindowTable window_table(const WindowGeometry& g) {
  const size_t r = g.rank();
  const int64_t ksize = g.kernel_size(), out_size = g.out_size();
  std::vector<int64_t> kd(r * static_cast<size_t>(ksize));  // kernel offsets (dilated), per position
  for (int64_t k = 0; k < ksize; ++k)
    for (int64_t rest = k, d = static_cast<int64_t>(r) - 1; d >= 0; --d) {
      const size_t u = static_cast<size_t>(d);
      kd[static_cast<size_t>(k) * r + u] = (rest % g.kernel[u]) * g.dilation[u];
      rest /= g.kernel[u];
    }
  WindowTable t;
  t.begin.reserve(static_cast<size_t>(out_size) + 1);
  t.offsets.reserve(static_cast<size_t>(out_size * ksize));
  t.padded_count.reserve(static_cast<size_t>(out_size));
  std::vector<int64_t> start(r);
  for (int64_t o = 0; o < out_size; ++o) {
    for (int64_t rest = o, d = static_cast<int64_t>(r) - 1; d >= 0; --d) {
      const size_t u = static_cast<size_t>(d);
      start[u] = (rest % g.out[u]) * g.stride[u] - g.pad_begin[u];
      rest /= g.out[u];
    }
    t.begin.push_back(static_cast<int64_t>(t.offsets.size()));
    int64_t padded_count = 0;
    for (int64_t k = 0; k < ksize; ++k) {
      bool inside = true, inside_padded = true;
      int64_t off = 0;
      for (size_t u = 0; u < r; ++u) {
        const int64_t i = start[u] + kd[static_cast<size_t>(k) * r + u];
        inside = inside && i >= 0 && i < g.in[u];
        inside_padded = inside_padded && i >= -g.pad_begin[u] && i < g.in[u] + g.pad_end[u];
        off = off * g.in[u] + i;
      }
      padded_count += inside_padded;
      if (inside) t.offsets.push_back(off);
    }
    t.padded_count.push_back(padded_count);
  }
  t.begin.push_back(static_cast<int64_t>(t.offsets.size()));
  return t;
}

// Column-major (storage_order=1) offset of a row-major in-plane offset.
int64_t column_major_offset(const WindowGeometry& g, int64_t off) {
  int64_t out = 0, scale = 1;
  std::vector<int64_t> idx(g.rank());
  for (int64_t d = static_cast<int64_t>(g.rank()) - 1; d >= 0; --d) {
    idx[static_cast<size_t>(d)] = off % g.in[static_cast<size_t>(d)];
    off /= g.in[static_cast<size_t>(d)];
  }
  for (size_t d = 0; d < g.rank(); ++d) {
    out += idx[d] * scale;
    scale *= g.in[d];
  }
  return out;
}

class PoolKernel : public Kernel {
 public:
  PoolKernel(const NodeDef& node, PoolKind kind, bool global)
      : node_(node),
        kind_(kind),
        global_(global),
        attrs_(global ? nn::WindowAttrs{} : nn::parse_window_attrs(node)),
        count_include_pad_(node.attr_int("count_include_pad", 0) != 0),
        storage_order_(node.attr_int("storage_order", 0)),
        p_(lp_order(node)) {
    if (!global && attrs_.kernel_shape.empty()) node.fail("kernel_shape is required");
    if (storage_order_ != 0 && storage_order_ != 1) node.fail("storage_order must be 0 or 1");
  }

  void compute(KernelIO& io) const override {
    const DType dt = io.in(0).dtype();
    if (kind_ == PoolKind::kMax && (dt == DType::kInt8 || dt == DType::kUInt8)) {
      if (dt == DType::kInt8)
        run<int8_t>(io);
      else
        run<uint8_t>(io);
      return;
    }
    if (kind_ == PoolKind::kMax && is_float16_like(dt) && io.outputs.size() == 1 && half_max_pool(io)) return;
    nn::run_float(node_, io, dt, [&](auto tag, KernelIO& f) { run<decltype(tag)>(f); });
  }

 private:
  static double lp_order(const NodeDef& node) {
    if (node.op_type != "LpPool" && node.op_type != "GlobalLpPool") return 2;
    const Attribute* a = node.attr("p");
    if (!a) return 2;
    if (a->type == Attribute::Type::kFloat) return a->f;  // opset 1: float p
    return static_cast<double>(node.attr_int("p", 2));
  }

  // The window geometry of X's spatial dims (checked).
  WindowGeometry geometry(const Tensor& x) const {
    if (x.rank() < 3) node_.fail("X must be [N, C, D1, ...], got " + shape_str(x.shape()));
    const std::vector<int64_t> in = nn::spatial_dims(x.shape());
    if (global_) {
      const std::vector<int64_t> ones(in.size(), 1), zeros(in.size(), 0);
      return WindowGeometry{in, ones, in, ones, ones, zeros, zeros};
    }
    if (attrs_.kernel_shape.size() != in.size())
      node_.fail("kernel_shape " + shape_str(attrs_.kernel_shape) + " does not match spatial rank " +
                 std::to_string(in.size()));
    return nn::forward_geometry(node_, attrs_, in, attrs_.kernel_shape, true);
  }

  // 2-D MaxPool of float16 / bfloat16 X without indices, plane by plane: each plane widened into scratch (exactly),
  // pooled as float32 and narrowed back, which is exact for a max; the whole-tensor widened path made two
  // tensor-sized float32 copies (ResNet-18's float16 stem pool 1.15 ms against 0.52 in float32). false: not this
  // geometry.
  bool half_max_pool(KernelIO& io) const {
    const Tensor& x = io.in(0);
    const WindowGeometry g = geometry(x);
    if (g.rank() != 2) return false;
    Shape out_shape{x.dim(0), x.dim(1), g.out[0], g.out[1]};
    Tensor y(x.dtype(), out_shape);
    const int64_t planes = x.dim(0) * x.dim(1), in_size = g.in_size(), out_size = g.out_size();
    const auto* px = static_cast<const uint16_t*>(x.raw());
    auto* py = static_cast<uint16_t*>(y.mutable_raw());
    if (out_size > 0)
      parallel_for(io, planes, 1, [&](int64_t begin, int64_t end) {
        float* in = scratch<float>(in_size + out_size, ScratchSlot::kPoolPlane);
        float* out = in + in_size;
        for (int64_t p = begin; p < end; ++p) {
          widen_span(x.dtype(), px + p * in_size, in, in_size);
          if (!max_pool_rows::plane(g, in, out)) max_pool_plane_2d<float>(g, in, out);  // a NaN: the exact path
          narrow_span(x.dtype(), out, py + p * out_size, out_size);
        }
      });
    io.outputs[0] = std::move(y);
    return true;
  }

  template <typename T>
  void run(KernelIO& io) const {
    const Tensor& x = io.in(0);
    const WindowGeometry g = geometry(x);
    Shape out_shape{x.dim(0), x.dim(1)};
    out_shape.insert(out_shape.end(), g.out.begin(), g.out.end());
    Tensor y(x.dtype(), out_shape);
    const bool want_indices = io.outputs.size() > 1;
    Tensor indices = want_indices ? Tensor(DType::kInt64, out_shape) : Tensor();
    const int64_t planes = x.dim(0) * x.dim(1), in_size = g.in_size(), out_size = g.out_size();
    const T* px = x.data<T>();
    T* py = y.data<T>();
    int64_t* pi = want_indices ? indices.data<int64_t>() : nullptr;
    if (out_size > 0 && kind_ == PoolKind::kMax && !want_indices && g.rank() == 2 && std::is_floating_point_v<T>) {
      parallel_for(io, planes, 1, [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
          if constexpr (std::is_same_v<T, float>)  // planes without NaN: separable and vectorised
            if (max_pool_rows::plane(g, px + p * in_size, py + p * out_size)) continue;
          max_pool_plane_2d<T>(g, px + p * in_size, py + p * out_size);
        }
      });
    } else if (out_size > 0) {
      const WindowTable table = window_table(g);
      parallel_for(io, planes, 1, [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p)
          pool_plane<T>(table, px + p * in_size, py + p * out_size, pi ? pi + p * out_size : nullptr, p * in_size, g);
      });
    }
    io.outputs[0] = std::move(y);
    if (want_indices) io.outputs[1] = std::move(indices);
  }

  // 2-D MaxPool without indices: per output row, each kernel tap is a strided pass over the row's
  // valid output range (no window table, no per-element bounds test). Same results as pool_plane:
  // NaN in a window gives NaN, a window entirely in the padding gives the lowest value.
  template <typename T>
  static void max_pool_plane_2d(const WindowGeometry& g, const T* plane, T* out) {
    const int64_t ih = g.in[0], iw = g.in[1], oh = g.out[0], ow = g.out[1], kh = g.kernel[0], kw = g.kernel[1];
    const int64_t sh = g.stride[0], sw = g.stride[1], ph = g.pad_begin[0], pw = g.pad_begin[1];
    const int64_t dh = g.dilation[0], dw = g.dilation[1];
    std::vector<int64_t> lo(static_cast<size_t>(kw)), hi(static_cast<size_t>(kw));
    std::vector<uint8_t> col_valid(static_cast<size_t>(ow), 0), nan(static_cast<size_t>(ow));
    for (int64_t b = 0; b < kw; ++b) {
      const int64_t shift = b * dw - pw;
      const int64_t l = shift >= 0 ? 0 : std::min(ow, (-shift + sw - 1) / sw);
      const int64_t h = std::max(l, std::min(ow, iw - shift <= 0 ? 0 : (iw - shift - 1) / sw + 1));
      lo[static_cast<size_t>(b)] = l;
      hi[static_cast<size_t>(b)] = h;
      for (int64_t j = l; j < h; ++j) col_valid[static_cast<size_t>(j)] = 1;
    }
    for (int64_t r = 0; r < oh; ++r) {
      T* dst = out + r * ow;
      std::fill(dst, dst + ow, -std::numeric_limits<T>::infinity());
      std::fill(nan.begin(), nan.end(), uint8_t{0});
      bool any_row = false;
      for (int64_t a = 0; a < kh; ++a) {
        const int64_t i = r * sh - ph + a * dh;
        if (i < 0 || i >= ih) continue;
        any_row = true;
        const T* src = plane + i * iw;
        for (int64_t b = 0; b < kw; ++b) {
          const int64_t shift = b * dw - pw;
          for (int64_t j = lo[static_cast<size_t>(b)]; j < hi[static_cast<size_t>(b)]; ++j) {
            const T v = src[j * sw + shift];
            nan[static_cast<size_t>(j)] |= v != v;
            dst[j] = v > dst[j] ? v : dst[j];
          }
        }
      }
      for (int64_t j = 0; j < ow; ++j) {
        if (!any_row || !col_valid[static_cast<size_t>(j)])
          dst[j] = std::numeric_limits<T>::lowest();
        else if (nan[static_cast<size_t>(j)])
          dst[j] = std::numeric_limits<T>::quiet_NaN();
      }
    }
  }

  template <typename T>
  void pool_plane(const WindowTable& t, const T* plane, T* out, int64_t* indices, int64_t plane_base,
                  const WindowGeometry& g) const {
    const int64_t out_size = static_cast<int64_t>(t.padded_count.size());
    for (int64_t o = 0; o < out_size; ++o) {
      const int64_t* first = t.offsets.data() + t.begin[static_cast<size_t>(o)];
      const int64_t* last = t.offsets.data() + t.begin[static_cast<size_t>(o) + 1];
      if (kind_ == PoolKind::kMax) {
        if (!indices) {  // branch-free: random data makes a data-dependent branch mispredict half the time
          T best = first != last ? plane[*first] : std::numeric_limits<T>::lowest();
          bool nan = false;
          for (const int64_t* it = first; it < last; ++it) {
            const T v = plane[*it];
            nan |= v != v;
            best = v > best ? v : best;
          }
          if constexpr (std::numeric_limits<T>::has_quiet_NaN)
            out[o] = nan ? std::numeric_limits<T>::quiet_NaN() : best;
          else
            out[o] = best;
          continue;
        }
        T best = std::numeric_limits<T>::lowest();
        int64_t arg = -1;
        if (first != last) {
          best = plane[*first];
          arg = *first;
        }
        for (const int64_t* it = first + (first != last); it < last; ++it) {
          const T v = plane[*it];
          // A NaN in the window is the result, as in torch.max_pool (v != v only for NaN).
          if (v > best || (v != v && best == best)) {
            best = v;
            arg = *it;
          }
        }
        out[o] = best;
        if (indices) indices[o] = plane_base + (arg < 0 ? 0 : storage_order_ ? column_major_offset(g, arg) : arg);
      } else if (kind_ == PoolKind::kAverage) {
        double sum = 0;
        for (const int64_t* it = first; it != last; ++it) sum += static_cast<double>(plane[*it]);
        const int64_t count = count_include_pad_ ? t.padded_count[static_cast<size_t>(o)] : last - first;
        out[o] = static_cast<T>(count > 0 ? sum / static_cast<double>(count) : 0.0);
      } else {
        double sum = 0;
        for (const int64_t* it = first; it != last; ++it)
          sum += std::pow(std::abs(static_cast<double>(plane[*it])), p_);
        out[o] = static_cast<T>(std::pow(sum, 1.0 / p_));
      }
    }
  }

  NodeDef node_;
  PoolKind kind_;
  bool global_;
  nn::WindowAttrs attrs_;
  bool count_include_pad_;
  int64_t storage_order_;
  double p_;
};

struct MaxPoolKernel : PoolKernel {
  explicit MaxPoolKernel(const NodeDef& n) : PoolKernel(n, PoolKind::kMax, false) {}
};
struct AveragePoolKernel : PoolKernel {
  explicit AveragePoolKernel(const NodeDef& n) : PoolKernel(n, PoolKind::kAverage, false) {}
};
struct LpPoolKernel : PoolKernel {
  explicit LpPoolKernel(const NodeDef& n) : PoolKernel(n, PoolKind::kLp, false) {}
};
struct GlobalMaxPoolKernel : PoolKernel {
  explicit GlobalMaxPoolKernel(const NodeDef& n) : PoolKernel(n, PoolKind::kMax, true) {}
};
struct GlobalAveragePoolKernel : PoolKernel {
  explicit GlobalAveragePoolKernel(const NodeDef& n) : PoolKernel(n, PoolKind::kAverage, true) {}
};
struct GlobalLpPoolKernel : PoolKernel {
  explicit GlobalLpPoolKernel(const NodeDef& n) : PoolKernel(n, PoolKind::kLp, true) {}
};

const std::vector<DType> kMaxPoolTypes = {DType::kFloat32,  DType::kFloat64, DType::kFloat16,
                                          DType::kBFloat16, DType::kInt8,    DType::kUInt8};

}  // namespace

// MaxPool 8: Indices output and storage_order; 10: dilations, ceil_mode; 11: pads semantics clarified;
// 12: int8/uint8.
PARITY_KERNEL("MaxPool", 1, MaxPoolKernel, kFloatTypes16);
PARITY_KERNEL("MaxPool", 8, MaxPoolKernel, kFloatTypes16);
PARITY_KERNEL("MaxPool", 10, MaxPoolKernel, kFloatTypes16);
PARITY_KERNEL("MaxPool", 11, MaxPoolKernel, kFloatTypes16);
PARITY_KERNEL("MaxPool", 12, MaxPoolKernel, kMaxPoolTypes);
// AveragePool 7: count_include_pad; 10: ceil_mode; 11: pads clarified; 19: dilations.
PARITY_KERNEL("AveragePool", 1, AveragePoolKernel, kFloatTypes16);
PARITY_KERNEL("AveragePool", 7, AveragePoolKernel, kFloatTypes16);
PARITY_KERNEL("AveragePool", 10, AveragePoolKernel, kFloatTypes16);
PARITY_KERNEL("AveragePool", 11, AveragePoolKernel, kFloatTypes16);
PARITY_KERNEL("AveragePool", 19, AveragePoolKernel, kFloatTypes16);
// LpPool 2: integer p; 11: pads clarified; 18: ceil_mode, dilations.
PARITY_KERNEL("LpPool", 1, LpPoolKernel, kFloatTypes16);
PARITY_KERNEL("LpPool", 2, LpPoolKernel, kFloatTypes16);
PARITY_KERNEL("LpPool", 11, LpPoolKernel, kFloatTypes16);
PARITY_KERNEL("LpPool", 18, LpPoolKernel, kFloatTypes16);
PARITY_KERNEL("GlobalMaxPool", 1, GlobalMaxPoolKernel, kFloatTypes16);
PARITY_KERNEL("GlobalAveragePool", 1, GlobalAveragePoolKernel, kFloatTypes16);
PARITY_KERNEL("GlobalLpPool", 1, GlobalLpPoolKernel, kFloatTypes16);
PARITY_KERNEL("GlobalLpPool", 2, GlobalLpPoolKernel, kFloatTypes16);

}  // namespace parity::refrt
