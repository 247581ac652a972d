// Normalizations: BatchNormalization (inference, and training_mode batch statistics), LayerNormalization
// (optional Mean/InvStdDev), GroupNormalization (18: scale/bias per group, 21: per channel),
// InstanceNormalization, LpNormalization, RMSNormalization, MeanVarianceNormalization and LRN.
// Statistics accumulate in double; half types are computed in float32 (with_float32).
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "../src/activation.h"
#include "../src/scratch.h"
#include "nn_common.h"
#include "parity/refrt/cpu_isa.h"

namespace parity::refrt {
namespace {

// Values of a float tensor of any float dtype, as double (parameters may have their own dtype).
std::vector<double> doubles(const NodeDef& node, const Tensor& t, const char* what) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) {
    const size_t u = static_cast<size_t>(i);
    switch (t.dtype()) {
      case DType::kFloat32:
        v[u] = t.data<float>()[i];
        break;
      case DType::kFloat64:
        v[u] = t.data<double>()[i];
        break;
      case DType::kFloat16:
        v[u] = half_to_float(t.data<uint16_t>()[i]);
        break;
      case DType::kBFloat16:
        v[u] = bf16_to_float(t.data<uint16_t>()[i]);
        break;
      default:
        node.fail(std::string(what) + " must be a float tensor, got " + dtype_name(t.dtype()));
    }
  }
  return v;
}

// `t` broadcast (numpy, right-aligned) to `target`, flattened row-major.
std::vector<double> expanded(const NodeDef& node, const Tensor& t, const Shape& target, const char* what) {
  const std::vector<double> v = doubles(node, t, what);
  if (t.rank() > target.size() || broadcast_shapes(t.shape(), target, &node) != target)
    node.fail(std::string(what) + " of shape " + shape_str(t.shape()) + " does not broadcast to " + shape_str(target));
  const int64_t total = checked_numel(target);
  std::vector<double> out(static_cast<size_t>(total));
  const size_t lead = target.size() - t.rank();
  for (int64_t i = 0; i < total; ++i) {
    int64_t rest = i, src = 0, scale = 1;
    for (int64_t d = static_cast<int64_t>(target.size()) - 1; d >= static_cast<int64_t>(lead); --d) {
      const int64_t idx = rest % target[static_cast<size_t>(d)];
      rest /= target[static_cast<size_t>(d)];
      const int64_t size = t.shape()[static_cast<size_t>(d) - lead];
      src += (size == 1 ? 0 : idx) * scale;
      scale *= size;
    }
    out[static_cast<size_t>(i)] = v[static_cast<size_t>(src)];
  }
  return out;
}

// A per-channel parameter of length c.
std::vector<double> per_channel(const NodeDef& node, const Tensor& t, int64_t c, const char* what) {
  if (t.numel() != c)
    node.fail(std::string(what) + " must have " + std::to_string(c) + " elements, got " + shape_str(t.shape()));
  return doubles(node, t, what);
}

// Mean and 1/sqrt(var + eps) of `n` values (population variance, two-pass in double).
template <typename T>
std::pair<double, double> moments(const T* x, int64_t n, double eps) {
  // Four partial sums per pass: independent adds rather than one latency-bound chain.
  double part[4] = {0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int k = 0; k < 4; ++k) part[k] += static_cast<double>(x[i + k]);
  double sum = (part[0] + part[1]) + (part[2] + part[3]);
  for (; i < n; ++i) sum += static_cast<double>(x[i]);
  const double mean = n > 0 ? sum / static_cast<double>(n) : 0.0;
  double sqp[4] = {0, 0, 0, 0};
  i = 0;
  for (; i + 4 <= n; i += 4)
    for (int k = 0; k < 4; ++k)
      sqp[k] += (static_cast<double>(x[i + k]) - mean) * (static_cast<double>(x[i + k]) - mean);
  double sq = (sqp[0] + sqp[1]) + (sqp[2] + sqp[3]);
  for (; i < n; ++i) sq += (static_cast<double>(x[i]) - mean) * (static_cast<double>(x[i]) - mean);
  const double var = n > 0 ? sq / static_cast<double>(n) : 0.0;
  return {mean, 1.0 / std::sqrt(var + eps)};
}

