// conv_dnnl.h: Conv through oneDNN primitives on refrt's threads.
#include "conv_dnnl.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <type_traits>
#include <unordered_map>

#include "../src/dispatch.h"
#include "../src/scratch.h"
#include "../src/thread_pool.h"
#include "dnnl_common.h"
#include "parity/float16.h"
#include "parity/refrt/cpu_isa.h"

namespace parity::refrt::conv_dnnl {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

using dnnl_common::cpu_engine;
using dnnl_common::thread_stream;

int64_t round_up(int64_t v, int64_t b) { return (v + b - 1) / b * b; }

// float32 convolutions of this many input channels or more take oneDNN's channels-last brgconv where it offers it:
// ResNet-18's 256- and 512-channel 3x3 convs on 14x14 / 7x7 took 5-10 % (1 thread) and 5-20 % (2 threads) less
// than on jit:avx512_core with nChw16c, the X and Y moves included; at 64 and 128 channels it lost up to 10 %, and
// on a 3-channel stem 25 % (Intel Xeon, AMX host, best of 3 profiles each).
constexpr int64_t kChannelsLast = 256;

// The channel block of a 4-D layout oneDNN chose: 0 for plain NCHW, 8 / 16 for nChw8c / nChw16c, C for NHWC
// when `nhwc_ok` (one block of every channel: oneDNN's brgconv wants channels last), -1 otherwise.
int64_t channel_block(const memory::desc& md, const memory::dims& dims, memory::data_type type, bool nhwc_ok) {
  if (md == memory::desc(dims, type, Tag::nchw)) return 0;
  if (md == memory::desc(dims, type, Tag::nChw8c)) return 8;
  if (md == memory::desc(dims, type, Tag::nChw16c)) return 16;
  if (nhwc_ok && md == memory::desc(dims, type, Tag::nhwc)) return dims[1];
  return -1;
}

// 8 x 8 floats transposed in registers: rows r0..r7 (8 floats each) become columns.
__attribute__((target("avx2"))) inline void transpose8(__m256 r[8]) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
  r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
  r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
  r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
  r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
  r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
  r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
  r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

// Planes <-> channel blocks for 8 channels: to_blocks: blk[p * stride + j] = planes[j * plane + p];
// otherwise the reverse. p < n; 8 pixels at a time in registers, the rest one by one.
template <bool kToBlocks>
__attribute__((target("avx2"))) void move8(float* planes, int64_t plane, float* blk, int64_t stride, int64_t n) {
  int64_t p = 0;
  __m256 r[8];
  for (; p + 8 <= n; p += 8) {
    if (kToBlocks) {
      for (int j = 0; j < 8; ++j) r[j] = _mm256_loadu_ps(planes + j * plane + p);
      transpose8(r);
      for (int q = 0; q < 8; ++q) _mm256_storeu_ps(blk + (p + q) * stride, r[q]);
    } else {
      for (int q = 0; q < 8; ++q) r[q] = _mm256_loadu_ps(blk + (p + q) * stride);
      transpose8(r);
      for (int j = 0; j < 8; ++j) _mm256_storeu_ps(planes + j * plane + p, r[j]);
    }
  }
  for (; p < n; ++p)
    for (int64_t j = 0; j < 8; ++j) {
      if (kToBlocks)
        blk[p * stride + j] = planes[j * plane + p];
      else
        planes[j * plane + p] = blk[p * stride + j];
    }
}

// cn (<= block) channel planes of n pixels <-> one channel block (zeros past cn when to_blocks).
template <bool kToBlocks>
void move_block(float* planes, int64_t plane, float* blk, int64_t block, int64_t cn, int64_t n) {
  int64_t j = 0;
  for (; j + 8 <= cn; j += 8) move8<kToBlocks>(planes + j * plane, plane, blk + j, block, n);
  if (j == block) return;
  for (int64_t p = 0; p < n; ++p)
    for (int64_t q = j; q < block; ++q) {
      if (kToBlocks)
        blk[p * block + q] = q < cn ? planes[q * plane + p] : 0.0f;
      else if (q < cn)
        planes[q * plane + p] = blk[p * block + q];
    }
}

// 8 float16 / bfloat16 values widened to float32 (exactly).
template <DType D>
__attribute__((target("avx2,f16c"))) inline __m256 widen8(const uint16_t* p) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  if constexpr (D == DType::kFloat16) return _mm256_cvtph_ps(h);
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

template <DType D>
float widen1(uint16_t v) {
  return D == DType::kFloat16 ? half_to_float(v) : bf16_to_float(v);
}

// move8<true> from float16 / bfloat16 planes, widening on the way.
template <DType D>
__attribute__((target("avx2,f16c"))) void widen8_to_block(const uint16_t* planes, int64_t plane, float* blk,
                                                          int64_t stride, int64_t n) {
  int64_t p = 0;
  __m256 r[8];
  for (; p + 8 <= n; p += 8) {
    for (int j = 0; j < 8; ++j) r[j] = widen8<D>(planes + j * plane + p);
    transpose8(r);
    for (int q = 0; q < 8; ++q) _mm256_storeu_ps(blk + (p + q) * stride, r[q]);
  }
  for (; p < n; ++p)
    for (int64_t j = 0; j < 8; ++j) blk[p * stride + j] = widen1<D>(planes[j * plane + p]);
}

// move_block<true> from float16 / bfloat16 planes into a float32 channel block.
template <DType D>
void widen_to_block(const uint16_t* planes, int64_t plane, float* blk, int64_t block, int64_t cn, int64_t n) {
  int64_t j = 0;
  for (; j + 8 <= cn; j += 8) widen8_to_block<D>(planes + j * plane, plane, blk + j, block, n);
  if (j == block) return;
  for (int64_t p = 0; p < n; ++p)
    for (int64_t q = j; q < block; ++q) blk[p * block + q] = q < cn ? widen1<D>(planes[q * plane + p]) : 0.0f;
}

}  // namespace

