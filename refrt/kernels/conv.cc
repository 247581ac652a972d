// Conv (1-D/2-D/3-D and beyond): groups (depthwise included), strides, dilations, pads, auto_pad and
// bias. 2-D convs with few products per output (depthwise, stems) run directly (conv_direct.h); the
// others per image and group: im2col into [C/group * kernel, out], then one GEMM with the group's
// weights [M/group, C/group * kernel]. A 1x1 stride-1 unpadded conv skips im2col (the input is the
// column matrix), and so does a stride-1 conv with outputs >= 56 wide (direct_2d: the GEMM reads a
// zero-padded copy of the input in place).
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <type_traits>
#include <vector>

#include "../src/activation.h"
#include "../src/broadcast.h"
#include "../src/gemm.h"
#include "../src/scratch.h"
#include "../src/thread_pool.h"
#include "conv_depthwise.h"
#include "conv_direct.h"
#include "conv_dnnl.h"
#include "conv_gemm.h"
#include "im2col.h"
#include "parity/refrt/cpu_isa.h"

namespace parity::refrt {
namespace {

// What ran a Conv, for the profile (KernelIO::impl), when it is not oneDNN.
const std::string_view kImplDepthwise = intern_impl("refrt depthwise (avx2)");
const std::string_view kImplDepthwise512 = intern_impl("refrt depthwise (avx512)");
const std::string_view kImplDirect = intern_impl("refrt direct");
const std::string_view kImplInPlace = intern_impl("refrt conv-gemm in place (avx2)");
// " + " joins the backends of one label (gemm.h backend_label): none inside a name.
const std::string_view kImplIm2col = intern_impl("refrt im2col conv-gemm (avx2)");

using nn::WindowGeometry;

// Column chunks of our GEMM: about 1 MiB of packed columns (measured on ResNet-18's 3x3 convs: 384 KiB
// chunks were 5-12 % slower on the 56x56 and 28x28 planes), at least 128 columns.
constexpr int64_t kOwnChunkBytes = int64_t{1024} << 10, kOwnMinColumns = 128;

// PARITY_REFRT_CONV_BLAS=1: 2-D convs use OpenBLAS for every GEMM (the path of CPUs without AVX2+FMA), to
// compare the two on one machine and to test that path.
bool conv_gemm_disabled() {
  static const bool off = [] {
    const char* v = std::getenv("PARITY_REFRT_CONV_BLAS");
    return v != nullptr && *v != '\0' && *v != '0';
  }();
  return off;
}

// Rows per chunk, lowered so that the oh rows make a multiple of `threads` chunks (3 chunks on 2 threads
// would idle one of them a third of the time).
int64_t balanced_rows(int64_t rows_per, int64_t oh, int64_t threads) {
  if (threads <= 1 || rows_per >= oh) return rows_per;
  const int64_t chunks = std::min(oh, ((oh + rows_per - 1) / rows_per + threads - 1) / threads * threads);
  return (oh + chunks - 1) / chunks;
}

class ConvKernel : public Kernel {
 public:
  explicit ConvKernel(const NodeDef& node)
      : node_(node),
        attrs_(nn::parse_window_attrs(node)),
        group_(node.attr_int("group", 1)),
        acts_(parse_activations(node)),
        folded_(!node.fused_from.empty()),
        blocked_inputs_(node.attr_int("blocked_inputs", 0) != 0),
        blocked_output_(node.attr_int("blocked_output", 0) != 0),
        widened_output_(node.attr_int("widened_output", 0) != 0),
        half_values_(node.attr_int("half_values", 0) != 0) {
    if (group_ <= 0) node.fail("group must be positive, got " + std::to_string(group_));
  }

  void compute(KernelIO& io) const override {
    if ((blocked_inputs_ || blocked_output_) && run_blocks(io)) return;
    compute_nchw(io);
  }

  void compute_nchw(KernelIO& io) const {
    // float16/bfloat16: float32 products and sums (constant weights widened once, at prepare), rounded once.
    const DType dtype = io.in(0).dtype();
    if (is_float16_like(dtype) && half_on_onednn(io)) return;
    if (is_float16_like(dtype))
      return with_float32(
          io, dtype, [&](KernelIO& f) { run<float>(f); }, &widened_);
    nn::run_float(node_, io, dtype, [&](auto tag, KernelIO& f) { run<decltype(tag)>(f); });
  }

  void prepare(const std::vector<const Tensor*>& constants) override {
    for (const Tensor* t : constants)
      if (t) widened_.add(*t);
    const Tensor* w = constants.size() > 1 ? constants[1] : nullptr;
    const Tensor* w32 = !w ? nullptr : w->dtype() == DType::kFloat32 ? w : widened_.find(*w);
    if (w32) dnnl_.set_weights(*w32);
    if (w && w->dtype() == DType::kBFloat16) dnnl_bf16_.set_weights(*w);
  }

  double flops(const KernelIO& io) const override {  // 2 * output elements * (C/group * kernel volume)
    const Tensor& w = io.in(1);
    return w.dim(0) == 0 ? 0
                         : 2.0 * static_cast<double>(io.outputs[0].numel()) * static_cast<double>(w.numel() / w.dim(0));
  }

 private:
  // X, W and B agree (ranks, dtypes, channels, groups, kernel_shape); the output geometry.
  WindowGeometry checked_geometry(const Tensor& x, const Tensor& w, const Tensor* b) const {
    return checked_geometry(x.shape(), x.dtype(), w, b);
  }
  WindowGeometry checked_geometry(const Shape& xs, DType xt, const Tensor& w, const Tensor* b) const {
    if (xs.size() < 3) node_.fail("X must be [N, C, D1, ...], got " + shape_str(xs));
    if (w.rank() != xs.size()) node_.fail("W " + shape_str(w.shape()) + " must have the rank of X " + shape_str(xs));
    // float16 X with float32 W and B: weights a BatchNormalization was folded into (optimize/fold_batch_norm.cc).
    const bool folded = folded_ && xt == DType::kFloat16 && w.dtype() == DType::kFloat32;
    if ((w.dtype() != xt && !folded) || (b && b->dtype() != w.dtype())) node_.fail("input dtypes differ");
    const int64_t c = xs[1], m = w.dim(0), cg = w.dim(1);
    if (c != cg * group_)
      node_.fail("X has " + std::to_string(c) + " channels but W " + shape_str(w.shape()) + " with group " +
                 std::to_string(group_) + " expects " + std::to_string(cg * group_));
    if (m % group_ != 0) node_.fail("output channels " + std::to_string(m) + " not divisible by group");
    if (b && (b->rank() != 1 || b->dim(0) != m))
      node_.fail("B must be [" + std::to_string(m) + "], got " + shape_str(b->shape()));
    const std::vector<int64_t> kernel = nn::spatial_dims(w.shape());
    if (!attrs_.kernel_shape.empty() && attrs_.kernel_shape != kernel)
      node_.fail("kernel_shape " + shape_str(attrs_.kernel_shape) + " differs from W's " + shape_str(kernel));
    return nn::forward_geometry(node_, attrs_, nn::spatial_dims(xs), kernel, false);
  }