// The same for float32 on AVX2 CPUs: the same two passes in double, four floats widened per vector
// and four vector accumulators per pass (adds are latency-bound: one chain would wait on each add).
// Sums are associated differently from moments<float>, well inside float32 output precision.
__attribute__((target("avx2,fma"))) inline double lane_total(__m256d a, __m256d b, __m256d c, __m256d d) {
  alignas(32) double lanes[4];
  _mm256_store_pd(lanes, _mm256_add_pd(_mm256_add_pd(a, b), _mm256_add_pd(c, d)));
  return (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
}
__attribute__((target("avx2,fma"))) std::pair<double, double> moments_avx2(const float* x, int64_t n, double eps) {
  __m256d s[4] = {_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd()};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int k = 0; k < 4; ++k) s[k] = _mm256_add_pd(s[k], _mm256_cvtps_pd(_mm_loadu_ps(x + i + 4 * k)));
  double sum = lane_total(s[0], s[1], s[2], s[3]);
  for (; i < n; ++i) sum += static_cast<double>(x[i]);
  const double mean = n > 0 ? sum / static_cast<double>(n) : 0.0;
  const __m256d m = _mm256_set1_pd(mean);
  for (auto& v : s) v = _mm256_setzero_pd();
  for (i = 0; i + 16 <= n; i += 16)
    for (int k = 0; k < 4; ++k) {
      const __m256d d = _mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(x + i + 4 * k)), m);
      s[k] = _mm256_fmadd_pd(d, d, s[k]);
    }
  double sq = lane_total(s[0], s[1], s[2], s[3]);
  for (; i < n; ++i) sq += (static_cast<double>(x[i]) - mean) * (static_cast<double>(x[i]) - mean);
  const double var = n > 0 ? sq / static_cast<double>(n) : 0.0;
  return {mean, 1.0 / std::sqrt(var + eps)};
}
// out[j] = ((x[j] - m) - r) * s * scale[j] + bias[j], eight floats per vector.
__attribute__((target("avx2,fma"))) void normalize_avx2(float* out, const float* x, int64_t n, float m, float r,
                                                        float s, const float* scale, const float* bias) {
  const __m256 vm = _mm256_set1_ps(m), vr = _mm256_set1_ps(r), vs = _mm256_set1_ps(s);
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256 c = _mm256_mul_ps(_mm256_sub_ps(_mm256_sub_ps(_mm256_loadu_ps(x + j), vm), vr), vs);
    _mm256_storeu_ps(out + j, _mm256_fmadd_ps(c, _mm256_loadu_ps(scale + j), _mm256_loadu_ps(bias + j)));
  }
  for (; j < n; ++j) out[j] = ((x[j] - m) - r) * s * scale[j] + bias[j];
}
const bool kAvx2Fma = isa_allows(IsaLevel::kAvx2);

// Row statistics: the AVX2 form for float32 where the CPU has it.
template <typename T>
std::pair<double, double> row_moments(const T* x, int64_t n, double eps) {
  if constexpr (std::is_same_v<T, float>)
    if (kAvx2Fma) return moments_avx2(x, n, eps);
  return moments(x, n, eps);
}

int64_t product(const Shape& s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t d = from; d < to; ++d) p *= s[d];
  return p;
}

class BatchNormKernel : public Kernel {
 public:
  explicit BatchNormKernel(const NodeDef& node)
      : node_(node),
        epsilon_(node.attr_float("epsilon", 1e-5f)),
        momentum_(node.attr_float("momentum", 0.9f)),
        training_(node.attr_int("training_mode", 0) != 0),
        acts_(parse_activations(node)) {
    if (node.opset < 9 && node.attr_int("spatial", 1) == 0)
      node.fail("BatchNormalization with spatial=0 is not implemented", ErrorKind::kUnsupported);
    if (node.opset < 14 && node.outputs.size() > 1)
      node.fail("BatchNormalization-" + std::to_string(node.opset) + " training outputs are not implemented",
                ErrorKind::kUnsupported);
  }
  void compute(KernelIO& io) const override {
    const DType dtype = io.in(0).dtype();
    if (!training_ && (dtype == DType::kFloat32 || is_float16_like(dtype))) return inference(io);
    nn::run_float(node_, io, dtype, [&](auto tag, KernelIO& f) { run<decltype(tag)>(f); });
  }

