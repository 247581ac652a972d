// Internal: 8-bit convolutions (the fused QDQ Conv) through oneDNN's int8 convolutions, where they are exact:
// on CPUs with VNNI or AMX (matmul_dnnl::int8_enabled), whose byte products are summed in int32 without the
// saturating int16 pairs of the older kernels. oneDNN returns the exact int32 sums of (x - x_zp) * w (the
// input's zero point as its attribute, padding included), and refrt's own requantization turns them into
// the output, so the values are those of refrt's own integer kernels, bit for bit.
//
// Layouts: oneDNN's int8 convolutions want channels-last tensors; X (NCHW, uint8 or int8) is reordered per
// call by oneDNN's own reorder, in bands of rows over the pool; each block of output channels comes back as
// [N, H*W, channels] int32, is requantized row by row (contiguous, vectorised) and its 8-bit rows are moved
// into Y's planes by a reorder (a quarter of the bytes of the int32 sums). Weights:
// int8 with zero points 0 (what quantizers write for weights), one group, 1-D or 2-D; other weights keep
// refrt's kernels. Threads: as conv_dnnl.h, a block of output channels per pool thread, each its own
// single-threaded primitive with its weights reordered once.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "../src/kernel.h"
#include "nn_common.h"
#include "plan_cache.h"

namespace parity::refrt::qconv_dnnl {

struct Plan;

class Conv {
 public:
  // W [M, C, k...] int8 with all zero points 0, one group, rank 3 or 4; otherwise the conv stays refrt's.
  void set(const Tensor& w, const std::vector<int32_t>& w_zero_points, int64_t group);
  bool defined() const { return w_.defined(); }
  // Whether `w` is the tensor given to set() (a graph input overriding it would not be).
  bool holds(const Tensor& w) const { return w_.defined() && w.raw() == w_.raw(); }

  // Requantizes a block of sums: rows (output positions, every image's) of `cols` channels from c0,
  // sums[r * cols + j] -> out[r * cols + j] (8-bit).
  using BlockRequant = std::function<void(int64_t c0, int64_t cols, int64_t rows, const int32_t* sums, uint8_t* out)>;
  // Y [N, M, out...] (int8 or uint8 `out`, NCHW) from the exact int32 sums of (x - x_zp) conv W, requantized
  // by `requant`, block by block on the pool. false: oneDNN declined (Y untouched). On success io.impl
  // names oneDNN's implementation.
  bool run(const KernelIO& io, const nn::WindowGeometry& g, const Tensor& x, int32_t x_zp, DType out, void* y,
           const BlockRequant& requant) const;

 private:
  std::shared_ptr<const Plan> plan_for(const nn::WindowGeometry& g, int64_t n, int64_t c, int32_t zp, bool is_signed,
                                       int64_t threads) const;
  Tensor w_;
  dnnl_common::PlanCache<Plan> plans_;
};

}  // namespace parity::refrt::qconv_dnnl