struct Block {
  int64_t o0 = 0, o1 = 0, dst_block = 0;
  dnnl::convolution_forward conv;
  memory::desc src_md, dst_md, bias_md, scratch_md;
  memory weights;  // reordered for the primitive, owned
  size_t dst_bytes = 0, scratch_bytes = 0;
};

struct Plan {
  std::string_view impl;          // what oneDNN chose, for the profile
  std::string_view widened_impl;  // "float32 " + impl: a float32 primitive run for half X and Y
  int64_t src_block = 0;          // 0: X as it is (NCHW); 8 / 16 / C: X reordered into channel blocks first
  size_t src_bytes = 0;
  // bfloat16 X into the primitive's layout (oneDNN's JIT reorder; float32 X moves with move_block).
  std::optional<dnnl::reorder> src_reorder;
  memory::desc src_user_md;
  std::vector<Block> blocks;
};

bool enabled() {
  static const bool on = dnnl_common::allowed("PARITY_REFRT_CONV_DNNL");
  return on;
}

bool bf16_enabled() {
  static const bool on = enabled() && isa_allows(IsaLevel::kAvx512Bf16);
  return on;
}

bool Conv::applies(const Tensor& w, const nn::WindowGeometry& g, int64_t group, bool blocks) const {
  if (!w_.defined() || w.raw() != w_.raw() || w.dtype() != w_.dtype() || group != 1) return false;
  const bool bf16 = w.dtype() == DType::kBFloat16;
  if (bf16 ? !bf16_enabled() : (w.dtype() != DType::kFloat32 || !enabled())) return false;
  if (g.rank() == 1) return w.rank() == 3 && !blocks && (bf16 || g.kernel[0] > 1);
  return g.rank() == 2 && w.rank() == 4 && (bf16 || blocks || g.kernel[0] * g.kernel[1] > 1);
}