 private:
  // Inference: y = x * a + b per channel in float32 (a = scale / sqrt(var + eps), b = B - mean * a, as eager's
  // CPU kernel forms them), then the fused activations (FusedBatchNormalization), rounded once for float16 /
  // bfloat16, block by block (no whole-tensor float32 copies); channel planes spread over the pool.
  void inference(KernelIO& io) const {
    const Tensor& x = io.in(0);
    if (x.rank() < 2) node_.fail("X must be [N, C, ...], got " + shape_str(x.shape()));
    const int64_t n = x.dim(0), c = x.dim(1), inner = product(x.shape(), 2, x.rank());
    const auto scale = per_channel(node_, io.in(1), c, "scale"), bias = per_channel(node_, io.in(2), c, "B");
    const auto mean = per_channel(node_, io.in(3), c, "input_mean"), var = per_channel(node_, io.in(4), c, "input_var");
    if (io.outputs.size() > 1 && !node_.outputs[1].empty()) node_.fail("running mean/var outputs need training_mode=1");
    std::vector<float> a(static_cast<size_t>(c)), b(static_cast<size_t>(c));
    for (size_t u = 0; u < a.size(); ++u) {
      a[u] = static_cast<float>(scale[u] / std::sqrt(var[u] + static_cast<double>(epsilon_)));
      b[u] = static_cast<float>(bias[u] - mean[u] * static_cast<double>(a[u]));
    }
    const DType dtype = x.dtype();
    const bool half = dtype != DType::kFloat32;
    Tensor y(dtype, x.shape());
    constexpr int64_t kBlock = 512;
    const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(inner, 1));
    parallel_for(io, n * c, grain, [&](int64_t p0, int64_t p1) {
      float buffer[kBlock];
      for (int64_t p = p0; p < p1; ++p) {
        const float ap = a[static_cast<size_t>(p % c)], bp = b[static_cast<size_t>(p % c)];
        for (int64_t j0 = 0; j0 < inner; j0 += kBlock) {
          const int64_t len = std::min(kBlock, inner - j0), at = p * inner + j0;
          float* out = half ? buffer : y.data<float>() + at;
          const float* in = half ? buffer : x.data<float>() + at;
          if (half) widen_span(dtype, x.data<uint16_t>() + at, buffer, len);
          for (int64_t j = 0; j < len; ++j) out[j] = in[j] * ap + bp;
          apply_activations(acts_, out, len);
          if (half) narrow_span(dtype, buffer, y.data<uint16_t>() + at, len);
        }
      }
    });
    io.outputs[0] = std::move(y);
  }

  template <typename T>
  void run(KernelIO& io) const {
    const Tensor& x = io.in(0);
    if (x.rank() < 2) node_.fail("X must be [N, C, ...], got " + shape_str(x.shape()));
    const int64_t n = x.dim(0), c = x.dim(1), inner = product(x.shape(), 2, x.rank());
    const auto scale = per_channel(node_, io.in(1), c, "scale"), bias = per_channel(node_, io.in(2), c, "B");
    auto mean = per_channel(node_, io.in(3), c, "input_mean"), var = per_channel(node_, io.in(4), c, "input_var");
    const T* px = x.data<T>();
    if (training_) {  // batch statistics over N and the spatial dims; running stats blend with momentum
      std::vector<double> running_mean(mean), running_var(var);
      for (int64_t ch = 0; ch < c; ++ch) {
        double sum = 0, sq = 0;
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < inner; ++j) sum += static_cast<double>(px[(i * c + ch) * inner + j]);
        const double count = static_cast<double>(n * inner), m = count > 0 ? sum / count : 0;
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < inner; ++j) {
            const double d = static_cast<double>(px[(i * c + ch) * inner + j]) - m;
            sq += d * d;
          }
        const size_t u = static_cast<size_t>(ch);
        mean[u] = m;
        var[u] = count > 0 ? sq / count : 0;
        running_mean[u] = running_mean[u] * momentum_ + m * (1 - static_cast<double>(momentum_));
        running_var[u] = running_var[u] * momentum_ + var[u] * (1 - static_cast<double>(momentum_));
      }
      for (size_t o = 1; o < io.outputs.size() && o < 3; ++o) {
        const Tensor& like = io.in(2 + o);
        Tensor t(DType::kFloat64, {c});
        std::copy_n((o == 1 ? running_mean : running_var).begin(), c, t.data<double>());
        io.outputs[o] = like.dtype() == DType::kFloat64 ? t : cast_like(t, like.dtype());
      }
    } else if (io.outputs.size() > 1 && !node_.outputs[1].empty()) {
      node_.fail("running mean/var outputs need training_mode=1");
    }
    Tensor y(x.dtype(), x.shape());
    T* py = y.data<T>();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t ch = 0; ch < c; ++ch) {
        const size_t u = static_cast<size_t>(ch);
        const double a = scale[u] / std::sqrt(var[u] + static_cast<double>(epsilon_)), b = bias[u] - mean[u] * a;
        const int64_t base = (i * c + ch) * inner;
        for (int64_t j = 0; j < inner; ++j) py[base + j] = static_cast<T>(static_cast<double>(px[base + j]) * a + b);
      }
    apply_activations(acts_, py, y.numel());  // FusedBatchNormalization in float64
    io.outputs[0] = std::move(y);
  }

  static Tensor cast_like(const Tensor& t, DType dtype) {
    Tensor f(DType::kFloat32, t.shape());
    for (int64_t i = 0; i < t.numel(); ++i) f.data<float>()[i] = static_cast<float>(t.data<double>()[i]);
    return is_float16_like(dtype) ? narrow_from_float32(f, dtype) : f;
  }

  NodeDef node_;
  float epsilon_, momentum_;
  bool training_;
  std::vector<ActStep> acts_;  // FusedBatchNormalization's activations (optimize/fuse_activation.cc)
};