  // Channel blocks between convolutions (optimize/keep_conv_blocks.cc): X and the added input may arrive as
  // [N, C / B, H, W, B] from the conv before, and Y is written so when every reader of it takes blocks. oneDNN then
  // runs with no layout move; where it cannot (a half X, oneDNN off, a geometry it declines, a broadcast z), blocked
  // inputs are moved back to NCHW for the usual path, whose NCHW Y the readers take as well. false: nothing here
  // is in blocks (the usual path runs).
  bool run_blocks(KernelIO& io) const {
    const Tensor& x = io.in(0);
    const Tensor* z = io.optional(3);
    const bool xb = blocked_inputs_ && x.rank() == 5 && io.in(1).rank() == 4;
    const bool zb = blocked_inputs_ && z && z->rank() == 5;
    for (const Tensor* t : {xb ? &x : nullptr, zb ? z : nullptr})
      if (t && t->dim(4) != conv_dnnl::block_width(t->dim(1) * t->dim(4)))
        node_.fail("an input in channel blocks " + shape_str(t->shape()) + ", not of " +
                   std::to_string(conv_dnnl::block_width(t->dim(1) * t->dim(4))));
    if (blocks_on_onednn(io, xb, zb)) return true;
    if (!xb && !zb) return false;
    Tensor x4 = xb ? conv_dnnl::from_blocks(x, &io) : Tensor();
    Tensor z4 = zb ? conv_dnnl::from_blocks(*z, &io) : Tensor();
    if (half_values_)  // a float16 chain's widened values back to float16 (exact), for the float16 path
      for (Tensor* t : {&x4, &z4})
        if (t->defined() && t->dtype() == DType::kFloat32) *t = narrow_from_float32(*t, DType::kFloat16, &io);
    KernelIO f;
    f.pool = io.pool;
    f.inputs = io.inputs;
    if (xb) f.inputs[0] = &x4;
    if (zb) f.inputs[3] = &z4;
    f.outputs.resize(1);
    compute_nchw(f);
    io.impl = f.impl;
    io.outputs[0] = std::move(f.outputs[0]);
    return true;
  }

  // The conv on oneDNN with X and / or Y in a chain's layout (z moved into Y's layout where it differs): float32, or
  // float16 / bfloat16 X with float32 weights (BatchNormalization folded), widened and rounded as the NCHW path does.
  bool blocks_on_onednn(KernelIO& io, bool xb, bool zb) const {
    // A float16 chain's values may come widened (float32 holding float16 values; keep_conv_blocks): all of X, z and Y
    // go float32 where this conv hands Y on widened, else float16 (exact either way). nullopt: nothing widened here.
    Tensor x_as, z_as;
    const std::optional<DType> half = widened_chain(io);
    if (half) {
      const bool wide = widened_output_;
      const auto as = [&](const Tensor& t) {
        return t.dtype() == (wide ? DType::kFloat32 : *half) ? t
               : wide                                        ? widen_to_float32(t, &io)
                                                             : narrow_from_float32(t, *half, &io);
      };
      x_as = as(io.in(0));
      if (io.optional(3)) z_as = as(*io.optional(3));
    }
    const Tensor& x = x_as.defined() ? x_as : io.in(0);
    const Tensor* b = io.optional(2);
    const Tensor* z = z_as.defined() ? &z_as : io.optional(3);
    const DType dt = x.dtype();
    const DType rounded_to = half && widened_output_ ? *half : DType::kFloat32;
    const Tensor* w32 = as_float32(io.in(1));
    const Tensor* b32 = b ? as_float32(*b) : nullptr;
    if ((dt != DType::kFloat32 && !is_float16_like(dt)) || !w32 || (b && !b32) || (z && z->dtype() != dt)) return false;
    const Shape xs = xb ? Shape{x.dim(0), x.dim(1) * x.dim(4), x.dim(2), x.dim(3)} : x.shape();
    const WindowGeometry g = checked_geometry(xs, dt, io.in(1), b);
    const int64_t n = xs[0], c = xs[1], m = w32->dim(0);
    const bool yb = blocked_output_ && m % 16 == 0 && g.rank() == 2;
    if ((!xb && !yb) || c % 16 != 0 || g.rank() != 2 || !dnnl_.applies(*w32, g, group_, true) || conv_gemm_disabled())
      return false;
    const int64_t bw = conv_dnnl::block_width(m);
    const Shape plain_y{n, m, g.out[0], g.out[1]};
    const Shape out_shape = yb ? Shape{n, m / bw, plain_y[2], plain_y[3], bw} : plain_y;
    Tensor z_moved;
    const Tensor* zy = z;
    if (z && zb != yb && (zb || z->shape() == plain_y))
      zy = &(z_moved = zb ? conv_dnnl::from_blocks(*z, &io) : conv_dnnl::to_blocks(*z, &io));
    if (zy && (zy->shape() != out_shape || zy->dtype() != dt)) return false;
    Tensor y(dt, out_shape);
    const float* pb = b32 ? b32->data<float>() : nullptr;
    const conv_dnnl::Blocks blocks{xb, yb};
    const bool ran =
        y.numel() > 0 &&
        (dt == DType::kFloat32 ? dnnl_.run(io, g, n, c, m, x.data<float>(), pb, zy ? zy->data<float>() : nullptr,
                                           y.data<float>(), acts_, blocks, rounded_to)
                               : dnnl_.run(io, g, n, c, m, dt, x.data<uint16_t>(), pb,
                                           zy ? zy->data<uint16_t>() : nullptr, y.data<uint16_t>(), acts_, blocks));
    if (ran) io.outputs[0] = std::move(y);
    return ran;
  }

