// NegativeLogLikelihoodLoss (12, 13, 22) and SoftmaxCrossEntropyLoss (12, 13). Input [N, C] or
// [N, C, d1, ...], target [N] or [N, d1, ...] (int32/int64), optional weight [C]. The loss of one
// position is -input[n, target, d...] * weight[target]; a target equal to ignore_index contributes
// loss 0 and weight 0. reduction: none (per position), sum, or mean = sum of losses / sum of the
// weights of the positions not ignored. Computed in double, rounded once to the input's dtype.
#include <cmath>

#include "double_io.h"

namespace parity::refrt {
namespace {

enum class Reduction { kNone, kSum, kMean };

Reduction parse_reduction(const NodeDef& node) {
  const Attribute* a = node.attr("reduction", Attribute::Type::kString);
  const std::string r = a ? a->s : "mean";
  if (r == "none") return Reduction::kNone;
  if (r == "sum") return Reduction::kSum;
  if (r == "mean") return Reduction::kMean;
  node.fail("reduction must be none, sum or mean, got '" + r + "'");
}

struct LossSpec {
  Reduction reduction;
  bool has_ignore;
  int64_t ignore_index;
};

// The loss of log-probabilities `logp` (shape of `x`) against `target`, as a tensor of x's dtype.
Tensor nll(const NodeDef& node, const Tensor& x, const std::vector<double>& logp, const Tensor& target,
           const Tensor* weight, const LossSpec& spec) {
  if (x.rank() < 2) node.fail("input must be [N, C, ...], got shape " + shape_str(x.shape()));
  const int64_t n = x.dim(0), c = x.dim(1), d = x.numel() / std::max<int64_t>(1, n * c);
  Shape want(x.shape());
  want.erase(want.begin() + 1);
  if (target.shape() != want || (target.dtype() != DType::kInt64 && target.dtype() != DType::kInt32))
    node.fail("target must be int32/int64 of shape " + shape_str(want) + ", got " + dtype_name(target.dtype()) + " " +
              shape_str(target.shape()));
  std::vector<double> w;
  if (weight) {
    if (weight->dtype() != x.dtype() || weight->shape() != Shape{c})
      node.fail("weight must be " + dtype_name(x.dtype()) + " of shape [" + std::to_string(c) + "], got " +
                dtype_name(weight->dtype()) + " " + shape_str(weight->shape()));
    w = float_values(*weight);
  }
  const std::vector<int64_t> t = int64_values(target, "target");
  std::vector<double> loss(t.size());
  double sum = 0, weight_sum = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < d; ++k) {
      const size_t at = static_cast<size_t>(i * d + k);
      const int64_t label = t[at];
      if (spec.has_ignore && label == spec.ignore_index) continue;  // loss 0, weight 0
      if (label < 0 || label >= c)
        node.fail("target value " + std::to_string(label) + " at position " + std::to_string(at) + " is outside [0, " +
                  std::to_string(c) + ")" + (spec.has_ignore ? " and is not ignore_index" : ""));
      const double wt = weight ? w[label] : 1.0;
      loss[at] = -logp[static_cast<size_t>((i * c + label) * d + k)] * wt;
      sum += loss[at];
      weight_sum += wt;
    }
  if (spec.reduction == Reduction::kNone) return float_tensor(x.dtype(), want, loss);
  return float_tensor(x.dtype(), {}, {spec.reduction == Reduction::kSum ? sum : sum / weight_sum});
}

LossSpec parse_loss(const NodeDef& node) {
  return {parse_reduction(node), node.attr("ignore_index") != nullptr, node.attr_int("ignore_index", 0)};
}

void check_float(const NodeDef& node, const Tensor& x) {
  if (!is_float_dtype(x.dtype()))
    node.fail("input must be a float tensor, got " + dtype_name(x.dtype()), ErrorKind::kUnsupported);
}

class NllLossKernel : public Kernel {
 public:
  explicit NllLossKernel(const NodeDef& node) : node_(node), spec_(parse_loss(node)) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    check_float(node_, x);
    io.outputs[0] = nll(node_, x, float_values(x), io.in(1), io.optional(2), spec_);
  }

 private:
  NodeDef node_;
  LossSpec spec_;
};

// log_softmax of the scores over dim 1, then the NLL loss of it; the second output (optional) is
// the log_softmax itself.
class SoftmaxCrossEntropyKernel : public Kernel {
 public:
  explicit SoftmaxCrossEntropyKernel(const NodeDef& node) : node_(node), spec_(parse_loss(node)) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    check_float(node_, x);
    if (x.rank() < 2) node_.fail("scores must be [N, C, ...], got shape " + shape_str(x.shape()));
    const int64_t n = x.dim(0), c = x.dim(1), d = x.numel() / std::max<int64_t>(1, n * c);
    std::vector<double> v = float_values(x);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < d; ++k) {
        double mx = -INFINITY, s = 0;
        for (int64_t j = 0; j < c; ++j) mx = std::max(mx, v[(i * c + j) * d + k]);
        for (int64_t j = 0; j < c; ++j) s += std::exp(v[(i * c + j) * d + k] - mx);
        const double lse = mx + std::log(s);
        for (int64_t j = 0; j < c; ++j) v[(i * c + j) * d + k] -= lse;
      }
    io.outputs[0] = nll(node_, x, v, io.in(1), io.optional(2), spec_);
    if (io.outputs.size() > 1) io.outputs[1] = float_tensor(x.dtype(), x.shape(), v);
  }

 private:
  NodeDef node_;
  LossSpec spec_;
};

}  // namespace

PARITY_KERNEL("NegativeLogLikelihoodLoss", 12, NllLossKernel, kFloatTypes16);
PARITY_KERNEL("NegativeLogLikelihoodLoss", 13, NllLossKernel, kFloatTypes16);
PARITY_KERNEL("SoftmaxCrossEntropyLoss", 12, SoftmaxCrossEntropyKernel, kFloatTypes16);
PARITY_KERNEL("SoftmaxCrossEntropyLoss", 13, SoftmaxCrossEntropyKernel, kFloatTypes16);

}  // namespace parity::refrt
