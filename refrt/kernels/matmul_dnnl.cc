// matmul_dnnl.h: products with a constant B through oneDNN's matmul primitive, on refrt's threads.
#include "matmul_dnnl.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <unordered_map>

#include "../src/dispatch.h"
#include "../src/gemm.h"
#include "../src/scratch.h"
#include "../src/thread_pool.h"
#include "dnnl_common.h"
#include "parity/fs.h"
#include "parity/refrt/cpu_isa.h"

namespace parity::refrt::matmul_dnnl {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;
using DT = memory::data_type;

// One column block of B, packed, and the primitives that use it (one per row count).
struct Block {
  int64_t n0 = 0, nb = 0;
  memory::desc weights_md;
  memory weights;  // owned, in the layout the first primitive asked for
  mutable std::mutex mutex;
  struct Prim {
    dnnl::matmul matmul;
    memory::desc src_md, dst_md, bias_md, scratch_md;
    std::string_view impl;
    bool acts_fused = false;  // the activations are oneDNN post-ops of this primitive
  };
  mutable std::map<int64_t, std::shared_ptr<const Prim>> prims;  // by rows; nullptr: declined
};

bool int8_impl_is_exact(const std::string& impl) {
  // Exact u8 x s8 sums need VNNI (vpdpbusd) or AMX tiles; oneDNN's other int8 kernels add pairs of
  // products in a saturating int16.
  return impl.find("vnni") != std::string::npos || impl.find("amx") != std::string::npos;
}

// A finished float32 row of C (n values): `acts` applied (null: none, or the kernel applied them), then a half C's one
// rounding, in place where C is kept widened, else into `narrow_to`.
void finish_row(const std::vector<ActStep>* acts, DType c_type, bool c_widened, float* row, int64_t n,
                uint16_t* narrow_to) {
  if (acts && !acts->empty()) apply_activations(*acts, row, n);
  if (c_type == DType::kFloat32) return;
  if (c_widened)
    round_through(c_type, row, n);
  else
    narrow_span(c_type, row, narrow_to, n);
}

}  // namespace

struct Packs {
  std::vector<std::unique_ptr<Block>> blocks;
  bool split_rows = false;  // one block: A's rows are split over the pool instead
};

bool enabled() {
  static const bool on = dnnl_common::allowed("PARITY_REFRT_MATMUL_DNNL");
  return on;
}

bool float_enabled() { return enabled() && dnnl_common::float_gemm_prefers_onednn(); }

bool int8_enabled() { return enabled() && dnnl_common::has_vnni(); }

bool bf16_enabled() { return enabled() && isa_allows(IsaLevel::kAvx512Bf16); }

void ConstantB::set(const Tensor& b, bool trans, Kind kind, std::vector<ActStep> acts) {
  b_ = b;
  acts_ = std::move(acts);
  trans_ = trans;
  kind_ = kind;
  k_ = trans ? b.dim(1) : b.dim(0);
  n_ = trans ? b.dim(0) : b.dim(1);
}

namespace {

using Kind = ConstantB::Kind;
DT a_type(Kind kind) { return kind == Kind::kInt8 ? DT::u8 : kind == Kind::kBFloat16 ? DT::bf16 : DT::f32; }
DT b_type(Kind kind) { return kind == Kind::kInt8 ? DT::s8 : kind == Kind::kBFloat16 ? DT::bf16 : DT::f32; }
DT c_type(Kind kind) { return kind == Kind::kInt8 ? DT::s32 : DT::f32; }
size_t a_size(Kind kind) { return kind == Kind::kInt8 ? 1 : kind == Kind::kBFloat16 ? 2 : 4; }

// The activations as oneDNN post-ops, when every step has an exact counterpart there: Relu, and the exact
// GELU 0.5 x (1 + erf(x / sqrt 2)) (oneDNN's erf within a few ulp, as refrt's own vmath erf). nullopt: refrt
// applies them.
std::optional<dnnl::post_ops> post_ops_for(const std::vector<ActStep>& acts) {
  dnnl::post_ops ops;
  for (const ActStep& s : acts) {
    if (s.kind == ActKind::kRelu) {
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    } else if (s.kind == ActKind::kGeluErf && std::fabs(s.p[0] - 0.70710678f) < 1e-7f && s.p[1] == 0.5f &&
               s.p[2] == 1.0f) {
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_gelu_erf, 0.0f, 0.0f);
    } else {
      return std::nullopt;
    }
  }
  return ops;
}