  // float16 when this conv is of a float16 chain (half_values: BatchNormalization folded into float32 W, float16 X
  // and Y; optimize/fold_batch_norm.cc) and reads or writes a value widened; nullopt otherwise.
  std::optional<DType> widened_chain(const KernelIO& io) const {
    if (!half_values_) return std::nullopt;
    const Tensor* z = io.optional(3);
    const bool wide_in = io.in(0).dtype() == DType::kFloat32 || (z && z->dtype() == DType::kFloat32);
    return wide_in || widened_output_ ? std::optional(DType::kFloat16) : std::nullopt;
  }

  // A float32 constant as it is, a float16 / bfloat16 one's copy widened at prepare (nullptr: not a constant).
  const Tensor* as_float32(const Tensor& t) const { return t.dtype() == DType::kFloat32 ? &t : widened_.find(t); }

  // float16 / bfloat16 X and a constant W on oneDNN without widening X and narrowing Y as whole tensors: bfloat16
  // on its native convolutions (AMX or AVX-512 BF16), else the float32 convolution on W widened once, X widened
  // as it moves into channel blocks. The same float32 sums as the widened path, Y rounded once. False: the
  // widened path runs (W not a constant, a bias that is not one, z of another shape, a geometry oneDNN skips).
  bool half_on_onednn(KernelIO& io) const {
    const Tensor& x = io.in(0);
    const Tensor& w = io.in(1);
    const Tensor* b = io.optional(2);
    const Tensor* z = io.optional(3);
    const WindowGeometry g = checked_geometry(x, w, b);
    const Tensor* b32 = b ? as_float32(*b) : nullptr;
    const Tensor* w32 = as_float32(w);
    const conv_dnnl::Conv* conv = dnnl_bf16_.applies(w, g, group_)        ? &dnnl_bf16_
                                  : w32 && dnnl_.applies(*w32, g, group_) ? &dnnl_
                                                                          : nullptr;
    if (!conv || conv_gemm_disabled() || (b && !b32)) return false;
    const int64_t n = x.dim(0), c = x.dim(1), m = w.dim(0);
    Shape out_shape{n, m};
    out_shape.insert(out_shape.end(), g.out.begin(), g.out.end());
    if (z && (z->dtype() != x.dtype() || z->shape() != out_shape)) return false;
    Tensor y(x.dtype(), out_shape);
    if (y.numel() == 0) return false;
    if (!conv->run(io, g, n, c, m, x.dtype(), x.data<uint16_t>(), b32 ? b32->data<float>() : nullptr,
                   z ? z->data<uint16_t>() : nullptr, y.data<uint16_t>(), acts_))
      return false;
    io.outputs[0] = std::move(y);
    return true;
  }

  // The specialised paths, each with the epilogue included, in order of preference: depthwise on small
  // planes, oneDNN, direct loops, our GEMM reading the input in place, row chunks. False: none applies.
  template <typename T>
  bool specialised(KernelIO& io, const WindowGeometry& g, const Tensor& w, int64_t n, int64_t c, int64_t m,
                   bool pointwise, bool z_ok, const T* px, const T* pb, const T* pz, T* py, int64_t numel) const {
    const T* pw = w.data<T>();
    const int64_t cg = w.dim(1);
    if constexpr (std::is_same_v<T, float>) {
      // Rows narrower than 12 outputs fill too little of a 16-lane vector: there the AVX2 path, 8 channels per
      // vector, is faster where it applies (MobileNetV3's 576-channel 5x5 on 7x7: 78 against 86 us, best of 4).
      if (conv_depthwise::applies_avx512(g, c, m, group_) && z_ok && !conv_gemm_disabled() &&
          (g.out[1] >= 12 || !conv_depthwise::applies(g, c, m, group_))) {
        io.impl = kImplDepthwise512;
        conv_depthwise::run_avx512(io, g, n, c, px, pw, pb, pz, py, acts_);
        return true;
      }
      if (conv_depthwise::applies(g, c, m, group_) && z_ok && !conv_gemm_disabled()) {  // small planes
        io.impl = kImplDepthwise;
        conv_depthwise::run(io, g, n, c, px, pw, pb, pz, py, acts_);
        return true;
      }
      if (conv_depthwise::applies_avx2_phases(g, c, m, group_) && z_ok && !conv_gemm_disabled()) {  // larger ones
        io.impl = kImplDepthwise;
        conv_depthwise::run_avx2_phases(io, g, n, c, px, pw, pb, pz, py, acts_);
        return true;
      }
      if (dnnl_.applies(w, g, group_) && !conv_gemm_disabled() && z_ok && numel > 0 &&
          dnnl_.run(io, g, n, c, m, px, pb, pz, py, acts_))
        return true;
      if (pointwise && group_ == 1 && z_ok && numel > 0 && pointwise_on_sgemm()) {
        pointwise_sgemm(io, n, c, m, g.out_size(), px, pw, pb, pz, py);
        return true;
      }
      if (strided_pointwise(g) && group_ == 1 && z_ok && numel > 0 && pointwise_on_sgemm()) {
        const Tensor sampled = subsample(io, g, n * c, px);
        pointwise_sgemm(io, n, c, m, g.out_size(), sampled.data<float>(), pw, pb, pz, py);
        return true;
      }
    }
    // Depthwise (and, without our GEMM, small stems): no GEMM. With it, a 3-channel 3x3 stem is faster
    // as a GEMM of K = 27 (MobileNetV3-small's 3 -> 16 stride-2 stem: 237 us against 300 us direct).
    const bool own_gemm_ok = std::is_same_v<T, float> && conv_gemm::available() && !conv_gemm_disabled();
    if (conv_direct::applies(g, cg) && z_ok && (cg == 1 || !own_gemm_ok)) {
      io.impl = kImplDirect;
      conv_direct::run<T>(io, g, n, c, m, group_, px, pw, pb, pz, py, acts_);
      return true;
    }
    if constexpr (std::is_same_v<T, float>) {
      if (own_gemm_ok && direct_applies(g, cg, pointwise) && z_ok && numel > 0) {
        io.impl = kImplInPlace;
        direct_2d(io, g, n, c, m, cg, px, pw, pb, pz, py);
        return true;
      }
    }
    if (g.rank() == 2 && cg > 1 && z_ok && numel > 0) {
      chunked_2d(io, g, n, c, m, cg, pointwise, px, pw, pb, pz, py);  // names what ran its products
      return true;
    }
    return false;
  }

