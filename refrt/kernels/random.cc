// RandomNormal, RandomUniform (1), their -Like forms (1), Bernoulli (15) and Multinomial (7).
// With the `seed` attribute every run draws the same values (a generator seeded from the seed's
// bits at the start of each run, so concurrent runs of one session agree); without it each run
// draws fresh values. The streams are refrt's own (mt19937_64, Box-Muller normals): no runtime
// reproduces another's random values, so tests check distributions, never values.
#include <cmath>
#include <cstring>
#include <algorithm>
#include <numbers>
#include <random>

#include "double_io.h"
#include "elementwise.h"
#include "../src/element_values.h"

namespace parity::refrt {
namespace {

class Generator {
 public:
  explicit Generator(const NodeDef& node) : has_seed_(node.attr("seed") != nullptr) {
    const float seed = node.attr_float("seed", 0.0f);
    uint32_t bits;
    std::memcpy(&bits, &seed, 4);
    seed_ = bits;
  }
  std::mt19937_64 start() const {
    return std::mt19937_64(has_seed_ ? seed_ : std::random_device{}() * 0x9E3779B97F4A7C15ull ^ std::random_device{}());
  }
  static double uniform(std::mt19937_64& g) { return static_cast<double>(g() >> 11) * 0x1.0p-53; }  // [0, 1)
  static double normal(std::mt19937_64& g) {
    const double u1 = 1.0 - uniform(g), u2 = uniform(g);  // u1 in (0, 1]
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
  }

 private:
  bool has_seed_;
  uint64_t seed_ = 0;
};

DType float_dtype_attr(const NodeDef& node, DType fallback) {
  const int64_t v = node.attr_int("dtype", static_cast<int64_t>(fallback));
  const DType t = static_cast<DType>(v);
  if (!dtype_is_supported(static_cast<int32_t>(v)) || !is_float_dtype(t))
    node.fail("dtype " + std::to_string(v) + " is not a float type", ErrorKind::kUnsupported);
  return t;
}

enum class Dist { kNormal, kUniform };

// RandomNormal / RandomUniform (shape attribute) and the -Like forms (shape of the input; dtype
// defaults to the input's).
template <Dist D, bool Like>
class RandomKernel : public Kernel {
 public:
  explicit RandomKernel(const NodeDef& node)
      : node_(node),
        gen_(node),
        a_(node.attr_float(D == Dist::kNormal ? "mean" : "low", 0.0f)),
        b_(node.attr_float(D == Dist::kNormal ? "scale" : "high", 1.0f)) {
    if (!Like) {
      dtype_ = float_dtype_attr(node, DType::kFloat32);
      if (!node.attr("shape", Attribute::Type::kInts)) node.fail("the shape attribute is required");
      shape_ = node.attr_ints("shape");
      checked_numel(shape_, "shape attribute");
    } else if (node.attr("dtype")) {
      dtype_ = float_dtype_attr(node, DType::kFloat32);
    }
  }
  void compute(KernelIO& io) const override {
    Shape shape = shape_;
    DType dtype = dtype_;
    if (Like) {
      shape = io.in(0).shape();
      if (dtype == DType::kUndefined) dtype = io.in(0).dtype();
      if (!is_float_dtype(dtype))
        node_.fail("the output dtype must be a float type, got " + dtype_name(dtype), ErrorKind::kUnsupported);
    }
    std::mt19937_64 g = gen_.start();
    std::vector<double> v = output_buffer(shape);
    for (double& x : v)
      x = D == Dist::kNormal ? a_ + b_ * Generator::normal(g) : a_ + (b_ - a_) * Generator::uniform(g);
    io.outputs[0] = float_tensor(dtype, shape, v);
  }