// The primitive for `rows` x block.nb with B in the block's packed layout; nullptr when oneDNN offers nothing
// acceptable. C is dense [rows, nb]: oneDNN 2.6 answers a strided C (a column block of the whole C) with its reference
// kernel, so column blocks are computed into scratch and copied out.
std::shared_ptr<const Block::Prim> make_prim(ConstantB::Kind kind, int64_t rows, int64_t k, int64_t lda, bool bias,
                                             const memory::desc& weights_md, const std::vector<ActStep>& acts) {
  auto p = std::make_shared<Block::Prim>();
  const int64_t nb = weights_md.dims()[1];
  p->src_md = memory::desc({rows, k}, a_type(kind), memory::dims{lda, 1});
  p->dst_md = memory::desc({rows, nb}, c_type(kind), Tag::ab);
  p->bias_md = bias ? memory::desc({1, nb}, DT::f32, Tag::ab) : memory::desc();
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (const auto ops = acts.empty() ? std::nullopt : post_ops_for(acts)) {
    attr.set_post_ops(*ops);
    p->acts_fused = true;
  }
  const dnnl::matmul::desc desc = bias ? dnnl::matmul::desc(p->src_md, weights_md, p->bias_md, p->dst_md)
                                       : dnnl::matmul::desc(p->src_md, weights_md, p->dst_md);
  const dnnl::matmul::primitive_desc pd(desc, attr, dnnl_common::cpu_engine());
  const std::string impl = pd.impl_info_str();
  // oneDNN's reference kernels are far slower than refrt's own; int8 must be exact.
  if (impl.rfind("ref", 0) == 0) return nullptr;
  if (kind == ConstantB::Kind::kInt8 && !int8_impl_is_exact(impl)) return nullptr;
  p->scratch_md = pd.scratchpad_desc();
  p->matmul = dnnl::matmul(pd);
  p->impl = dnnl_common::impl_name(impl.c_str());
  return p;
}

}  // namespace