// LayerNormalization and RMSNormalization: each row of the trailing dims from `axis` is normalized.
class RowNormKernel : public Kernel {
 public:
  RowNormKernel(const NodeDef& node, bool rms)
      : node_(node),
        rms_(rms),
        widened_output_(node.attr_int("widened_output", 0) != 0),
        axis_(node.attr_int("axis", -1)),
        epsilon_(node.attr_float("epsilon", 1e-5f)) {}
  void compute(KernelIO& io) const override {
    // float16 / bfloat16 rows without the statistics outputs: each row widened, normalised as float32 and rounded
    // (the widened path's operations, row by row in cache: float16 BERT's [128, 768] rows 110-145 -> 59 us a call at 2
    // threads; float32 46).
    const DType dt = io.in(0).dtype();
    if (is_float16_like(dt) && io.outputs.size() == 1) return run<float>(io, dt);
    nn::run_float(node_, io, dt, [&](auto tag, KernelIO& f) { run<decltype(tag)>(f); });
  }

 private:
  // `half` (T = float only): X and Y are of that 16-bit type, each row widened into scratch and rounded back; with
  // widened_output (optimize/keep_widened.cc), Y is float32 holding the rounded values, for readers that widen it.
  template <typename T>
  void run(KernelIO& io, DType half = DType::kUndefined) const {
    const bool half_io = half != DType::kUndefined;
    const bool widen_y = half_io && widened_output_;
    const Tensor& x = io.in(0);
    const int64_t rank = static_cast<int64_t>(x.rank());
    const size_t axis = static_cast<size_t>(normalize_axis(axis_, rank, "axis"));
    const Shape norm_shape(x.shape().begin() + static_cast<int64_t>(axis), x.shape().end());
    const int64_t outer = product(x.shape(), 0, axis), inner = product(x.shape(), axis, x.rank());
    const auto scale = expanded(node_, io.in(1), norm_shape, "scale");
    const Tensor* b = rms_ ? nullptr : io.optional(2);
    const std::vector<double> bias = b ? expanded(node_, *b, norm_shape, "B") : std::vector<double>();
    Shape stat_shape = x.shape();
    for (size_t d = axis; d < stat_shape.size(); ++d) stat_shape[d] = 1;
    const bool stats = io.outputs.size() > 1;
    Tensor y(widen_y ? DType::kFloat32 : x.dtype(), x.shape());
    Tensor mean_out = stats ? Tensor(x.dtype(), stat_shape) : Tensor(),
           inv_out = stats ? Tensor(x.dtype(), stat_shape) : Tensor();
    const T* px = half_io ? nullptr : x.data<T>();
    T* py = half_io && !widen_y ? nullptr : y.data<T>();
    const auto* hx = half_io ? static_cast<const uint16_t*>(x.raw()) : nullptr;
    auto* hy = half_io && !widen_y ? static_cast<uint16_t*>(y.mutable_raw()) : nullptr;
    T* pmean = stats ? mean_out.data<T>() : nullptr;
    T* pinv = stats ? inv_out.data<T>() : nullptr;
    // float32 rows are normalised in float (statistics still in double): a float multiply-add per
    // element, 8 to a vector, where the double form converted each value twice (BERT-base's [128, 768]
    // rows: 135 us per call before).
    std::vector<float> scale_f, bias_f;
    if constexpr (std::is_same_v<T, float>) {
      scale_f.assign(scale.begin(), scale.end());
      bias_f.assign(bias.begin(), bias.end());
      if (bias_f.empty()) bias_f.assign(scale.size(), 0.0f);
    }
    parallel_for(io, outer, 8, [&](int64_t begin, int64_t end) {
      float* buf = half_io ? scratch<float>(2 * inner + 1, ScratchSlot::kNormRows) : nullptr;
      for (int64_t o = begin; o < end; ++o) {
        const T* row = half_io ? nullptr : px + o * inner;
        T* out = py ? py + o * inner : nullptr;
        if constexpr (std::is_same_v<T, float>)
          if (half_io) {
            widen_span(half, hx + o * inner, buf, inner);
            row = buf;
            if (!widen_y) out = buf + inner;
          }
        double mean = 0, inv = 0;
        if (rms_) {
          double sq = 0;
          if constexpr (std::is_same_v<T, float>)
            sq = nn::sum_squares(row, inner);
          else
            for (int64_t j = 0; j < inner; ++j) sq += static_cast<double>(row[j]) * static_cast<double>(row[j]);
          inv = 1.0 / std::sqrt((inner > 0 ? sq / static_cast<double>(inner) : 0.0) + static_cast<double>(epsilon_));
        } else {
          std::tie(mean, inv) = row_moments(row, inner, epsilon_);
        }
        if constexpr (std::is_same_v<T, float>) {
          // The mean in two floats, m + r: x - m is exact for x near m, so rows far from 0 keep their
          // precision (one float mean would cost 0.5 ulp of the mean, e.g. 4e-6 at 100).
          const float m = static_cast<float>(mean), r = static_cast<float>(mean - m), s = static_cast<float>(inv);
          const float* sc = scale_f.data();
          const float* bi = bias_f.data();
          if (kAvx2Fma)
            normalize_avx2(out, row, inner, m, r, s, sc, bi);
          else
            for (int64_t j = 0; j < inner; ++j) out[j] = ((row[j] - m) - r) * s * sc[j] + bi[j];
        } else {
          for (int64_t j = 0; j < inner; ++j) {
            const size_t u = static_cast<size_t>(j);
            out[j] = static_cast<T>((static_cast<double>(row[j]) - mean) * inv * scale[u] + (b ? bias[u] : 0.0));
          }
        }
        if constexpr (std::is_same_v<T, float>)
          if (half_io) widen_y ? round_through(half, out, inner) : narrow_span(half, out, hy + o * inner, inner);
        if (stats) {
          pmean[o] = static_cast<T>(mean);
          pinv[o] = static_cast<T>(inv);
        }
      }
    });
    io.outputs[0] = std::move(y);
    if (io.outputs.size() > 1) io.outputs[1] = std::move(mean_out);
    if (io.outputs.size() > 2) io.outputs[2] = std::move(inv_out);
  }

