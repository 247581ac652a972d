// Compress (9; 11 allows a negative axis): the slices along `axis` (or the elements of the flattened
// input without one) whose condition is true. A condition shorter than the axis drops the slices
// past its end, as the operator text allows; a longer one is an error. Any dtype (bytes are copied).
#include <cstring>

#include "elementwise.h"

namespace parity::refrt {
namespace {

class CompressKernel : public Kernel {
 public:
  explicit CompressKernel(const NodeDef& node)
      : node_(node), has_axis_(node.attr("axis") != nullptr), axis_(node.attr_int("axis", 0)) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    const Tensor& cond = io.in(1);
    if (cond.dtype() != DType::kBool) node_.fail("condition must be bool, got " + dtype_name(cond.dtype()));
    if (cond.rank() != 1) node_.fail("condition must be 1-D, got shape " + shape_str(cond.shape()));
    const size_t size = dtype_size(x.dtype());
    if (size == 0) fail_dtype(node_, x.dtype());
    int64_t outer = 1, n = x.numel(), inner = 1;
    size_t axis = 0;
    if (has_axis_) {
      if (x.rank() == 0) node_.fail("axis is given but the input is a scalar");
      axis = static_cast<size_t>(normalize_axis(axis_, static_cast<int64_t>(x.rank()), "axis"));
      n = x.dim(axis);
      for (size_t d = 0; d < x.rank(); ++d) {
        if (d < axis) outer *= x.dim(d);
        if (d > axis) inner *= x.dim(d);
      }
    }
    if (cond.numel() > n)
      node_.fail("condition has " + std::to_string(cond.numel()) + " entries but the " +
                 (has_axis_ ? "axis has " : "flattened input has ") + std::to_string(n));
    std::vector<int64_t> keep;
    for (int64_t i = 0; i < cond.numel(); ++i)
      if (cond.data<uint8_t>()[i]) keep.push_back(i);
    Shape shape = has_axis_ ? x.shape() : Shape{};
    if (has_axis_)
      shape[axis] = static_cast<int64_t>(keep.size());
    else
      shape = {static_cast<int64_t>(keep.size())};
    Tensor out(x.dtype(), shape);
    const auto* src = static_cast<const unsigned char*>(x.raw());
    auto* dst = static_cast<unsigned char*>(out.mutable_raw());
    const size_t row = static_cast<size_t>(inner) * size;
    for (int64_t o = 0; o < outer; ++o)
      for (size_t k = 0; k < keep.size(); ++k)
        std::memcpy(dst + (static_cast<size_t>(o) * keep.size() + k) * row,
                    src + static_cast<size_t>(o * n + keep[k]) * row, row);
    io.outputs[0] = std::move(out);
  }

 private:
  NodeDef node_;
  bool has_axis_;
  int64_t axis_;
};

// ReverseSequence (10): for each batch entry b, the first sequence_lens[b] steps along time_axis
// are reversed; the rest are copied. batch_axis and time_axis are 0 and 1 in either order.
class ReverseSequenceKernel : public Kernel {
 public:
  explicit ReverseSequenceKernel(const NodeDef& node)
      : node_(node), batch_axis_(node.attr_int("batch_axis", 1)), time_axis_(node.attr_int("time_axis", 0)) {
    if (!((batch_axis_ == 0 && time_axis_ == 1) || (batch_axis_ == 1 && time_axis_ == 0)))
      node.fail("batch_axis and time_axis must be 0 and 1 (in either order), got " + std::to_string(batch_axis_) +
                " and " + std::to_string(time_axis_));
  }
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    const Tensor& lens_t = io.in(1);
    const size_t size = dtype_size(x.dtype());
    if (size == 0) fail_dtype(node_, x.dtype());
    if (x.rank() < 2) node_.fail("input must have rank >= 2, got shape " + shape_str(x.shape()));
    const int64_t batch = x.dim(static_cast<size_t>(batch_axis_)), steps = x.dim(static_cast<size_t>(time_axis_));
    if (lens_t.dtype() != DType::kInt64 || lens_t.rank() != 1 || lens_t.dim(0) != batch)
      node_.fail("sequence_lens must be int64 of shape [" + std::to_string(batch) + "], got " +
                 dtype_name(lens_t.dtype()) + " " + shape_str(lens_t.shape()));
    const int64_t* lens = lens_t.data<int64_t>();
    for (int64_t b = 0; b < batch; ++b)
      if (lens[b] < 0 || lens[b] > steps)
        node_.fail("sequence_lens[" + std::to_string(b) + "] = " + std::to_string(lens[b]) + " is outside [0, " +
                   std::to_string(steps) + "]");
    const size_t row = static_cast<size_t>(x.numel() / std::max<int64_t>(1, batch * steps)) * size;
    Tensor out(x.dtype(), x.shape());
    const auto* src = static_cast<const unsigned char*>(x.raw());
    auto* dst = static_cast<unsigned char*>(out.mutable_raw());
    if (row == 0) return void(io.outputs[0] = std::move(out));
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t t = 0; t < steps; ++t) {
        const int64_t from = t < lens[b] ? lens[b] - 1 - t : t;
        std::memcpy(dst + static_cast<size_t>(offset(b, t, batch, steps)) * row,
                    src + static_cast<size_t>(offset(b, from, batch, steps)) * row, row);
      }
    io.outputs[0] = std::move(out);
  }

 private:
  int64_t offset(int64_t b, int64_t t, int64_t batch, int64_t steps) const {
    return batch_axis_ == 0 ? b * steps + t : t * batch + b;
  }
  NodeDef node_;
  int64_t batch_axis_, time_axis_;
};

}  // namespace

PARITY_KERNEL("Compress", 9, CompressKernel, kAllTypes);
PARITY_KERNEL("Compress", 11, CompressKernel, kAllTypes);
PARITY_KERNEL("ReverseSequence", 10, ReverseSequenceKernel, kAllTypes);

}  // namespace parity::refrt