 private:
  NodeDef node_;
  Generator gen_;
  double a_, b_;
  DType dtype_ = DType::kUndefined;
  Shape shape_;
};

// Bernoulli: 1 with probability p for each input element p (which must lie in [0, 1]).
class BernoulliKernel : public Kernel {
 public:
  explicit BernoulliKernel(const NodeDef& node) : node_(node), gen_(node) {
    if (node.attr("dtype")) {
      const int64_t v = node.attr_int("dtype", 1);
      if (!dtype_is_supported(static_cast<int32_t>(v)) || dtype_size(static_cast<DType>(v)) == 0)
        node.fail("dtype " + std::to_string(v) + " is not supported", ErrorKind::kUnsupported);
      dtype_ = static_cast<DType>(v);
    }
  }
  void compute(KernelIO& io) const override {
    const Tensor& p = io.in(0);
    if (!is_float_dtype(p.dtype())) fail_dtype(node_, p.dtype());
    const DType dtype = dtype_ == DType::kUndefined ? p.dtype() : dtype_;
    const std::vector<double> probs = float_values(p);
    std::mt19937_64 g = gen_.start();
    Tensor out(dtype, p.shape());
    const size_t size = dtype_size(dtype);
    auto* dst = static_cast<unsigned char*>(out.mutable_raw());
    const auto one = element_bytes(dtype, 1.0), zero = element_bytes(dtype, 0.0);
    for (size_t i = 0; i < probs.size(); ++i) {
      if (!(probs[i] >= 0 && probs[i] <= 1))
        node_.fail("probability " + std::to_string(probs[i]) + " at position " + std::to_string(i) +
                   " is outside [0, 1]");
      const auto& v = Generator::uniform(g) < probs[i] ? one : zero;
      std::memcpy(dst + i * size, v.data(), size);
    }
    io.outputs[0] = std::move(out);
  }

 private:
  NodeDef node_;
  Generator gen_;
  DType dtype_ = DType::kUndefined;
};

// Multinomial: input [batch, classes] of unnormalised log-probabilities; sample_size class indices
// per row, drawn with replacement.
class MultinomialKernel : public Kernel {
 public:
  explicit MultinomialKernel(const NodeDef& node)
      : node_(node),
        gen_(node),
        samples_(node.attr_int("sample_size", 1)),
        dtype_(static_cast<DType>(node.attr_int("dtype", static_cast<int64_t>(DType::kInt32)))) {
    if (dtype_ != DType::kInt32 && dtype_ != DType::kInt64) node.fail("dtype must be int32 or int64");
    if (samples_ < 0) node.fail("sample_size must be >= 0, got " + std::to_string(samples_));
  }
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    if (!is_float_dtype(x.dtype())) fail_dtype(node_, x.dtype());
    if (x.rank() != 2 || x.dim(1) == 0) node_.fail("input must be [batch, classes >= 1], got " + shape_str(x.shape()));
    const int64_t batch = x.dim(0), classes = x.dim(1);
    const std::vector<double> logits = float_values(x);
    Tensor out(dtype_, {batch, samples_});
    std::mt19937_64 g = gen_.start();
    std::vector<double> cdf(static_cast<size_t>(classes));
    for (int64_t b = 0; b < batch; ++b) {
      const double* l = logits.data() + b * classes;
      double mx = -INFINITY;
      for (int64_t c = 0; c < classes; ++c) mx = std::max(mx, l[c]);
      if (!std::isfinite(mx)) node_.fail("row " + std::to_string(b) + " has no finite log-probability");
      double total = 0;
      for (int64_t c = 0; c < classes; ++c) cdf[c] = total += std::exp(l[c] - mx);
      for (int64_t s = 0; s < samples_; ++s) {
        const double u = Generator::uniform(g) * total;
        const int64_t k = std::min<int64_t>(classes - 1, std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
        if (dtype_ == DType::kInt32)
          out.data<int32_t>()[b * samples_ + s] = static_cast<int32_t>(k);
        else
          out.data<int64_t>()[b * samples_ + s] = k;
      }
    }
    io.outputs[0] = std::move(out);
  }

 private:
  NodeDef node_;
  Generator gen_;
  int64_t samples_;
  DType dtype_;
};

using RandomNormalKernel = RandomKernel<Dist::kNormal, false>;
using RandomUniformKernel = RandomKernel<Dist::kUniform, false>;
using RandomNormalLikeKernel = RandomKernel<Dist::kNormal, true>;
using RandomUniformLikeKernel = RandomKernel<Dist::kUniform, true>;

}  // namespace

PARITY_KERNEL("RandomNormal", 1, RandomNormalKernel, kFloatTypes16);
PARITY_KERNEL("RandomUniform", 1, RandomUniformKernel, kFloatTypes16);
PARITY_KERNEL("RandomNormalLike", 1, RandomNormalLikeKernel, kFloatTypes16);
PARITY_KERNEL("RandomUniformLike", 1, RandomUniformLikeKernel, kFloatTypes16);
PARITY_KERNEL("Bernoulli", 15, BernoulliKernel, kFloatTypes16);
PARITY_KERNEL("Multinomial", 7, MultinomialKernel, kFloatTypes16);

}  // namespace parity::refrt
