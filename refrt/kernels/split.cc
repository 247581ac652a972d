// Split: consecutive pieces of the input along an axis, one per output (byte copies, any dtype).
#include <cstring>

#include "../src/kernel.h"

namespace parity::refrt {
namespace {

class SplitKernel : public Kernel {
 public:
  // split sizes: attribute before 13, optional input from 13; num_outputs from 18.
  explicit SplitKernel(const NodeDef& node)
      : node_(node),
        axis_(node.attr_int("axis", 0)),
        split_attr_(node.opset < 13 ? node.attr_ints("split") : std::vector<int64_t>{}),
        num_outputs_(node.opset >= 18 ? node.attr_int("num_outputs", 0) : 0),
        has_num_outputs_(node.opset >= 18 && node.attr("num_outputs")) {
    if (has_num_outputs_ && num_outputs_ != static_cast<int64_t>(node.outputs.size()))
      node.fail("num_outputs " + std::to_string(num_outputs_) + " differs from the " +
                std::to_string(node.outputs.size()) + " outputs of the node");
  }
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    if (x.rank() == 0) node_.fail("input must have rank >= 1");
    const size_t axis = static_cast<size_t>(normalize_axis(axis_, static_cast<int64_t>(x.rank()), "axis"));
    const int64_t dim = x.dim(axis), parts = static_cast<int64_t>(io.outputs.size());
    const Tensor* split_input = node_.opset >= 13 ? io.optional(1) : nullptr;
    std::vector<int64_t> sizes = split_input ? int64_values(*split_input, "split") : split_attr_;
    if (split_input && has_num_outputs_) node_.fail("split input and num_outputs are both given");
    if (!sizes.empty()) {
      if (static_cast<int64_t>(sizes.size()) != parts)
        node_.fail("split has " + std::to_string(sizes.size()) + " entries for " + std::to_string(parts) + " outputs");
      int64_t total = 0;
      for (int64_t s : sizes) {
        if (s < 0) node_.fail("split entry " + std::to_string(s) + " is negative");
        if (__builtin_add_overflow(total, s, &total)) node_.fail("split sizes overflow");
      }
      if (total != dim)
        node_.fail("split sizes sum to " + std::to_string(total) + ", axis " + std::to_string(axis) + " has " +
                   std::to_string(dim));
    } else if (has_num_outputs_) {  // pieces of ceil(dim / n), the last one smaller
      const int64_t piece = (dim + parts - 1) / parts;
      if (piece * (parts - 1) > dim)
        node_.fail("axis of size " + std::to_string(dim) + " cannot be split into " + std::to_string(parts) +
                   " non-empty pieces of " + std::to_string(piece));
      for (int64_t p = 0; p < parts; ++p) sizes.push_back(std::min(piece, dim - p * piece));
    } else {
      if (dim % parts != 0)
        node_.fail("axis of size " + std::to_string(dim) + " does not split evenly into " + std::to_string(parts));
      sizes.assign(static_cast<size_t>(parts), dim / parts);
    }
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < axis; ++d) outer *= x.dim(d);
    for (size_t d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
    const size_t es = dtype_size(x.dtype());
    const char* src = static_cast<const char*>(x.raw());
    int64_t start = 0;
    for (size_t p = 0; p < sizes.size(); ++p) {
      Shape shape = x.shape();
      shape[axis] = sizes[p];
      Tensor out(x.dtype(), shape);
      const size_t row = static_cast<size_t>(sizes[p] * inner) * es;
      if (out.numel() > 0) {
        char* dst = static_cast<char*>(out.mutable_raw());
        for (int64_t o = 0; o < outer; ++o)
          std::memcpy(dst + static_cast<size_t>(o) * row, src + static_cast<size_t>((o * dim + start) * inner) * es,
                      row);
      }
      start += sizes[p];
      io.outputs[p] = std::move(out);
    }
  }

 private:
  NodeDef node_;
  int64_t axis_;
  std::vector<int64_t> split_attr_;
  int64_t num_outputs_;
  bool has_num_outputs_;
};

}  // namespace

// Split 2 (split attribute); 11 negative axis (accepted from 2); 13 split as input; 18 num_outputs.
PARITY_KERNEL("Split", 2, SplitKernel, kAllTypes);
PARITY_KERNEL("Split", 13, SplitKernel, kAllTypes);
PARITY_KERNEL("Split", 18, SplitKernel, kAllTypes);

}  // namespace parity::refrt