int64_t block_width(int64_t channels) {
  static const bool channels_last = isa_allows(IsaLevel::kAvx512);
  return channels_last ? channels : 8;
}

namespace {

// b channel planes of `plane` values <-> one block (16-bit values: float16 / bfloat16 chains' fallbacks).
template <bool kToBlocks>
void move_block16(uint16_t* planes, int64_t plane, uint16_t* blk, int64_t b) {
  for (int64_t p = 0; p < plane; ++p)
    for (int64_t j = 0; j < b; ++j) {
      if (kToBlocks)
        blk[p * b + j] = planes[j * plane + p];
      else
        planes[j * plane + p] = blk[p * b + j];
    }
}

// NCHW <-> [N, C / b, H, W, b] for float32 (vectorised moves) and 16-bit tensors, over io's pool when given.
template <bool kToBlocks>
void move_tensor(const Tensor& from, Tensor& to, int64_t b, int64_t plane, const KernelIO* io) {
  const Tensor& nchw = kToBlocks ? from : to;
  const int64_t count = nchw.dim(0) * nchw.dim(1) / b;
  auto* planes = static_cast<std::byte*>(const_cast<void*>(kToBlocks ? from.raw() : to.raw()));
  auto* blocks = static_cast<std::byte*>(const_cast<void*>(kToBlocks ? to.raw() : from.raw()));
  const size_t bytes = dtype_size(from.dtype()) * static_cast<size_t>(b * plane);
  const auto body = [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      std::byte* p = planes + static_cast<size_t>(t) * bytes;
      std::byte* k = blocks + static_cast<size_t>(t) * bytes;
      if (from.dtype() == DType::kFloat32)
        move_block<kToBlocks>(reinterpret_cast<float*>(p), plane, reinterpret_cast<float*>(k), b, b, plane);
      else
        move_block16<kToBlocks>(reinterpret_cast<uint16_t*>(p), plane, reinterpret_cast<uint16_t*>(k), b);
    }
  };
  io ? parallel_for(*io, count, 1, body) : body(0, count);
}

}  // namespace

Tensor to_blocks(const Tensor& nchw, const KernelIO* io) {
  if (nchw.rank() != 4 || nchw.dim(1) % 16 != 0 || (nchw.dtype() != DType::kFloat32 && dtype_size(nchw.dtype()) != 2))
    throw std::logic_error("to_blocks: a float32 or 16-bit [N, C, H, W] with C a multiple of 16");
  const int64_t n = nchw.dim(0), c = nchw.dim(1), b = block_width(c), plane = nchw.dim(2) * nchw.dim(3);
  Tensor out(nchw.dtype(), {n, c / b, nchw.dim(2), nchw.dim(3), b});
  move_tensor<true>(nchw, out, b, plane, io);
  return out;
}

Tensor from_blocks(const Tensor& blocked, const KernelIO* io) {
  const int64_t b = blocked.dim(4), plane = blocked.dim(2) * blocked.dim(3);
  Tensor out(blocked.dtype(), {blocked.dim(0), blocked.dim(1) * b, blocked.dim(2), blocked.dim(3)});
  move_tensor<false>(blocked, out, b, plane, io);
  return out;
}

