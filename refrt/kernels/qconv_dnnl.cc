// qconv_dnnl.h: exact 8-bit convolutions through oneDNN on refrt's threads.
#include "qconv_dnnl.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_map>

#include "../src/scratch.h"
#include "../src/thread_pool.h"
#include "dnnl_common.h"

namespace parity::refrt::qconv_dnnl {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;
using DT = memory::data_type;

}  // namespace

struct Block {
  int64_t o0 = 0, o1 = 0;
  dnnl::convolution_forward conv;
  memory::desc src_md, dst_md, scratch_md;
  memory weights;
};

struct Plan {
  std::string_view impl;
  std::vector<Block> blocks;
};

void Conv::set(const Tensor& w, const std::vector<int32_t>& w_zero_points, int64_t group) {
  const bool zero = std::all_of(w_zero_points.begin(), w_zero_points.end(), [](int32_t z) { return z == 0; });
  if (w.dtype() == DType::kInt8 && zero && group == 1 && (w.rank() == 3 || w.rank() == 4)) w_ = w;
}

std::shared_ptr<const Plan> Conv::plan_for(const nn::WindowGeometry& g, int64_t n, int64_t c, int32_t zp,
                                           bool is_signed, int64_t threads) const {
  auto plan = std::make_shared<Plan>();
  const int64_t m = w_.dim(0), kh = g.kernel[0], kw = g.kernel[1];
  const memory::dims strides{g.stride[0], g.stride[1]}, dilates{g.dilation[0] - 1, g.dilation[1] - 1};
  const memory::dims pad_l{g.pad_begin[0], g.pad_begin[1]}, pad_r{g.pad_end[0], g.pad_end[1]};
  const memory::dims src_dims{n, c, g.in[0], g.in[1]};
  const int64_t count = std::max<int64_t>(1, std::min(threads, m / 16));
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (zp != 0) attr.set_zero_points(DNNL_ARG_SRC, 0, {zp});
  dnnl::stream& stream = dnnl_common::thread_stream();
  for (int64_t b = 0; b < count; ++b) {
    Block blk;
    blk.o0 = b == 0 ? 0 : m * b / count / 16 * 16;
    blk.o1 = b + 1 == count ? m : m * (b + 1) / count / 16 * 16;
    const int64_t mb = blk.o1 - blk.o0;
    const memory::dims w_dims{mb, c, kh, kw}, dst_dims{n, mb, g.out[0], g.out[1]};
    const memory::desc src(src_dims, is_signed ? DT::s8 : DT::u8, Tag::nhwc), dst(dst_dims, DT::s32, Tag::nhwc);
    const memory::desc w_any(w_dims, DT::s8, Tag::any);
    const dnnl::convolution_forward::primitive_desc pd(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src,
                                        w_any, dst, strides, dilates, pad_l, pad_r),
        attr, dnnl_common::cpu_engine());
    // Only the exact kernels (VNNI dot products or AMX tiles), never a gemm or reference fallback.
    const std::string impl = pd.impl_info_str();
    if ((impl.find("vnni") == std::string::npos && impl.find("amx") == std::string::npos) ||
        impl.rfind("gemm", 0) == 0 || impl.rfind("ref", 0) == 0)
      return nullptr;
    plan->impl = dnnl_common::impl_name(impl.c_str());
    blk.src_md = pd.src_desc();
    blk.dst_md = pd.dst_desc();
    blk.scratch_md = pd.scratchpad_desc();
    blk.conv = dnnl::convolution_forward(pd);
    blk.weights = memory(pd.weights_desc(), dnnl_common::cpu_engine());
    memory user({w_dims, DT::s8, Tag::oihw}, dnnl_common::cpu_engine(),
                const_cast<int8_t*>(w_.data<int8_t>() + blk.o0 * c * kh * kw));
    dnnl::reorder(user, blk.weights).execute(stream, user, blk.weights);
    stream.wait();
    plan->blocks.push_back(std::move(blk));
  }
  return plan;
}