  // Any rank and group: im2col into [C/group * kernel, out] per image and group, one GEMM with the
  // group's weights (no epilogue).
  template <typename T>
  void im2col_gemm(const KernelIO& io, const WindowGeometry& g, int64_t n, int64_t c, int64_t m, int64_t cg,
                   bool pointwise, const T* px, const T* pw, T* py) const {
    const int64_t out_size = g.out_size(), in_size = g.in_size(), ksize = g.kernel_size(), mg = m / group_;
    const int64_t col_rows = cg * ksize;
    // Uninitialised: im2col writes every element (zeroing megabytes per call is measurable).
    std::unique_ptr<T[]> col(pointwise ? nullptr : new T[static_cast<size_t>(checked_numel({col_rows, out_size}))]);
    BackendSet ran = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t gi = 0; gi < group_; ++gi) {
        const T* xg = px + (i * c + gi * cg) * in_size;
        T* yg = py + (i * m + gi * mg) * out_size;
        const T* cols = xg;
        if (!pointwise) {  // channels in parallel; the GEMM runs outside parallel_for (BLAS has its threads)
          parallel_for(io, cg, 1, [&](int64_t c0, int64_t c1) {
            nn::im2col(g, c1 - c0, xg + c0 * in_size, col.get() + c0 * ksize * out_size);
          });
          cols = col.get();
        }
        ran |= backend_bit(gemm<T>(node_, false, false, mg, out_size, col_rows, T(1), pw + gi * mg * col_rows, col_rows,
                                   cols, out_size, T(0), yg, out_size));
      }
    note_backends(io, ran);
  }

  // A 1x1 convolution is Y = W X per image, NCHW as it is: on AVX-512 CPUs oneDNN's sgemm (AVX-512 kernels)
  // beats refrt's AVX2 conv GEMM, with no layout change (MobileNetV3-small's 26 pointwise convs on 7x7 to
  // 56x56 planes, Intel Xeon with AVX-512, 1 thread: 1.43 -> 1.01 ms). Columns split over the pool.
  static bool pointwise_on_sgemm() {
    static const bool on = sgemm_on_onednn() && isa_allows(IsaLevel::kAvx512);
    return on;
  }
  void pointwise_sgemm(const KernelIO& io, int64_t n, int64_t c, int64_t m, int64_t plane, const float* px,
                       const float* pw, const float* pb, const float* pz, float* py) const {
    BackendSet ran = 0;
    for (int64_t i = 0; i < n; ++i)
      ran |= pool_gemm<float>(io, false, false, m, plane, c, 1.0f, pw, c, px + i * c * plane, plane, 0.0f,
                              py + i * m * plane, plane);
    note_backends(io, ran);
    epilogue<float>(io, n * m, m, plane, pb, pz, true, py);
  }

  // A 2-D 1x1 convolution with strides and no padding (ResNet's downsampling shortcuts): the pointwise product on
  // X's sampled pixels. Its im2col path ran refrt's AVX2 GEMM at 36-45 GFLOP/s (ResNet-18's 64 -> 128 on 56x56:
  // 282-363 us, ONNX Runtime 142-198).
  static bool strided_pointwise(const WindowGeometry& g) {
    if (g.rank() != 2 || g.kernel_size() != 1) return false;
    for (size_t d = 0; d < 2; ++d)
      if (g.pad_begin[d] != 0 || g.pad_end[d] != 0) return false;
    return g.stride[0] > 1 || g.stride[1] > 1;
  }
  // The pixels a strided 1x1 kernel reads, plane by plane: [planes, out_h * out_w] (im2col of a 1x1 kernel), over
  // the pool.
  static Tensor subsample(const KernelIO& io, const WindowGeometry& g, int64_t planes, const float* px) {
    Tensor out(DType::kFloat32, {planes, g.out_size()});
    float* po = out.data<float>();
    parallel_for(io, planes, 8, [&](int64_t p0, int64_t p1) {
      nn::im2col(g, p1 - p0, px + p0 * g.in_size(), po + p0 * g.out_size());
    });
    return out;
  }