namespace {

// The dims of one convolution primitive (oneDNN's dilations count from 0).
struct ConvDims {
  memory::dims src, w, dst, strides, dilates, pad_l, pad_r;
};

// The primitive for one block of output channels in the first layouts oneDNN has a usable kernel for, tried in
// order: `any`; for a few input channels (a stem) X as it is and Y blocked; both blocked. What oneDNN picks for
// `any`: blocked (nChw8c / nChw16c) JIT kernels on AVX2, but on AVX-512 often brgconv with channels-last tensors,
// which a plan takes where `nhwc_ok` (bfloat16; float32 from kChannelsLast input channels on): else the channel
// blocks of the CPU's vector width are asked for explicitly. oneDNN's gemm-based and reference convolutions are
// slower than refrt's own im2col path, so they are not usable.
std::optional<dnnl::convolution_forward::primitive_desc> find_primitive(const ConvDims& d, memory::data_type in_type,
                                                                        const memory::desc& bias_md,
                                                                        const dnnl::primitive_attr& attr, bool nhwc_ok,
                                                                        int64_t align, bool blocks_only) {
  auto pd_for = [&](Tag src_tag, Tag dst_tag) {
    const memory::desc src(d.src, in_type, src_tag), dst(d.dst, memory::data_type::f32, dst_tag);
    const memory::desc w(d.w, in_type, Tag::any);
    const auto kind = dnnl::prop_kind::forward_inference;
    const auto algo = dnnl::algorithm::convolution_direct;
    const dnnl::convolution_forward::desc desc =
        bias_md.is_zero()
            ? dnnl::convolution_forward::desc(kind, algo, src, w, dst, d.strides, d.dilates, d.pad_l, d.pad_r)
            : dnnl::convolution_forward::desc(kind, algo, src, w, bias_md, dst, d.strides, d.dilates, d.pad_l, d.pad_r);
    return dnnl::convolution_forward::primitive_desc(desc, attr, cpu_engine());
  };
  auto usable = [&](const dnnl::convolution_forward::primitive_desc& p) {
    const std::string impl = p.impl_info_str();
    return impl.rfind("gemm", 0) != 0 && impl.rfind("ref", 0) != 0 &&
           channel_block(p.src_desc(), d.src, in_type, nhwc_ok) >= 0 &&
           channel_block(p.dst_desc(), d.dst, memory::data_type::f32, nhwc_ok) >= 0;
  };
  const Tag blocked = align == 16 ? Tag::nChw16c : Tag::nChw8c;
  std::vector<std::pair<Tag, Tag>> tries;
  if (!blocks_only) tries.emplace_back(Tag::any, Tag::any);
  if (!blocks_only && d.src[1] < align) tries.emplace_back(Tag::nchw, blocked);
  if (blocks_only && align == 16) tries.emplace_back(Tag::nhwc, Tag::nhwc);  // block_width(): channels last
  if (!blocks_only || align == 8) tries.emplace_back(blocked, blocked);
  for (const auto& [src_tag, dst_tag] : tries) {
    try {
      dnnl::convolution_forward::primitive_desc candidate = pd_for(src_tag, dst_tag);
      if (usable(candidate)) return candidate;
    } catch (const dnnl::error&) {  // no implementation for these layouts
    }
  }
  return std::nullopt;
}

}  // namespace