  NodeDef node_;
  bool rms_, widened_output_;
  int64_t axis_;
  float epsilon_;
};

struct LayerNormKernel : RowNormKernel {
  explicit LayerNormKernel(const NodeDef& n) : RowNormKernel(n, false) {}
};
struct RMSNormKernel : RowNormKernel {
  explicit RMSNormKernel(const NodeDef& n) : RowNormKernel(n, true) {}
};

// GroupNormalization and InstanceNormalization (= one group per channel): statistics per (n, group),
// affine per channel (or per group for GroupNormalization-18).
class GroupNormKernel : public Kernel {
 public:
  GroupNormKernel(const NodeDef& node, bool instance)
      : node_(node),
        instance_(instance),
        groups_(instance ? 0 : node.attr_int("num_groups", 0)),
        epsilon_(node.attr_float("epsilon", 1e-5f)) {
    if (!instance && node.attr("num_groups") == nullptr) node.fail("num_groups is required");
    if (!instance && groups_ <= 0) node.fail("num_groups must be positive, got " + std::to_string(groups_));
  }
  void compute(KernelIO& io) const override {
    nn::run_float(node_, io, io.in(0).dtype(), [&](auto tag, KernelIO& f) { run<decltype(tag)>(f); });
  }

 private:
  template <typename T>
  void run(KernelIO& io) const {
    const Tensor& x = io.in(0);
    if (x.rank() < 2 || (instance_ && x.rank() < 3))
      node_.fail("X must be [N, C, D1, ...], got " + shape_str(x.shape()));
    const int64_t n = x.dim(0), c = x.dim(1), inner = product(x.shape(), 2, x.rank());
    const int64_t groups = instance_ ? c : groups_;
    if (c % groups != 0)
      node_.fail(std::to_string(c) + " channels are not divisible by num_groups " + std::to_string(groups));
    const bool per_group = !instance_ && node_.opset < 21;
    const int64_t params = per_group ? groups : c, cpg = c / groups;
    const auto scale = per_channel(node_, io.in(1), params, "scale"),
               bias = per_channel(node_, io.in(2), params, "bias");
    Tensor y(x.dtype(), x.shape());
    const T* px = x.data<T>();
    T* py = y.data<T>();
    parallel_for(io, n * groups, 1, [&](int64_t begin, int64_t end) {
      for (int64_t ng = begin; ng < end; ++ng) {
        const int64_t i = ng / groups, g = ng % groups;
        const int64_t base = (i * c + g * cpg) * inner;
        const auto [mean, inv] = moments(px + base, cpg * inner, epsilon_);
        for (int64_t ch = 0; ch < cpg; ++ch) {
          const size_t p = static_cast<size_t>(per_group ? g : g * cpg + ch);
          for (int64_t j = 0; j < inner; ++j) {
            const int64_t at = base + ch * inner + j;
            py[at] = static_cast<T>((static_cast<double>(px[at]) - mean) * inv * scale[p] + bias[p]);
          }
        }
      }
    });
    io.outputs[0] = std::move(y);
  }