std::shared_ptr<const Packs> ConstantB::packs_for(int64_t threads, int64_t m, bool narrow) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const int64_t key = 2 * threads + (narrow ? 1 : 0);
  auto it = packs_.find(key);
  if (it != packs_.end()) return it->second;
  const dnnl_common::OneOpenmpThread one_thread;
  auto packs = std::make_shared<Packs>();
  // Column blocks on multiples of 64 (oneDNN's widest N block), one per thread when B is wide enough. A C rounded to
  // a half type is computed block by block into a float32 buffer first: there the blocks are also narrow enough for
  // that buffer (the first run's rows of a block) to stay within 1 MiB, so that it is rounded while in cache, as
  // many per thread (float16 [512, 512] x [512, 8192], an LM head: 0.95 of the time with one block per thread, at 1
  // and 2 threads; AMX Xeon, one process, alternating).
  int64_t count = n_ >= 64 * threads ? threads : 1;
  if (narrow && count == threads) {
    const int64_t cols = std::max<int64_t>(64, (int64_t{1} << 18) / std::max<int64_t>(m, 1) / 64 * 64);
    const int64_t want = (n_ + cols - 1) / cols;
    count = std::max(count, std::min((want + threads - 1) / threads * threads, n_ / 64));
  }
  packs->split_rows = count == 1 && threads > 1;
  const size_t esize = a_size(kind_);  // B's element size is A's
  try {
    for (int64_t b = 0; b < count; ++b) {
      auto blk = std::make_unique<Block>();
      blk->n0 = b == 0 ? 0 : n_ * b / count / 64 * 64;
      const int64_t n1 = b + 1 == count ? n_ : n_ * (b + 1) / count / 64 * 64;
      blk->nb = n1 - blk->n0;
      // The layout oneDNN wants for B, asked with the first run's row count (the layout depends on K and
      // N, not on M: later row counts are planned with this layout fixed).
      const memory::desc any_w({k_, blk->nb}, b_type(kind_), Tag::any);
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      const memory::desc src({std::max<int64_t>(m, 1), k_}, a_type(kind_), Tag::ab);
      const memory::desc dst({std::max<int64_t>(m, 1), blk->nb}, c_type(kind_), Tag::ab);
      const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, any_w, dst), attr, dnnl_common::cpu_engine());
      blk->weights_md = pd.weights_desc();
      blk->weights = memory(blk->weights_md, dnnl_common::cpu_engine());
      // B's columns [n0, n0 + nb): [K, nb] at row stride N, or its transpose at row stride K.
      const auto* base = static_cast<const std::byte*>(b_.raw());
      const memory::desc user_md = trans_ ? memory::desc({k_, blk->nb}, b_type(kind_), memory::dims{1, k_})
                                          : memory::desc({k_, blk->nb}, b_type(kind_), memory::dims{n_, 1});
      const size_t offset = static_cast<size_t>(trans_ ? blk->n0 * k_ : blk->n0) * esize;
      memory user(user_md, dnnl_common::cpu_engine(), const_cast<std::byte*>(base + offset));
      dnnl::stream& stream = dnnl_common::thread_stream();
      dnnl::reorder(user, blk->weights).execute(stream, user, blk->weights);
      stream.wait();
      // Weights memory-mapped from external data: their pages go back to the page cache once packed, so the
      // weights stay resident once (a transposed B's block is its own byte range; a plain B's block spans
      // all rows, released after the last block). Inline weights keep both copies.
      if (trans_) MappedFile::release_pages(base + offset, static_cast<size_t>(blk->nb * k_) * esize);
      packs->blocks.push_back(std::move(blk));
    }
    MappedFile::release_pages(b_.raw(), b_.nbytes());
  } catch (const dnnl::error&) {  // a shape or type oneDNN does not take: the caller's own kernel
    packs = nullptr;
  }
  packs_.emplace(key, packs);
  return packs;
}

const PackedSgemmB& ConstantB::refrt_panels() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!refrt_panels_) {
    auto panels = std::make_unique<PackedSgemmB>();
    panels->pack(b_.data<float>(), trans_, k_, n_);
    MappedFile::release_pages(b_.raw(), b_.nbytes());
    refrt_panels_ = std::move(panels);
  }
  return *refrt_panels_;
}