std::shared_ptr<const Plan> Conv::plan_for(const nn::WindowGeometry& g, int64_t n, int64_t c, int64_t m, bool bias,
                                           int64_t threads, bool blocks) const {
  auto plan = std::make_shared<Plan>();
  const bool bf16 = w_.dtype() == DType::kBFloat16;
  const memory::data_type in_type = bf16 ? memory::data_type::bf16 : memory::data_type::f32;
  const size_t in_bytes = bf16 ? 2 : 4;
  const int64_t kh = g.kernel[0], kw = g.kernel[1];
  const memory::dims strides{g.stride[0], g.stride[1]}, dilates{g.dilation[0] - 1, g.dilation[1] - 1};
  const memory::dims pad_l{g.pad_begin[0], g.pad_begin[1]}, pad_r{g.pad_end[0], g.pad_end[1]};
  const memory::dims src_dims{n, c, g.in[0], g.in[1]};
  // Blocks of output channels on multiples of the widest channel block, one or two per thread.
  const int64_t align = isa_allows(IsaLevel::kAvx512) ? 16 : 8;
  const int64_t count = std::max<int64_t>(1, std::min(threads, m / align));
  const bool nhwc_ok = blocks ? align == 16 : (bf16 || c >= kChannelsLast);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::stream& stream = thread_stream();
  for (int64_t b = 0; b < count; ++b) {
    Block blk;
    blk.o0 = b == 0 ? 0 : m * b / count / align * align;
    blk.o1 = b + 1 == count ? m : m * (b + 1) / count / align * align;
    const int64_t mb = blk.o1 - blk.o0;
    const memory::dims w_dims{mb, c, kh, kw}, dst_dims{n, mb, g.out[0], g.out[1]};
    blk.bias_md = bias ? memory::desc({mb}, memory::data_type::f32, Tag::x) : memory::desc();
    const std::optional<dnnl::convolution_forward::primitive_desc> found =
        find_primitive({src_dims, w_dims, dst_dims, strides, dilates, pad_l, pad_r}, in_type, blk.bias_md, attr,
                       nhwc_ok, align, blocks);
    if (!found) return nullptr;
    const dnnl::convolution_forward::primitive_desc& pd = *found;
    const std::string impl = pd.impl_info_str();
    plan->impl = dnnl_common::impl_name(impl.c_str());
    plan->widened_impl = intern_impl("float32 " + std::string(plan->impl));
    const int64_t src_block = channel_block(pd.src_desc(), src_dims, in_type, nhwc_ok);
    blk.dst_block = channel_block(pd.dst_desc(), dst_dims, memory::data_type::f32, nhwc_ok);
    if (b > 0 && src_block != plan->src_block) return nullptr;  // (usable() saw both layouts blocked or plain)
    plan->src_block = src_block;
    plan->src_bytes = pd.src_desc().get_size();
    blk.src_md = pd.src_desc();
    blk.dst_md = pd.dst_desc();
    blk.dst_bytes = pd.dst_desc().get_size();
    blk.scratch_md = pd.scratchpad_desc();
    blk.scratch_bytes = blk.scratch_md.get_size();
    blk.conv = dnnl::convolution_forward(pd);
    blk.weights = memory(pd.weights_desc(), cpu_engine());
    memory user({w_dims, in_type, Tag::oihw}, cpu_engine(),
                const_cast<char*>(static_cast<const char*>(w_.raw()) + blk.o0 * c * kh * kw * in_bytes));
    dnnl::reorder(user, blk.weights).execute(stream, user, blk.weights);
    stream.wait();
    plan->blocks.push_back(std::move(blk));
  }
  if (bf16 && plan->src_block > 0) {
    plan->src_user_md = memory::desc(src_dims, in_type, Tag::nchw);
    plan->src_reorder = dnnl::reorder(
        dnnl::reorder::primitive_desc(cpu_engine(), plan->src_user_md, cpu_engine(), plan->blocks.front().src_md));
  }
  return plan;
}

bool Conv::run(const KernelIO& io, const nn::WindowGeometry& g, int64_t n, int64_t c, int64_t m, const float* px,
               const float* pb, const float* pz, float* py, const std::vector<ActStep>& acts, Blocks blocks,
               DType rounded_to) const {
  return w_.dtype() == DType::kFloat32 && run_typed(io, g, n, c, m, rounded_to, px, pb, pz, py, acts, blocks);
}

bool Conv::run(const KernelIO& io, const nn::WindowGeometry& g, int64_t n, int64_t c, int64_t m, DType half,
               const uint16_t* px, const float* pb, const uint16_t* pz, uint16_t* py, const std::vector<ActStep>& acts,
               Blocks blocks) const {
  const bool native = half == DType::kBFloat16 && w_.dtype() == DType::kBFloat16 && !blocks.any();
  const bool widened = (half == DType::kFloat16 || half == DType::kBFloat16) && w_.dtype() == DType::kFloat32 &&
                       cpu_has(CpuFeature::kF16c);
  return (native || widened) && run_typed(io, g, n, c, m, half, px, pb, pz, py, acts, blocks);
}