  NodeDef node_;
  bool instance_;
  int64_t groups_;
  float epsilon_;
};

struct GroupNormalizationKernel : GroupNormKernel {
  explicit GroupNormalizationKernel(const NodeDef& n) : GroupNormKernel(n, false) {}
};
struct InstanceNormKernel : GroupNormKernel {
  explicit InstanceNormKernel(const NodeDef& n) : GroupNormKernel(n, true) {}
};

// y = x / ||x||_p along one axis (p 1 or 2); a zero norm gives 0.
class LpNormKernel : public Kernel {
 public:
  explicit LpNormKernel(const NodeDef& node)
      : node_(node), axis_(node.attr_int("axis", -1)), p_(node.attr_int("p", 2)) {
    if (p_ != 1 && p_ != 2) node.fail("p must be 1 or 2, got " + std::to_string(p_));
  }
  void compute(KernelIO& io) const override {
    nn::run_float(node_, io, io.in(0).dtype(), [&](auto tag, KernelIO& f) { run<decltype(tag)>(f); });
  }

 private:
  template <typename T>
  void run(KernelIO& io) const {
    const Tensor& x = io.in(0);
    const size_t axis = static_cast<size_t>(normalize_axis(axis_, static_cast<int64_t>(x.rank()), "axis"));
    const int64_t outer = product(x.shape(), 0, axis), len = x.dim(axis),
                  inner = product(x.shape(), axis + 1, x.rank());
    Tensor y(x.dtype(), x.shape());
    const T* px = x.data<T>();
    T* py = y.data<T>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t base = o * len * inner + i;
        double norm = 0;
        for (int64_t k = 0; k < len; ++k) {
          const double v = static_cast<double>(px[base + k * inner]);
          norm += p_ == 1 ? std::abs(v) : v * v;
        }
        if (p_ == 2) norm = std::sqrt(norm);
        for (int64_t k = 0; k < len; ++k)
          py[base + k * inner] = norm == 0 ? T(0) : static_cast<T>(static_cast<double>(px[base + k * inner]) / norm);
      }
    io.outputs[0] = std::move(y);
  }
  NodeDef node_;
  int64_t axis_, p_;
};

