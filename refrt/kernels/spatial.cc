#include "spatial.h"

namespace parity::refrt {

WindowAttrs::WindowAttrs(const NodeDef& node)
    : auto_pad(node.attr("auto_pad", Attribute::Type::kString) ? node.attr("auto_pad")->s : "NOTSET"),
      kernel_shape(node.attr_ints("kernel_shape")),
      strides(node.attr_ints("strides")),
      dilations(node.attr_ints("dilations")),
      pads(node.attr_ints("pads")),
      ceil_mode(node.attr_int("ceil_mode", 0) != 0) {
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER")
    node.fail("auto_pad '" + auto_pad + "' is not one of NOTSET, VALID, SAME_UPPER, SAME_LOWER");
}

Window WindowAttrs::resolve(const NodeDef& node, const Shape& x, const std::vector<int64_t>& kernel_override) const {
  if (x.size() < 3 || x.size() > 5) node.fail("input must be [N, C, D1..Dn] with 1 <= n <= 3, got " + shape_str(x));
  Window w;
  w.rank = x.size() - 2;
  const std::vector<int64_t>& k = kernel_override.empty() ? kernel_shape : kernel_override;
  if (k.size() != w.rank) node.fail("kernel_shape has " + std::to_string(k.size()) + " dims for a rank-" + std::to_string(w.rank) + " input");
  auto check = [&](const std::vector<int64_t>& v, size_t n, const char* what) {
    if (!v.empty() && v.size() != n) node.fail(std::string(what) + " has " + std::to_string(v.size()) + " values, expected " + std::to_string(n));
  };
  check(strides, w.rank, "strides");
  check(dilations, w.rank, "dilations");
  check(pads, 2 * w.rank, "pads");
  const size_t off = 3 - w.rank;
  for (size_t d = 0; d < w.rank; ++d) {
    const size_t i = off + d;
    w.in[i] = x[2 + d];
    w.kernel[i] = k[d];
    w.stride[i] = strides.empty() ? 1 : strides[d];
    w.dilation[i] = dilations.empty() ? 1 : dilations[d];
    if (w.kernel[i] < 1 || w.stride[i] < 1 || w.dilation[i] < 1)
      node.fail("kernel, strides and dilations must be >= 1");
    const int64_t span = w.dilation[i] * (w.kernel[i] - 1) + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      w.out[i] = (w.in[i] + w.stride[i] - 1) / w.stride[i];
      const int64_t total = std::max<int64_t>(0, (w.out[i] - 1) * w.stride[i] + span - w.in[i]);
      w.pad_begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.pad_end[i] = total - w.pad_begin[i];
      continue;
    }
    if (auto_pad == "NOTSET" && !pads.empty()) {
      w.pad_begin[i] = pads[d];
      w.pad_end[i] = pads[w.rank + d];
      if (w.pad_begin[i] < 0 || w.pad_end[i] < 0) node.fail("pads must be >= 0");
    }
    const int64_t padded = w.in[i] + w.pad_begin[i] + w.pad_end[i] - span;
    if (padded < 0) node.fail("the kernel window is larger than the padded input " + shape_str(x));
    w.out[i] = (ceil_mode ? (padded + w.stride[i] - 1) / w.stride[i] : padded / w.stride[i]) + 1;
    // ceil_mode: a last window that would start in the end padding is dropped (as PyTorch and ORT do).
    if (ceil_mode && (w.out[i] - 1) * w.stride[i] >= w.in[i] + w.pad_begin[i]) --w.out[i];
  }
  return w;
}

}  // namespace parity::refrt