bool ConstantB::run_refrt(const KernelIO& io, int64_t m, const float* a, int64_t lda, const float* bias, void* c,
                          DType c_type, bool c_widened) const {
  // One row (a decode step) is the GEMVs' (gemm.h): they stream B as stored, a half B in its own type (half the bytes
  // of the widened copy; float16 LLaMA decode 1.2x float32's time through the packed GEMM, AMD EPYC Zen 2).
  if (m == 1) return false;
  const PackedSgemmB& panels = refrt_panels();
  const int64_t threads = io.pool ? io.pool->size() : 1;
  const int64_t count = panels.panels();
  // C holds 16-bit values: each block is computed in float32 first.
  const bool narrow_c = c_type != DType::kFloat32 && !c_widened;
  const bool finish = narrow_c || c_widened || !acts_.empty();
  // Tasks: column ranges of whole panels, one per thread when B has two panels per thread, else row chunks (multiples
  // of the kernel's row tile).
  const int64_t col_tasks = count >= 2 * threads ? threads : 1;
  constexpr int64_t tile = PackedSgemmB::kTileRows;
  const int64_t row_tasks = col_tasks == 1 ? std::min(threads, (m + tile - 1) / tile) : 1;
  io.impl = backend_label(backend_bit(Backend::kRefrtPackedSgemm));
  parallel_each(io, col_tasks * row_tasks, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t ct = t / row_tasks, rt = t % row_tasks;
      const int64_t p0 = count * ct / col_tasks, p1 = count * (ct + 1) / col_tasks;
      const int64_t r0 = m * rt / row_tasks / tile * tile;
      const int64_t r1 = rt + 1 == row_tasks ? m : m * (rt + 1) / row_tasks / tile * tile;
      const int64_t c0 = p0 * PackedSgemmB::kPanel, nb = std::min(n_, p1 * PackedSgemmB::kPanel) - c0;
      if (r1 <= r0 || nb <= 0) continue;
      // A half C is computed a block of rows at a time into float32 scratch of that size (it stays in the last-level
      // cache between blocks, where a scratch for the whole task went to memory and back), and each finished block
      // (at most 198 x 256) gets its activations and its rounding while in L2. Finished after the whole task (or
      // computed in 1 MiB column tasks, each repacking A), float16 LLaMA-style prefill 512 took 1.07x float32's time
      // (AMD EPYC Zen 2, one thread).
      const int64_t chunk = narrow_c ? PackedSgemmB::kRowBlock : r1 - r0;
      float* dense = narrow_c
                         ? scratch<float>(static_cast<size_t>(std::min(chunk, r1 - r0) * nb), ScratchSlot::kDnnlOutput)
                         : nullptr;
      const int64_t ld = narrow_c ? nb : n_;
      for (int64_t rb = r0; rb < r1; rb += chunk) {
        float* out = narrow_c ? dense : static_cast<float*>(c) + rb * n_ + c0;
        const PackedSgemmB::Done done = [&](int64_t br, int64_t rows, int64_t bc, int64_t cols) {
          for (int64_t r = br; r < br + rows; ++r)
            finish_row(&acts_, c_type, c_widened, out + r * ld + bc, cols,
                       narrow_c ? static_cast<uint16_t*>(c) + (rb + r) * n_ + c0 + bc : nullptr);
        };
        panels.run(std::min(chunk, r1 - rb), a + rb * lda, lda, bias, out, ld, p0, p1, finish ? done : nullptr);
      }
    }
  });
  return true;
}