// (x - mean) / sqrt(var + 1e-9) over `axes` (default [0, 2, 3]).
class MeanVarianceNormKernel : public Kernel {
 public:
  explicit MeanVarianceNormKernel(const NodeDef& node) : node_(node), axes_(node.attr_ints("axes", {0, 2, 3})) {}
  void compute(KernelIO& io) const override {
    nn::run_float(node_, io, io.in(0).dtype(), [&](auto tag, KernelIO& f) { run<decltype(tag)>(f); });
  }

 private:
  template <typename T>
  void run(KernelIO& io) const {
    const Tensor& x = io.in(0);
    const int64_t rank = static_cast<int64_t>(x.rank());
    std::vector<bool> reduced(x.rank(), false);
    for (int64_t a : axes_) reduced[static_cast<size_t>(normalize_axis(a, rank, "axes"))] = true;
    // Group elements by their position in the kept dims.
    Shape kept_shape;
    for (size_t d = 0; d < x.rank(); ++d) kept_shape.push_back(reduced[d] ? 1 : x.dim(d));
    const int64_t kept = checked_numel(kept_shape), total = x.numel();
    std::vector<int64_t> key(static_cast<size_t>(total));
    for (int64_t i = 0; i < total; ++i) {
      int64_t rest = i, k = 0, scale = 1;
      for (int64_t d = rank - 1; d >= 0; --d) {
        const int64_t idx = rest % x.dim(static_cast<size_t>(d));
        rest /= x.dim(static_cast<size_t>(d));
        if (!reduced[static_cast<size_t>(d)]) {
          k += idx * scale;
          scale *= x.dim(static_cast<size_t>(d));
        }
      }
      key[static_cast<size_t>(i)] = k;
    }
    std::vector<double> sum(static_cast<size_t>(kept)), sq(static_cast<size_t>(kept)), count(static_cast<size_t>(kept));
    const T* px = x.data<T>();
    for (int64_t i = 0; i < total; ++i) {
      const size_t k = static_cast<size_t>(key[static_cast<size_t>(i)]);
      sum[k] += static_cast<double>(px[i]);
      count[k] += 1;
    }
    for (size_t k = 0; k < sum.size(); ++k) sum[k] = count[k] > 0 ? sum[k] / count[k] : 0;
    for (int64_t i = 0; i < total; ++i) {
      const size_t k = static_cast<size_t>(key[static_cast<size_t>(i)]);
      const double d = static_cast<double>(px[i]) - sum[k];
      sq[k] += d * d;
    }
    Tensor y(x.dtype(), x.shape());
    T* py = y.data<T>();
    for (int64_t i = 0; i < total; ++i) {
      const size_t k = static_cast<size_t>(key[static_cast<size_t>(i)]);
      py[i] = static_cast<T>((static_cast<double>(px[i]) - sum[k]) / std::sqrt(sq[k] / count[k] + 1e-9));
    }
    io.outputs[0] = std::move(y);
  }
  NodeDef node_;
  std::vector<int64_t> axes_;
};