namespace {

// Float32 rows of Y's block (from the primitive's output) into Y, T = float or a half type (uint16_t, `half`): the
// added input, the activations, and for a half Y the one rounding.
template <typename T>
void finish_rows(float* rows, int64_t count, int64_t out_size, DType half, const T* pz, T* py,
                 const std::vector<ActStep>& acts) {
  for (int64_t o = 0; o < count; ++o) {
    float* row = rows + o * out_size;
    if constexpr (std::is_same_v<T, float>) {
      if (pz)
        for (int64_t p = 0; p < out_size; ++p) row[p] += pz[o * out_size + p];
      apply_activations(acts, row, out_size);
      if (is_float16_like(half)) round_through(half, row, out_size);  // widened half values
    } else {
      if (pz) {
        float* z = scratch<float>(out_size, ScratchSlot::kConvPhases);
        widen_span(half, pz + o * out_size, z, out_size);
        for (int64_t p = 0; p < out_size; ++p) row[p] += z[p];
      }
      apply_activations(acts, row, out_size);
      narrow_span(half, row, py + o * out_size, out_size);
    }
  }
}

// X as the primitive reads it: channel blocks of the plan's width (zeros past C) spread over the pool, float32 as it
// is, float16 / bfloat16 widened on the way for a float32 primitive, oneDNN's reorder for a bfloat16 one; NCHW X as
// it is, or widened whole for a float32 primitive (a stem's few channels). `blocked` holds what is made.
template <typename T>
const void* source(const KernelIO& io, const Plan& plan, bool native_half, DType io_type, int64_t n, int64_t c,
                   int64_t in_size, const T* px, Tensor& blocked) {
  constexpr bool kFloat = std::is_same_v<T, float>;
  const void* src = px;
  const int64_t sb = plan.src_block;
  if (sb > 0) {
    blocked = Tensor(DType::kUInt8, {static_cast<int64_t>(plan.src_bytes)});
    if (!native_half) {
      auto* pbk = reinterpret_cast<float*>(blocked.mutable_raw());
      // Tasks: (image, channel block, run of pixels); channels-last X is one block, split by pixels over the pool.
      const int64_t cblocks = round_up(c, sb) / sb, threads = io.pool ? io.pool->size() : 1;
      const int64_t runs = cblocks >= threads ? 1 : std::clamp<int64_t>(in_size / 256, 1, 2 * threads);
      parallel_for(io, n * cblocks * runs, 1, [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
          const int64_t b = t / runs, i = b / cblocks, cb = b % cblocks, c0 = cb * sb, cn = std::min(sb, c - c0);
          const int64_t p0 = in_size * (t % runs) / runs, count = in_size * (t % runs + 1) / runs - p0;
          float* to = pbk + b * in_size * sb + p0 * sb;
          const T* from = px + (i * c + c0) * in_size + p0;
          if constexpr (kFloat) {
            move_block<true>(const_cast<float*>(from), in_size, to, sb, cn, count);
          } else if (io_type == DType::kFloat16) {
            widen_to_block<DType::kFloat16>(from, in_size, to, sb, cn, count);
          } else {
            widen_to_block<DType::kBFloat16>(from, in_size, to, sb, cn, count);
          }
        }
      });
    } else {
      const dnnl_common::OneOpenmpThread one_thread;
      dnnl::stream& stream = thread_stream();
      memory from(plan.src_user_md, cpu_engine(), const_cast<T*>(px));
      memory to(plan.blocks.front().src_md, cpu_engine(), blocked.mutable_raw());
      plan.src_reorder->execute(stream, from, to);
      stream.wait();
    }
    src = blocked.raw();
  } else if (!kFloat && !native_half) {  // a float32 primitive on NCHW X (a stem): X widened as it is
    blocked = Tensor(DType::kFloat32, {n * c * in_size});
    widen_span(io_type, reinterpret_cast<const uint16_t*>(px), blocked.data<float>(), n * c * in_size);
    src = blocked.raw();
  }
  return src;
}

}  // namespace

