// Internal to the nn kernels: window geometry shared by Conv and the pools. Spatial ranks 1..3 are
// handled as 3-D with unit dims in front, so one loop nest serves Conv1d/2d/3d and every pool.
#pragma once
#include <array>
#include <string>
#include <vector>

#include "../src/kernel.h"

namespace parity::refrt {

struct Window {
  size_t rank = 0;                            // spatial rank of the node (1..3)
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, kernel{1, 1, 1}, stride{1, 1, 1}, dilation{1, 1, 1};
  std::array<int64_t, 3> pad_begin{0, 0, 0}, pad_end{0, 0, 0};
  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
  int64_t kernel_size() const { return kernel[0] * kernel[1] * kernel[2]; }
  Shape out_shape(int64_t n, int64_t c) const {
    Shape s{n, c};
    for (size_t d = 3 - rank; d < 3; ++d) s.push_back(out[d]);
    return s;
  }
};

// The node's geometry attributes, parsed once (kernel_shape may come from the weight at run time).
struct WindowAttrs {
  std::string auto_pad;
  std::vector<int64_t> kernel_shape, strides, dilations, pads;
  bool ceil_mode = false;
  explicit WindowAttrs(const NodeDef& node);
  // Geometry for an input of `x_shape` ([N, C, spatial...]); `kernel` overrides kernel_shape when given.
  Window resolve(const NodeDef& node, const Shape& x_shape, const std::vector<int64_t>& kernel = {}) const;
};

}  // namespace parity::refrt