bool Conv::run(const KernelIO& io, const nn::WindowGeometry& geometry, const Tensor& x, int32_t x_zp, DType out,
               void* y, const BlockRequant& requant) const {
  if (!w_.defined() || geometry.rank() < 1 || geometry.rank() > 2 || x.numel() == 0) return false;
  if (x.dtype() != DType::kUInt8 && x.dtype() != DType::kInt8) return false;
  if (out != DType::kUInt8 && out != DType::kInt8) return false;
  const nn::WindowGeometry g = nn::as_2d(geometry);
  const int32_t zp = x_zp;
  const bool is_signed = x.dtype() == DType::kInt8;
  const int64_t n = x.dim(0), c = x.dim(1), threads = io.pool ? io.pool->size() : 1;
  const std::vector<int64_t> key{n, c, g.in[0], g.in[1], zp, is_signed, threads};
  const std::shared_ptr<const Plan> plan = plans_.get(key, [&] { return plan_for(g, n, c, zp, is_signed, threads); });
  if (!plan) return false;
  io.impl = plan->impl;
  const int64_t ih = g.in[0], iw = g.in[1], in_size = ih * iw, out_size = g.out[0] * g.out[1], m = w_.dim(0);
  const DT x_type = is_signed ? DT::s8 : DT::u8, y_type = out == DType::kInt8 ? DT::s8 : DT::u8;
  const dnnl::engine& engine = dnnl_common::cpu_engine();
  // X into channels-last by oneDNN's reorder, in bands of rows over the pool (strided views of both).
  auto* src = scratch<uint8_t>(plan->blocks[0].src_md.get_size(), ScratchSlot::kQConvInput);
  const auto* px = static_cast<const uint8_t*>(x.raw());
  const int64_t bands = std::min<int64_t>(ih, std::max<int64_t>(threads, 1));
  parallel_each(io, n * bands, [&](int64_t t0, int64_t t1) {
    const dnnl_common::OneOpenmpThread one_thread;
    dnnl::stream& stream = dnnl_common::thread_stream();
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t i = t / bands, h0 = ih * (t % bands) / bands, h1 = ih * (t % bands + 1) / bands;
      const memory::dims dims{1, c, h1 - h0, iw};
      memory from({dims, x_type, memory::dims{c * in_size, in_size, iw, 1}}, engine,
                  const_cast<uint8_t*>(px + i * c * in_size + h0 * iw));
      memory to({dims, x_type, memory::dims{in_size * c, 1, iw * c, c}}, engine, src + (i * in_size + h0 * iw) * c);
      dnnl::reorder(from, to).execute(stream, from, to);
      stream.wait();
    }
  });
  // Each block of output channels: the convolution, its sums requantized row by row (channels-last), and the
  // 8-bit rows moved into Y's planes by oneDNN's reorder.
  auto* py = static_cast<uint8_t*>(y);
  parallel_each(io, static_cast<int64_t>(plan->blocks.size()), [&](int64_t b0, int64_t b1) {
    const dnnl_common::OneOpenmpThread one_thread;
    dnnl::stream& stream = dnnl_common::thread_stream();
    for (int64_t b = b0; b < b1; ++b) {
      const Block& blk = plan->blocks[static_cast<size_t>(b)];
      const int64_t mb = blk.o1 - blk.o0, rows = n * out_size;
      auto* sums = scratch<int32_t>(static_cast<size_t>(rows * mb), ScratchSlot::kDnnlOutput);
      auto* bytes = scratch<uint8_t>(static_cast<size_t>(rows * mb), ScratchSlot::kConvColumns);
      auto* pad = scratch<std::byte>(blk.scratch_md.get_size() + 1, ScratchSlot::kDnnlScratchpad);
      blk.conv.execute(stream, {{DNNL_ARG_SRC, memory(blk.src_md, engine, src)},
                                {DNNL_ARG_WEIGHTS, blk.weights},
                                {DNNL_ARG_DST, memory(blk.dst_md, engine, sums)},
                                {DNNL_ARG_SCRATCHPAD, memory(blk.scratch_md, engine, pad)}});
      stream.wait();
      requant(blk.o0, mb, rows, sums, bytes);
      const memory::dims dims{n, mb, g.out[0], g.out[1]};
      memory from({dims, y_type, Tag::nhwc}, engine, bytes);
      memory to({dims, y_type, memory::dims{m * out_size, out_size, g.out[1], 1}}, engine, py + blk.o0 * out_size);
      dnnl::reorder(from, to).execute(stream, from, to);
      stream.wait();
    }
  });
  return true;
}

}  // namespace parity::refrt::qconv_dnnl