namespace {

// Whether a plan made for a chain (find_primitive's blocks_only) has X and every block's Y in block_width()'s layout.
bool chain_layouts(const Plan& plan, int64_t c, int64_t m) {
  if (plan.src_block != block_width(c)) return false;
  for (const Block& blk : plan.blocks)
    if (blk.dst_block != (block_width(m) == m ? blk.o1 - blk.o0 : block_width(m))) return false;
  return true;
}

// The added input's `count` values (Y's dtype T, `half` for 16-bit) added to float32 ones.
template <typename T>
void add_run(float* dst, const T* z, int64_t count, DType half) {
  if constexpr (std::is_same_v<T, float>) {
    for (int64_t k = 0; k < count; ++k) dst[k] += z[k];
  } else {
    float* w = scratch<float>(count, ScratchSlot::kConvPhases);
    widen_span(half, z, w, count);
    for (int64_t k = 0; k < count; ++k) dst[k] += w[k];
  }
}

// `count` float32 values into Y (rounded once for a half Y; nothing to do where the primitive wrote Y itself).
template <typename T>
void store_run(const float* src, T* dst, int64_t count, DType half) {
  if constexpr (std::is_same_v<T, float>) {
    if (dst != src) std::memcpy(dst, src, static_cast<size_t>(count) * sizeof(float));
  } else {
    narrow_span(half, src, dst, count);
  }
}

// X of a chain as the float32 primitive reads it: float32 as it is, a half X widened whole (same layout).
template <typename T>
const void* chain_source(const KernelIO& io, DType io_type, const T* px, int64_t count, Tensor& widened) {
  if constexpr (std::is_same_v<T, float>) {
    return px;
  } else {
    widened = Tensor(DType::kFloat32, {count});
    float* to = widened.data<float>();
    parallel_for(io, count, 1 << 16, [&](int64_t b, int64_t e) { widen_span(io_type, px + b, to + b, e - b); });
    return to;
  }
}

// One block of output channels [o0, o0 + mb) of all n images (`out`: float32 as the primitive wrote it, dense) into Y
// in a chain's layout: the added input (Y's layout and dtype) and the activations first, in `out`. Channels last
// with more than one block: mb of each pixel's m values; otherwise one run per image.
template <typename T>
void finish_chain(float* out, int64_t n, int64_t mb, int64_t m, int64_t o0, int64_t out_size, DType half, const T* pz,
                  T* py, const std::vector<ActStep>& acts) {
  const bool split = block_width(m) == m && mb < m;
  const int64_t runs = split ? out_size : 1, run = split ? mb : mb * out_size, stride = split ? m : 0;
  for (int64_t i = 0; i < n; ++i) {
    float* o = out + i * mb * out_size;
    const int64_t base = split ? i * m * out_size + o0 : (i * m + o0) * out_size;
    if (pz)
      for (int64_t r = 0; r < runs; ++r) add_run(o + r * run, pz + base + r * stride, run, half);
    apply_activations(acts, o, mb * out_size);
    if (std::is_same_v<T, float> && is_float16_like(half)) round_through(half, o, mb * out_size);  // widened values
    for (int64_t r = 0; r < runs; ++r) store_run(o + r * run, py + base + r * stride, run, half);
  }
}

}  // namespace