bool ConstantB::run(const KernelIO& io, int64_t m, const void* a, int64_t lda, const float* bias, void* c, DType c_type,
                    bool c_widened) const {
  // Tiny products run faster in refrt's plain loops than through a primitive (gemm.h, kSmallGemm).
  if (m <= 0 || k_ == 0 || n_ == 0 || (kind_ != Kind::kInt8 && m * n_ * k_ <= kSmallGemm)) return false;
  const bool half_c = c_type == DType::kFloat16 || c_type == DType::kBFloat16;
  if ((half_c && kind_ == Kind::kInt8) || (!half_c && c_type != DType::kFloat32)) return false;
  if (kind_ == Kind::kFloat32 && packed_sgemm_available())
    return run_refrt(io, m, static_cast<const float*>(a), lda, bias, c, c_type, c_widened);
  const int64_t threads = io.pool ? io.pool->size() : 1;
  const std::shared_ptr<const Packs> packs = packs_for(threads, m, half_c);
  if (!packs) return false;
  // Tasks: (block, row chunk). Rows are split only when B is packed whole.
  const int64_t blocks = static_cast<int64_t>(packs->blocks.size());
  const int64_t chunks = packs->split_rows ? std::min<int64_t>(threads, std::max<int64_t>(1, m / 4)) : 1;
  const int64_t tasks = blocks * chunks;
  // Plan every primitive first (on this thread), so that a declined shape falls back before anything runs.
  std::vector<std::shared_ptr<const Block::Prim>> prims(static_cast<size_t>(tasks));
  for (int64_t t = 0; t < tasks; ++t) {
    const Block& blk = *packs->blocks[static_cast<size_t>(t / chunks)];
    const int64_t r0 = m * (t % chunks) / chunks, r1 = m * (t % chunks + 1) / chunks, rows = r1 - r0;
    std::lock_guard<std::mutex> lock(blk.mutex);
    auto it = blk.prims.find(rows);
    if (it == blk.prims.end()) {
      if (blk.prims.size() >= 64) blk.prims.clear();  // many sequence lengths: keep the cache bounded
      const dnnl_common::OneOpenmpThread one_thread;
      std::shared_ptr<const Block::Prim> p;
      try {
        p = make_prim(kind_, rows, k_, lda, bias != nullptr, blk.weights_md, acts_);
      } catch (const dnnl::error&) {}
      it = blk.prims.emplace(rows, p).first;
    }
    if (!it->second) return false;
    prims[static_cast<size_t>(t)] = it->second;
  }
  // The primitives that run, named: one implementation for every task almost always (a narrower last block
  // may get another kernel from oneDNN; then both are named).
  io.impl = prims[0]->impl;
  for (const auto& p : prims)
    if (p->impl != prims[0]->impl && std::string(io.impl).find(p->impl) == std::string::npos)
      io.impl = intern_impl(std::string(io.impl) + " + " + std::string(p->impl));
  const bool narrow_c = half_c && !c_widened;  // C holds 16-bit values (else float32 ones)
  const size_t c_size = narrow_c ? 2 : 4;      // C's elements; the primitive's are 4 bytes (float32 or int32)
  parallel_each(io, tasks, [&](int64_t t0, int64_t t1) {
    const dnnl_common::OneOpenmpThread one_thread;
    dnnl::stream& stream = dnnl_common::thread_stream();
    const dnnl::engine& engine = dnnl_common::cpu_engine();
    for (int64_t t = t0; t < t1; ++t) {
      const Block& blk = *packs->blocks[static_cast<size_t>(t / chunks)];
      const Block::Prim& p = *prims[static_cast<size_t>(t)];
      const int64_t r0 = m * (t % chunks) / chunks;
      auto* pa = static_cast<const std::byte*>(a) + static_cast<size_t>(r0 * lda) * a_size(kind_);
      auto* pc = static_cast<std::byte*>(c) + static_cast<size_t>(r0 * n_ + blk.n0) * c_size;
      const int64_t rows = p.dst_md.dims()[0];
      const bool whole = blk.nb == n_ && !narrow_c;  // else the block's columns go through dense scratch
      auto* dense = whole ? pc : scratch<std::byte>(static_cast<size_t>(rows * blk.nb) * 4, ScratchSlot::kDnnlOutput);
      auto* pad = scratch<std::byte>(p.scratch_md.get_size() + 1, ScratchSlot::kDnnlScratchpad);
      std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, memory(p.src_md, engine, const_cast<std::byte*>(pa))},
                                              {DNNL_ARG_WEIGHTS, blk.weights},
                                              {DNNL_ARG_DST, memory(p.dst_md, engine, dense)},
                                              {DNNL_ARG_SCRATCHPAD, memory(p.scratch_md, engine, pad)}};
      if (bias) args.emplace(DNNL_ARG_BIAS, memory(p.bias_md, engine, const_cast<float*>(bias + blk.n0)));
      backend_probe::hit(Backend::kOnednnMatmul);
      p.matmul.execute(stream, args);
      stream.wait();
      // Activations on each row while it is in cache, then the row to its place in C (rounded once for a half C).
      const size_t row_bytes = static_cast<size_t>(blk.nb) * 4;
      for (int64_t r = 0; r < rows; ++r) {
        std::byte* src = dense + static_cast<size_t>(r) * row_bytes;
        std::byte* dst = pc + static_cast<size_t>(r * n_) * c_size;
        finish_row(p.acts_fused ? nullptr : &acts_, c_type, c_widened, reinterpret_cast<float*>(src), blk.nb,
                   reinterpret_cast<uint16_t*>(dst));
        if (!narrow_c && !whole) std::memcpy(dst, src, row_bytes);
      }
    }
  });
  return true;
}

}  // namespace parity::refrt::matmul_dnnl
