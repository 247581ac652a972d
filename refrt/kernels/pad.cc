// Pad: constant, reflect, edge and wrap modes; negative pads crop. Each output dim maps every output
// coordinate to a source coordinate (or -1 = the constant), so any dtype is a byte copy.
#include <cstring>

#include "../src/element_values.h"
#include "../src/kernel.h"

namespace parity::refrt {
namespace {

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

PadMode parse_mode(const NodeDef& node) {
  const Attribute* a = node.attr("mode", Attribute::Type::kString);
  const std::string m = a ? a->s : "constant";
  if (m == "constant") return PadMode::kConstant;
  if (m == "reflect") return PadMode::kReflect;
  if (m == "edge") return PadMode::kEdge;
  if (m == "wrap" && node.opset >= 19) return PadMode::kWrap;
  node.fail("mode '" + m + "' is not defined at opset " + std::to_string(node.opset));
}

// Source coordinate of output coordinate o on a dim of size n padded by `before`; -1 = constant.
int64_t source_coordinate(PadMode mode, int64_t o, int64_t before, int64_t n) {
  const int64_t i = o - before;
  if (i >= 0 && i < n) return i;
  switch (mode) {
    case PadMode::kConstant:
      return -1;
    case PadMode::kEdge:
      return i < 0 ? 0 : n - 1;
    case PadMode::kWrap:
      return ((i % n) + n) % n;
    case PadMode::kReflect: {
      if (n == 1) return 0;
      const int64_t period = 2 * (n - 1);
      int64_t r = ((i % period) + period) % period;
      return r < n ? r : period - r;
    }
  }
  return -1;
}

Tensor pad_tensor(const NodeDef& node, PadMode mode, const Tensor& x, const std::vector<int64_t>& pads,
                  const std::vector<int64_t>& axes, const std::vector<unsigned char>& value) {
  const size_t rank = x.rank(), k = axes.size();
  if (pads.size() != 2 * k)
    node.fail("pads has " + std::to_string(pads.size()) + " entries, expected " + std::to_string(2 * k));
  std::vector<int64_t> before(rank, 0), after(rank, 0);
  std::vector<bool> seen(rank, false);
  for (size_t j = 0; j < k; ++j) {
    const size_t a = static_cast<size_t>(normalize_axis(axes[j], static_cast<int64_t>(rank), "axis"));
    if (seen[a]) node.fail("axes repeat axis " + std::to_string(a));
    seen[a] = true;
    before[a] = pads[j];
    after[a] = pads[j + k];
  }
  Shape out_shape(rank);
  for (size_t d = 0; d < rank; ++d) {
    int64_t size = 0;
    if (__builtin_add_overflow(x.dim(d), before[d], &size) || __builtin_add_overflow(size, after[d], &size) || size < 0)
      node.fail("pads " + shape_str(pads) + " give a negative or overflowing size for dim " + std::to_string(d) +
                " of " + shape_str(x.shape()));
    if (mode != PadMode::kConstant && x.dim(d) == 0 && size > 0)
      node.fail("cannot pad an empty dim in a non-constant mode");
    out_shape[d] = size;
  }
  Tensor out(x.dtype(), out_shape);  // absurd pads fail here, on the allocation limit
  if (out.numel() == 0) return out;
  // Per dim, the source coordinate of each output coordinate.
  std::vector<std::vector<int64_t>> source(rank);
  for (size_t d = 0; d < rank; ++d) {
    source[d].resize(static_cast<size_t>(out_shape[d]));
    for (int64_t o = 0; o < out_shape[d]; ++o)
      source[d][static_cast<size_t>(o)] = source_coordinate(mode, o, before[d], x.dim(d));
  }
  const std::vector<int64_t> strides = row_major_strides(x.shape());
  const size_t es = dtype_size(x.dtype());
  const char* src = static_cast<const char*>(x.raw());
  char* dst = static_cast<char*>(out.mutable_raw());
  std::vector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < out.numel(); ++i) {
    int64_t off = 0;
    bool constant = false;
    for (size_t d = 0; d < rank && !constant; ++d) {
      const int64_t s = source[d][static_cast<size_t>(index[d])];
      constant = s < 0;
      off += s * strides[d];
    }
    std::memcpy(dst + static_cast<size_t>(i) * es,
                constant ? static_cast<const void*>(value.data()) : src + static_cast<size_t>(off) * es, es);
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < out_shape[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

std::vector<int64_t> all_axes(size_t rank) {
  std::vector<int64_t> axes(rank);
  for (size_t i = 0; i < rank; ++i) axes[i] = static_cast<int64_t>(i);
  return axes;
}

// Pad 11+: pads, constant_value (optional scalar of x's dtype) and, from 18, axes are inputs.
class PadKernel : public Kernel {
 public:
  explicit PadKernel(const NodeDef& node) : node_(node), mode_(parse_mode(node)) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    const std::vector<int64_t> pads = int64_values(io.in(1), "pads");
    const Tensor* value = io.optional(2);
    std::vector<unsigned char> bytes(dtype_size(x.dtype()), 0);
    if (value) {
      if (value->dtype() != x.dtype() || value->numel() != 1)
        node_.fail("constant_value must be one " + dtype_name(x.dtype()) + " element, got " +
                   dtype_name(value->dtype()) + " " + shape_str(value->shape()));
      std::memcpy(bytes.data(), value->raw(), bytes.size());
    }
    const Tensor* axes = node_.opset >= 18 ? io.optional(3) : nullptr;
    io.outputs[0] = pad_tensor(node_, mode_, x, pads, axes ? int64_values(*axes, "axes") : all_axes(x.rank()), bytes);
  }

 private:
  NodeDef node_;
  PadMode mode_;
};

// Pad 2: pads and value (a float) are attributes.
class PadAttributesKernel : public Kernel {
 public:
  explicit PadAttributesKernel(const NodeDef& node)
      : node_(node), mode_(parse_mode(node)), pads_(node.attr_ints("pads")), value_(node.attr_float("value", 0.0f)) {
    if (!node.attr("pads")) node.fail("missing required attribute 'pads'");
  }
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    io.outputs[0] = pad_tensor(node_, mode_, x, pads_, all_axes(x.rank()), element_bytes(x.dtype(), value_));
  }

 private:
  NodeDef node_;
  PadMode mode_;
  std::vector<int64_t> pads_;
  float value_;
};

}  // namespace

// Pad 2: attributes; 11: pads/constant_value inputs; 13 types; 18 axes input; 19 wrap mode.
PARITY_KERNEL("Pad", 2, PadAttributesKernel, kAllTypes);
PARITY_KERNEL("Pad", 11, PadKernel, kAllTypes);
PARITY_KERNEL("Pad", 18, PadKernel, kAllTypes);
PARITY_KERNEL("Pad", 19, PadKernel, kAllTypes);

}  // namespace parity::refrt