// LRN: y = x / (bias + alpha / size * sum of x^2 over a channel window) ^ beta.
class LrnKernel : public Kernel {
 public:
  explicit LrnKernel(const NodeDef& node)
      : node_(node),
        alpha_(node.attr_float("alpha", 1e-4f)),
        beta_(node.attr_float("beta", 0.75f)),
        bias_(node.attr_float("bias", 1.0f)),
        size_(node.attr_int("size", 0)) {
    if (size_ < 1) node.fail("size must be >= 1");
  }
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    if (is_float16_like(x.dtype())) return with_float32(io, x.dtype(), [&](KernelIO& f) { compute(f); });
    if (x.rank() < 2) node_.fail("X must have rank >= 2");
    const int64_t n = x.dim(0), c = x.dim(1), inner = c ? x.numel() / (n * c) : 0;
    const int64_t lo = (size_ - 1) / 2, hi = size_ - 1 - lo;  // window [ch - floor, ch + ceil]
    Tensor out(x.dtype(), x.shape());
    if (!dispatch_float(x.dtype(), [&](auto tag) {
          using T = decltype(tag);
          const T* px = x.data<T>();
          T* py = out.data<T>();
          for (int64_t img = 0; img < n; ++img)
            for (int64_t ch = 0; ch < c; ++ch)
              for (int64_t i = 0; i < inner; ++i) {
                double sum = 0;
                for (int64_t k = std::max<int64_t>(0, ch - lo); k <= std::min(c - 1, ch + hi); ++k) {
                  const double v = static_cast<double>(px[(img * c + k) * inner + i]);
                  sum += v * v;
                }
                const int64_t at = (img * c + ch) * inner + i;
                py[at] = static_cast<T>(
                    static_cast<double>(px[at]) /
                    std::pow(bias_ + alpha_ / static_cast<double>(size_) * sum, static_cast<double>(beta_)));
              }
        }))
      node_.fail("dtype " + dtype_name(x.dtype()) + " is not implemented", ErrorKind::kUnsupported);
    io.outputs[0] = std::move(out);
  }

 private:
  NodeDef node_;
  float alpha_, beta_, bias_;
  int64_t size_;
};

}  // namespace

// BatchNormalization 7: spatial attribute; 9: spatial removed; 14: training_mode and running-stat outputs;
// 15: scale/B and mean/var may have their own float types.
PARITY_KERNEL("BatchNormalization", 7, BatchNormKernel, kFloatTypes16);
PARITY_KERNEL("BatchNormalization", 9, BatchNormKernel, kFloatTypes16);
PARITY_KERNEL("BatchNormalization", 14, BatchNormKernel, kFloatTypes16);
PARITY_KERNEL("BatchNormalization", 15, BatchNormKernel, kFloatTypes16);
// BatchNormalization (inference) + the activations after it (optimize/fuse_activation.cc).
PARITY_FUSED_KERNEL("FusedBatchNormalization", BatchNormKernel, kFloatTypes16);
PARITY_KERNEL("LayerNormalization", 17, LayerNormKernel, kFloatTypes16);
// GroupNormalization 18: scale/bias per group; 21: per channel.
PARITY_KERNEL("GroupNormalization", 18, GroupNormalizationKernel, kFloatTypes16);
PARITY_KERNEL("GroupNormalization", 21, GroupNormalizationKernel, kFloatTypes16);
PARITY_KERNEL("InstanceNormalization", 6, InstanceNormKernel, kFloatTypes16);
PARITY_KERNEL("LpNormalization", 1, LpNormKernel, kFloatTypes16);
PARITY_KERNEL("RMSNormalization", 23, RMSNormKernel, kFloatTypes16);
// MeanVarianceNormalization 9 and 13 (13 only widened types).
PARITY_KERNEL("MeanVarianceNormalization", 9, MeanVarianceNormKernel, kFloatTypes16);
PARITY_KERNEL("LRN", 1, LrnKernel, kFloatTypes16);

}  // namespace parity::refrt