template <typename T>
bool Conv::run_typed(const KernelIO& io, const nn::WindowGeometry& geometry, int64_t n, int64_t c, int64_t m,
                     DType io_type, const T* px, const float* pb, const T* pz, T* py, const std::vector<ActStep>& acts,
                     Blocks blocks) const {
  constexpr bool kFloat = std::is_same_v<T, float>;
  const nn::WindowGeometry g = nn::as_2d(geometry);
  const int64_t threads = io.pool ? io.pool->size() : 1;
  const std::vector<int64_t> key{n, c, g.in[0], g.in[1], pb != nullptr, threads, blocks.any()};
  const std::shared_ptr<const Plan> plan =
      plans_.get(key, [&] { return plan_for(g, n, c, m, pb != nullptr, threads, blocks.any()); });
  if (!plan) return false;
  if (blocks.any() && !chain_layouts(*plan, c, m)) return false;
  const bool native_half = !kFloat && w_.dtype() != DType::kFloat32;
  io.impl = (kFloat && io_type == DType::kFloat32) || native_half ? plan->impl : plan->widened_impl;
  const int64_t in_size = g.in[0] * g.in[1], out_size = g.out[0] * g.out[1];
  Tensor blocked;
  const void* src = blocks.x ? chain_source(io, io_type, px, n * c * in_size, blocked)
                             : source(io, *plan, native_half, io_type, n, c, in_size, px, blocked);
  parallel_each(io, static_cast<int64_t>(plan->blocks.size()), [&](int64_t b0, int64_t b1) {
    const dnnl_common::OneOpenmpThread one_thread;
    dnnl::stream& stream = thread_stream();
    for (int64_t b = b0; b < b1; ++b) {
      const Block& blk = plan->blocks[static_cast<size_t>(b)];
      const int64_t mb = blk.o1 - blk.o0, db = blk.dst_block;
      // One image (channels last: and one block of channels): the primitive writes straight into Y, where this
      // block's channels are one run.
      float* out = nullptr;
      const bool split_last = block_width(m) == m && mb < m;
      if constexpr (kFloat) out = blocks.y && n == 1 && !split_last ? py + blk.o0 * out_size : nullptr;
      if (!out) out = scratch<float>(blk.dst_bytes / sizeof(float) + 1, ScratchSlot::kConvColumns);
      auto* pad = scratch<std::byte>(blk.scratch_bytes + 1, ScratchSlot::kConvPacked);
      std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, memory(blk.src_md, cpu_engine(), const_cast<void*>(src))},
                                              {DNNL_ARG_WEIGHTS, blk.weights},
                                              {DNNL_ARG_DST, memory(blk.dst_md, cpu_engine(), out)},
                                              {DNNL_ARG_SCRATCHPAD, memory(blk.scratch_md, cpu_engine(), pad)}};
      if (pb) args.emplace(DNNL_ARG_BIAS, memory(blk.bias_md, cpu_engine(), const_cast<float*>(pb + blk.o0)));
      blk.conv.execute(stream, args);
      stream.wait();
      if (blocks.y) {
        finish_chain(out, n, mb, m, blk.o0, out_size, io_type, pz, py, acts);
        continue;
      }
      // Back to NCHW rows (of Y for float32, of a float32 buffer for a half Y), then the added input and the
      // activations while the rows are in cache.
      const int64_t mbp = db > 0 ? round_up(mb, db) : mb;
      float* rows_buffer = kFloat ? nullptr : scratch<float>(mb * out_size + 1, ScratchSlot::kDnnlOutput);
      for (int64_t i = 0; i < n; ++i) {
        T* yb = py + (i * m + blk.o0) * out_size;
        float* rows = nullptr;
        if constexpr (kFloat)
          rows = yb;
        else
          rows = db == 0 ? out + i * mb * out_size : rows_buffer;
        if (db == 0) {
          if constexpr (kFloat)
            std::memcpy(yb, out + i * mb * out_size, static_cast<size_t>(mb * out_size) * sizeof(float));
        } else {
          for (int64_t o = 0; o < mb; o += db) {
            const float* ob = out + (i * mbp + o) * out_size;
            move_block<false>(rows + o * out_size, out_size, const_cast<float*>(ob), db, std::min(db, mb - o),
                              out_size);
          }
        }
        finish_rows(rows, mb, out_size, io_type, pz ? pz + (i * m + blk.o0) * out_size : nullptr, yb, acts);
      }
    }
  });
  return true;
}

}  // namespace parity::refrt::conv_dnnl