  // Bias, the added input of Y's shape and (when `activate`) the activations: one pass per output plane.
  template <typename T>
  void epilogue(const KernelIO& io, int64_t planes, int64_t m, int64_t out_size, const T* pb, const T* pz,
                bool activate, T* py) const {
    if (!pb && !pz && acts_.empty()) return;
    parallel_for(io, planes, 16, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        T* row = py + i * out_size;
        if (pb) {
          const T bias = pb[i % m];
          for (int64_t j = 0; j < out_size; ++j) row[j] += bias;
        }
        if (pz) {
          const T* zr = pz + i * out_size;
          for (int64_t j = 0; j < out_size; ++j) row[j] += zr[j];
        }
        if (activate) apply_activations(acts_, row, out_size);
      }
    });
  }

  template <typename T>
  void run(KernelIO& io) const {
    const Tensor& x = io.in(0);
    const Tensor& w = io.in(1);
    const Tensor* b = io.optional(2);
    const WindowGeometry g = checked_geometry(x, w, b);
    const int64_t n = x.dim(0), c = x.dim(1), m = w.dim(0), cg = w.dim(1);
    Shape out_shape{n, m};
    out_shape.insert(out_shape.end(), g.out.begin(), g.out.end());
    Tensor y(x.dtype(), out_shape);
    bool pointwise = g.kernel_size() == 1;
    for (size_t d = 0; d < g.rank(); ++d)
      pointwise = pointwise && g.stride[d] == 1 && g.pad_begin[d] == 0 && g.pad_end[d] == 0;
    const T* px = x.data<T>();
    T* py = y.data<T>();
    const T* pb = b ? b->data<T>() : nullptr;
    // FusedConv's optional input 3: a tensor added after the bias (a residual connection).
    const Tensor* z = io.optional(3);
    if (z && z->dtype() != x.dtype()) node_.fail("the added input's dtype differs from X's");
    const bool z_same = z && z->shape() == out_shape;
    const T* pz = z_same ? z->data<T>() : nullptr;
    if (specialised<T>(io, g, w, n, c, m, pointwise, !z || z_same, px, pb, pz, py, y.numel())) {
      io.outputs[0] = std::move(y);
      return;
    }
    if (cg == 1 && !pointwise)
      depthwise(io, g, n, c, m / group_, px, w.data<T>(), py);
    else if (y.numel() > 0)
      im2col_gemm(io, g, n, c, m, cg, pointwise, px, w.data<T>(), py);
    epilogue(io, n * m, m, g.out_size(), pb, pz, !z || z_same, py);
    if (z && !z_same) {  // an added input of another shape: numpy broadcasting, then the activations
      const auto plan = plan_broadcast<2>({&y.shape(), &z->shape()}, node_);
      Tensor sum(x.dtype(), plan.out);
      const T* pz2 = z->data<T>();
      T* ps = sum.data<T>();
      for_each_broadcast(plan, [&](int64_t o, const std::array<int64_t, 2>& k) { ps[o] = py[k[0]] + pz2[k[1]]; });
      apply_activations(acts_, ps, sum.numel());
      y = std::move(sum);
    }
    io.outputs[0] = std::move(y);
  }

  // One input channel per group (depthwise, with any channel multiplier): a direct loop, as a
  // GEMM with one row per group would spend its time in im2col. Each output plane is independent.
  template <typename T>
  void depthwise(const KernelIO& io, const WindowGeometry& g, int64_t n, int64_t c, int64_t mg, const T* px,
                 const T* pw, T* py) const {
    const size_t r = g.rank();
    const int64_t in_size = g.in_size(), out_size = g.out_size(), ksize = g.kernel_size(), m = c * mg;
    const int64_t out_last = g.out[r - 1], in_last = g.in[r - 1], s = g.stride[r - 1];
    const int64_t pb = g.pad_begin[r - 1], dil = g.dilation[r - 1];
    parallel_for(io, n * m, 1, [&](int64_t begin, int64_t end) {
      for (int64_t plane = begin; plane < end; ++plane) {
        const int64_t i = plane / m, o = plane % m, gi = o / mg;
        const T* x = px + (i * c + gi) * in_size;
        const T* wk = pw + o * ksize;
        T* y = py + plane * out_size;
        std::fill(y, y + out_size, T(0));
        nn::for_each_column_row(g, 1, [&](int64_t, int64_t in_off, int64_t k_last, int64_t k, int64_t out_off) {
          if (in_off < 0) return;
          const T weight = wk[k];
          T* dst = y + out_off;
          const int64_t shift = k_last * dil - pb;
          // Outputs whose tap lands inside the row: lo <= o < hi.
          const int64_t lo = shift >= 0 ? 0 : (-shift + s - 1) / s;
          const int64_t hi = std::min(out_last, in_last - shift <= 0 ? 0 : (in_last - shift - 1) / s + 1);
          const T* row = x + in_off;
          if (s == 1) {  // unit stride: a contiguous multiply-add the compiler vectorizes
            const T* src = row + lo + shift;
            for (int64_t j = 0; j < hi - lo; ++j) dst[lo + j] += weight * src[j];
          } else {
            for (int64_t j = lo; j < hi; ++j) dst[j] += weight * row[j * s + shift];
          }
        });
      }
    });
  }

  // How chunked_2d splits a 2-D conv: output rows per chunk, chunks, output-channel blocks per chunk, and
  // for each kernel column b the output columns [lo[b], hi[b]) whose input column is inside the row.
  struct ChunkPlan {
    bool pointwise = false, own_gemm = false, same_rows = false;
    int64_t col_rows = 0, rows_per = 0, chunks = 0, m_blocks = 1;
    std::vector<int64_t> lo, hi;
  };

  ChunkPlan plan_chunks(const KernelIO& io, const WindowGeometry& g, int64_t cg, int64_t mg, bool pointwise,
                        bool own_gemm, size_t element_bytes) const {
    const int64_t iw = g.in[1], oh = g.out[0], ow = g.out[1], kw = g.kernel[1], sw = g.stride[1];
    ChunkPlan p;
    p.pointwise = pointwise;
    p.own_gemm = own_gemm;
    p.col_rows = cg * g.kernel[0] * kw;
    const int64_t threads = io.pool ? io.pool->size() : 1, out_size = oh * ow;
    // Rows per chunk: a column buffer of about 256 KiB, but at least 1024 columns (OpenBLAS packs the
    // whole weight matrix again for every GEMM: with 128-column chunks a 128-channel 3x3 conv on 28x28
    // ran at 53 GFLOP/s, with 1024 at 68, the bare GEMM at 86), and enough chunks for every thread.
    // Our GEMM reads the weights in place (no per-chunk packing): chunks of about kOwnChunkBytes of
    // packed columns, at least kOwnMinColumns columns.
    int64_t rows_per =
        std::max<int64_t>(1, (own_gemm ? kOwnChunkBytes : int64_t{256} << 10) / static_cast<int64_t>(element_bytes) /
                                 std::max<int64_t>(1, p.col_rows * ow));
    rows_per = std::max(rows_per, ((own_gemm ? kOwnMinColumns : int64_t{1024}) + ow - 1) / ow);
    // A small plane (<= 16x16) is one chunk: every chunk streams the whole weight matrix (2.4 MB for a
    // 256-channel 3x3 conv on 14x14, which otherwise ran as chunks of 140 + 56 columns).
    if (own_gemm && out_size <= 256) rows_per = oh;
    rows_per = std::min({rows_per, (oh + threads - 1) / threads, oh});
    if (threads > 1 && rows_per * ow < 128) rows_per = oh;  // small planes: split output channels instead
    p.rows_per = balanced_rows(rows_per, oh, threads);
    p.chunks = (oh + p.rows_per - 1) / p.rows_per;
    // Fewer chunks than threads: each chunk's GEMM is split by output channels over the pool. With our
    // GEMM, one block per thread, each packing the columns itself (a separate packing step and then the
    // blocks waited on the pool twice per call, which on MobileNet's 1x1 convs on 14x14 and 7x7, 30-60 us
    // of work, cost as much as the second thread gained); with BLAS, two blocks per thread of at least 24
    // channels (taken by whichever thread is free: one running late does fewer).
    const int64_t blocks =
        own_gemm ? std::min(threads, mg)
                 : std::max<int64_t>(std::min<int64_t>(threads, mg), std::min<int64_t>(2 * threads, mg / 24));
    p.m_blocks = p.chunks < threads ? blocks : 1;
    p.lo.resize(static_cast<size_t>(kw));
    p.hi.resize(static_cast<size_t>(kw));
    for (int64_t b = 0; b < kw; ++b) {
      const int64_t shift = b * g.dilation[1] - g.pad_begin[1];
      const size_t u = static_cast<size_t>(b);
      p.lo[u] = shift >= 0 ? 0 : std::min(ow, (-shift + sw - 1) / sw);
      p.hi[u] = std::max(p.lo[u], std::min(ow, iw - shift <= 0 ? 0 : (iw - shift - 1) / sw + 1));
    }
    p.same_rows = !pointwise && own_gemm && g.stride[0] == 1 && sw == 1 && ow == iw;
    return p;
  }

  // The columns of output rows [r0, r1) for the group's input channels [ci0, ci1): own_gemm packs them
  // into `packed` (conv_gemm's panels; im2col goes one row at a time through a per-thread buffer, never
  // a full row-major copy), otherwise im2col writes row-major [col_rows, ncols] into `col`. Disjoint
  // channel ranges write disjoint rows, so several threads can fill one chunk.
  template <typename T>
  void prepare_columns(const WindowGeometry& g, const ChunkPlan& p, int64_t cg, const T* xg, int64_t r0, int64_t r1,
                       int64_t ci0, int64_t ci1, T* col, float* packed) const {
    const int64_t ih = g.in[0], iw = g.in[1], ow = g.out[1], kh = g.kernel[0], kw = g.kernel[1];
    const int64_t sh = g.stride[0], sw = g.stride[1], ph = g.pad_begin[0], pwd = g.pad_begin[1];
    const int64_t dh = g.dilation[0], dw = g.dilation[1], in_size = ih * iw, ncols = (r1 - r0) * ow;
    const bool own_gemm = p.own_gemm;
    if (p.pointwise) {
      if constexpr (std::is_same_v<T, float>)
        if (own_gemm)
          for (int64_t ci = ci0; ci < ci1; ++ci)
            conv_gemm::pack_row(ci, p.col_rows, ncols, xg + ci * in_size + r0 * ow, packed);
      return;
    }
    if constexpr (std::is_same_v<T, float>)
      if (p.same_rows) return pack_same_rows(g, cg, ci0, ci1, r0, r1, xg, packed);
    T* row_buf = own_gemm ? scratch<T>(static_cast<size_t>(ncols), ScratchSlot::kConvColumns) : nullptr;
    for (int64_t ci = ci0; ci < ci1; ++ci)
      for (int64_t a = 0; a < kh; ++a)
        for (int64_t b = 0; b < kw; ++b) {
          const int64_t kk = (ci * kh + a) * kw + b;
          T* dstk = own_gemm ? row_buf : col + kk * ncols;
          const int64_t shift = b * dw - pwd, l = p.lo[static_cast<size_t>(b)], h = p.hi[static_cast<size_t>(b)];
          for (int64_t r = r0; r < r1; ++r) {
            T* dst = dstk + (r - r0) * ow;
            const int64_t row = r * sh - ph + a * dh;
            if (row < 0 || row >= ih) {
              std::fill(dst, dst + ow, T(0));
              continue;
            }
            const T* src = xg + ci * in_size + row * iw;
            std::fill(dst, dst + l, T(0));
            if (sw == 1) {
              std::copy(src + l + shift, src + h + shift, dst + l);
            } else if (std::is_same_v<T, float> && own_gemm && sw == 2) {  // (own_gemm: AVX2 is there)
              if constexpr (std::is_same_v<T, float>) conv_gemm::gather_stride2(dst + l, src + l * 2 + shift, h - l);
            } else {
              for (int64_t j = l; j < h; ++j) dst[j] = src[j * sw + shift];
            }
            std::fill(dst + h, dst + ow, T(0));
          }
          if constexpr (std::is_same_v<T, float>)
            if (own_gemm) conv_gemm::pack_row(kk, p.col_rows, ncols, dstk, packed);
        }
  }

  // Rows of output after a plain GEMM (`rows` output channels of `ncols` points, `ld` apart): + the
  // channel's bias, + the added input's row (same layout as y), then the activations.
  template <typename T>
  void rows_epilogue(T* y, const T* bias, const T* z, int64_t rows, int64_t ncols, int64_t ld) const {
    for (int64_t o = 0; o < rows; ++o) {
      T* row = y + o * ld;
      if (bias)
        for (int64_t j = 0; j < ncols; ++j) row[j] += bias[o];
      if (z)
        for (int64_t j = 0; j < ncols; ++j) row[j] += z[o * ld + j];
      apply_activations(acts_, row, ncols);
    }
  }

  // 2-D conv as GEMMs over chunks of output rows: per chunk, im2col of just those rows (sized to
  // stay in cache while the GEMM reads it), the group's GEMM into the rows' columns of Y, then the
  // epilogue (bias, added input, activations) while they are hot. Chunks are independent, so the
  // session's pool runs them in parallel, each GEMM on one BLAS thread (the session sets BLAS to one
  // thread: one pool for everything, no oversubscription). 1x1 stride-1 convs skip im2col.
  template <typename T>
  void chunked_2d(const KernelIO& io, const WindowGeometry& g, int64_t n, int64_t c, int64_t m, int64_t cg,
                  bool pointwise, const T* px, const T* pw, const T* pb, const T* pz, T* py) const {
    const int64_t oh = g.out[0], ow = g.out[1], kh = g.kernel[0], kw = g.kernel[1];
    const int64_t in_size = g.in[0] * g.in[1], out_size = oh * ow, mg = m / group_;
    // float32 on AVX2+FMA: our GEMM (conv_gemm.h: weights read in place, columns packed per chunk).
    // A plane of fewer than 16 outputs (squeeze-excitation's 1x1) stays with BLAS's GEMV.
    const bool own_gemm =
        std::is_same_v<T, float> && conv_gemm::available() && !conv_gemm_disabled() && out_size >= conv_gemm::kNR;
    const bool relu_only = acts_.size() == 1 && acts_[0].kind == ActKind::kRelu;
    const ChunkPlan plan = plan_chunks(io, g, cg, mg, pointwise, own_gemm, sizeof(T));
    const int64_t col_rows = plan.col_rows, rows_per = plan.rows_per, chunks = plan.chunks, m_blocks = plan.m_blocks;
    auto prepare = [&](const T* xg, int64_t r0, int64_t r1, int64_t ci0, int64_t ci1, T* col, float* packed) {
      prepare_columns<T>(g, plan, cg, xg, r0, r1, ci0, ci1, col, packed);
    };
    // Input channels per thread when the pool prepares one chunk's columns: about 16 KiB of columns each.
    const int64_t prep_grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, kh * kw * rows_per * ow));
    std::atomic<BackendSet> ran{0};  // the library products' backends (not own_gemm)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t gi = 0; gi < group_; ++gi) {
        const T* xg = px + (i * c + gi * cg) * in_size;
        T* yg = py + (i * m + gi * mg) * out_size;
        auto run_chunks = [&](int64_t c0, int64_t c1) {
          T* col = pointwise || own_gemm
                       ? nullptr
                       : scratch<T>(static_cast<size_t>(col_rows * rows_per * ow), ScratchSlot::kConvColumns);
          float* packed = own_gemm
                              ? scratch<float>(static_cast<size_t>(conv_gemm::packed_size(col_rows, rows_per * ow)),
                                               ScratchSlot::kConvPacked)
                              : nullptr;
          for (int64_t ch = c0; ch < c1; ++ch) {
            const int64_t r0 = ch * rows_per, r1 = std::min(oh, r0 + rows_per), ncols = (r1 - r0) * ow;
            if (m_blocks > 1 && !own_gemm) {  // the pool is split over this chunk: it prepares the columns too
              parallel_for(io, cg, prep_grain,
                           [&](int64_t ci0, int64_t ci1) { prepare(xg, r0, r1, ci0, ci1, col, packed); });
            }
            const T* cols = pointwise ? xg + r0 * ow : col;
            const int64_t ldb = pointwise ? out_size : ncols;
            auto channels = [&](int64_t o0, int64_t o1, const float* packed) {  // GEMM + epilogue of [o0, o1)
              if constexpr (std::is_same_v<T, float>) {
                if (own_gemm) {  // bias, added input and a lone Relu in the GEMM's registers
                  const conv_gemm::Epilogue ep{pb ? pb + gi * mg + o0 : nullptr,
                                               pz ? pz + (i * m + gi * mg + o0) * out_size + r0 * ow : nullptr,
                                               out_size, relu_only};
                  conv_gemm::gemm(o1 - o0, ncols, col_rows, pw + (gi * mg + o0) * col_rows, col_rows, packed,
                                  yg + o0 * out_size + r0 * ow, out_size, ep);
                  if (!relu_only)
                    for (int64_t o = o0; o < o1; ++o) apply_activations(acts_, yg + o * out_size + r0 * ow, ncols);
                  return;
                }
              }
              ran.fetch_or(backend_bit(gemm<T>(node_, false, false, o1 - o0, ncols, col_rows, T(1),
                                               pw + (gi * mg + o0) * col_rows, col_rows, cols, ldb, T(0),
                                               yg + o0 * out_size + r0 * ow, out_size)));
              rows_epilogue(yg + o0 * out_size + r0 * ow, pb ? pb + gi * mg + o0 : nullptr,
                            pz ? pz + (i * m + gi * mg + o0) * out_size + r0 * ow : nullptr, o1 - o0, ncols, out_size);
            };
            if (m_blocks == 1) {
              prepare(xg, r0, r1, 0, cg, col, packed);
              channels(0, mg, packed);
              continue;
            }
            // Block edges on multiples of 6 (the GEMM tile's rows). With our GEMM each block packs the columns
            // itself: one hand-off to the pool per chunk, not two (plan_chunks: MobileNet's small 1x1 convs).
            const auto edge = [&](int64_t b) { return b == m_blocks ? mg : mg * b / m_blocks / 6 * 6; };
            parallel_each(io, m_blocks, [&](int64_t b0, int64_t b1) {
              const size_t size = static_cast<size_t>(conv_gemm::packed_size(col_rows, ncols));
              float* mine = own_gemm ? scratch<float>(size, ScratchSlot::kConvPacked) : packed;
              if (own_gemm) prepare(xg, r0, r1, 0, cg, col, mine);
              channels(edge(b0), edge(b1), mine);
            });
          }
        };
        if (m_blocks > 1)
          run_chunks(0, chunks);  // the pool is busy inside each chunk
        else
          parallel_each(io, chunks, run_chunks);
      }
    io.impl = own_gemm ? kImplIm2col : backend_label(ran.load());
  }

  // Stride-1 2-D convs with outputs >= 56 wide: no im2col. The group's input is copied once into a
  // zero-padded plane per channel (rows wp = ow + (kw - 1) * dw wide), and the GEMM reads each tap's row of
  // the column matrix in place: output (r, x), column r * wp + x of a grid wp wide, takes tap (ci, a, b)
  // from padded[ci][r + a * dh][x + b * dw] = padded + offset(ci, a, b) + r * wp + x. The wp - ow grid
  // columns past each row's end are computed and dropped (2 of 58 on ResNet's 56-wide planes). Measured
  // on ResNet-18's 64-channel 3x3 convs (56x56): 3-5 % faster than packing im2col panels at 1 thread,
  // 6 % at 2; on 28-wide planes (2 of 30 columns dropped) it was 4 % slower, so they keep the panels.
  static bool direct_applies(const WindowGeometry& g, int64_t cg, bool pointwise) {
    return g.rank() == 2 && cg > 1 && !pointwise && g.stride[0] == 1 && g.stride[1] == 1 && g.out[1] >= 56;
  }

  void direct_2d(const KernelIO& io, const WindowGeometry& g, int64_t n, int64_t c, int64_t m, int64_t cg,
                 const float* px, const float* pw, const float* pb, const float* pz, float* py) const {
    const int64_t ih = g.in[0], iw = g.in[1], oh = g.out[0], ow = g.out[1], kh = g.kernel[0], kw = g.kernel[1];
    const int64_t dh = g.dilation[0], dw = g.dilation[1], pt = g.pad_begin[0], pl = g.pad_begin[1];
    const int64_t wp = ow + (kw - 1) * dw, hp = oh + (kh - 1) * dh, plane = hp * wp, k = cg * kh * kw;
    const int64_t in_size = ih * iw, out_size = oh * ow, mg = m / group_;
    const int64_t threads = io.pool ? io.pool->size() : 1;
    const bool relu_only = acts_.size() == 1 && acts_[0].kind == ActKind::kRelu;
    std::vector<int64_t> offsets(static_cast<size_t>(k));
    for (int64_t ci = 0; ci < cg; ++ci)
      for (int64_t a = 0; a < kh; ++a)
        for (int64_t b = 0; b < kw; ++b)
          offsets[static_cast<size_t>((ci * kh + a) * kw + b)] = ci * plane + a * dh * wp + b * dw;
    // The GEMM reads up to (cg - 1) * plane + hp * wp + (kw - 1) * dw + 15 < cg * plane + wp + 16.
    float* padded = scratch<float>(static_cast<size_t>(cg * plane + wp + conv_gemm::kNR), ScratchSlot::kConvPhases);
    std::fill(padded + cg * plane, padded + cg * plane + wp + conv_gemm::kNR, 0.0f);
    // Chunks of about 512 grid columns: the GEMM's output block (mg x ~512 floats) is copied out while in cache.
    int64_t rows_per = std::clamp<int64_t>(512 / wp, 1, oh);
    rows_per = std::min(rows_per, (oh + threads - 1) / threads);
    rows_per = balanced_rows(rows_per, oh, threads);
    const int64_t chunks = (oh + rows_per - 1) / rows_per;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t gi = 0; gi < group_; ++gi) {
        const float* xg = px + (i * c + gi * cg) * in_size;
        float* yg = py + (i * m + gi * mg) * out_size;
        parallel_for(io, cg, std::max<int64_t>(1, 16384 / plane), [&](int64_t ci0, int64_t ci1) {
          for (int64_t ci = ci0; ci < ci1; ++ci) {
            float* dst = padded + ci * plane;
            const float* src = xg + ci * in_size;
            for (int64_t r = 0; r < hp; ++r) {
              float* row = dst + r * wp;
              const int64_t ri = r - pt;
              if (ri < 0 || ri >= ih) {
                std::fill(row, row + wp, 0.0f);
                continue;
              }
              const int64_t copy = std::min(iw, wp - pl);
              std::fill(row, row + pl, 0.0f);
              std::copy(src + ri * iw, src + ri * iw + copy, row + pl);
              std::fill(row + pl + copy, row + wp, 0.0f);
            }
          }
        });
        parallel_each(io, chunks, [&](int64_t c0, int64_t c1) {
          float* grid = scratch<float>(static_cast<size_t>(mg * rows_per * wp), ScratchSlot::kConvPacked);
          for (int64_t ch = c0; ch < c1; ++ch) {
            const int64_t r0 = ch * rows_per, r1 = std::min(oh, r0 + rows_per), ncols = (r1 - r0) * wp;
            conv_gemm::Epilogue ep;
            ep.bias = pb ? pb + gi * mg : nullptr;
            ep.relu = relu_only && !pz;
            conv_gemm::gemm_direct(mg, ncols, k, pw + gi * mg * k, k, padded + r0 * wp, offsets.data(), grid, ncols,
                                   ep);
            for (int64_t o = 0; o < mg; ++o)  // the valid columns into Y, the added input, the activations
              for (int64_t r = r0; r < r1; ++r) {
                const float* src = grid + o * ncols + (r - r0) * wp;
                float* dst = yg + o * out_size + r * ow;
                if (pz) {
                  const float* zr = pz + (i * m + gi * mg + o) * out_size + r * ow;
                  for (int64_t x = 0; x < ow; ++x) dst[x] = src[x] + zr[x];
                } else {
                  std::copy(src, src + ow, dst);
                }
                if (!ep.relu) apply_activations(acts_, dst, ow);
              }
          }
        });
      }
  }

  // im2col of output rows [r0, r1), input channels [ci0, ci1), into conv_gemm's packed panels, for a stride-1 conv
  // whose output rows are as wide as the input's (padded "same"): then a tap's values over all the chunk's columns are
  // one contiguous run of the input plane (column jj of the chunk reads plane offset (r0 + row shift) * iw + column
  // shift + jj), copied in one pass; only the columns whose tap falls in the left / right padding and the rows above /
  // below the plane are zeroed after.
  static void pack_same_rows(const WindowGeometry& g, int64_t cg, int64_t ci0, int64_t ci1, int64_t r0, int64_t r1,
                             const float* xg, float* packed) {
    const int64_t ih = g.in[0], iw = g.in[1], ow = iw, kh = g.kernel[0], kw = g.kernel[1], in_size = ih * iw;
    const int64_t k = cg * kh * kw, ncols = (r1 - r0) * ow,
                  padded = (ncols + conv_gemm::kNR - 1) / conv_gemm::kNR * conv_gemm::kNR;
    for (int64_t ci = ci0; ci < ci1; ++ci)
      for (int64_t a = 0; a < kh; ++a)
        for (int64_t b = 0; b < kw; ++b) {
          const int64_t kk = (ci * kh + a) * kw + b, ra = a * g.dilation[0] - g.pad_begin[0],
                        shift = b * g.dilation[1] - g.pad_begin[1];
          const int64_t rlo = std::clamp(-ra, r0, r1), rhi = std::clamp(ih - ra, rlo, r1);  // rows inside the plane
          const int64_t j0 = (rlo - r0) * ow, j1 = (rhi - r0) * ow, off = (r0 + ra) * iw + shift;
          const int64_t c0 = std::clamp(-off, j0, j1),
                        c1 = std::clamp(in_size - off, c0, j1);  // reads inside the plane
          conv_gemm::zero_run(kk, k, 0, c0, packed);
          if (c1 > c0) conv_gemm::pack_run(kk, k, c0, c1, xg + ci * in_size + off, packed);
          conv_gemm::zero_run(kk, k, c1, padded, packed);
          for (int64_t r = rlo; r < rhi; ++r) {  // the padding columns of each row
            const int64_t row0 = (r - r0) * ow;
            if (shift < 0) conv_gemm::zero_run(kk, k, row0, row0 + std::min(ow, -shift), packed);
            if (shift > 0) conv_gemm::zero_run(kk, k, row0 + std::max<int64_t>(0, iw - shift), row0 + ow, packed);
          }
        }
  }

  NodeDef node_;
  nn::WindowAttrs attrs_;
  int64_t group_;
  std::vector<ActStep> acts_;  // fused epilogue (FusedConv); empty for a plain Conv
  bool folded_;                // rewritten by a pass: float32 W and B may come with float16 X
  bool blocked_inputs_;        // X and the added input may come in channel blocks (keep_conv_blocks)
  bool blocked_output_;        // every reader of Y takes channel blocks (keep_conv_blocks)
  bool widened_output_;        // ... and, in a float16 chain, takes it widened (keep_conv_blocks)
  bool half_values_;           // float16 X and Y with a folded float32 W (fold_batch_norm)
  conv_dnnl::Conv dnnl_;       // oneDNN's primitives, when W is a constant
  conv_dnnl::Conv dnnl_bf16_;  // the same on a bfloat16 W
  WidenedConstants widened_;   // float32 copies of float16/bfloat16 constant weights and bias
};

}  // namespace

// Conv 1; 11 reworded the auto_pad output-size rules (implemented as 11 reads them); 22 only widened types.
PARITY_KERNEL("Conv", 1, ConvKernel, kFloatTypes16);
PARITY_KERNEL("Conv", 11, ConvKernel, kFloatTypes16);
// Conv + BatchNormalization folded, + bias + activations (refrt/src/optimize/).
PARITY_FUSED_KERNEL("FusedConv", ConvKernel, kFloatTypes16);

}  // namespace parity::refrt
