// The fused attention core: see attention_fused.h.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include <immintrin.h>

#include "../src/dispatch.h"
#include "../src/gemm.h"
#include "../src/scratch.h"
#include "../src/thread_pool.h"
#include "../src/vmath.h"
#include "attention_fused.h"
#include "parity/refrt/cpu_isa.h"

namespace parity::refrt::fused_attention {
namespace {

// Query rows per task and keys per block: a 128 x 512 score block is 256 KiB of float32 (L2-resident), and
// every encoder and prefill sequence up to 512 keys takes one block, so only longer ones rescale. 128 rows rather
// than 64: each block's products pack K and V for twice the rows (Whisper-tiny's attention 32.8 -> 32.1 ms a run,
// BERT x4's 3.95 -> 3.84, AMD EPYC Zen 2, one thread).
constexpr int64_t kRows = 128;
constexpr int64_t kKeys = 512;

// The softmax's row max. Scalar, it is one dependent max per key (about 4 cycles each): on a 64 x 512 block the
// row reductions took longer than the block's QK^T product. With AVX2, eight lanes and four independent accumulators.
// max(x, acc) keeps acc where x is NaN, as std::max(acc, x).
const bool kRowAvx2 = isa_allows(IsaLevel::kAvx2);

// The reduction: (vector, accumulator) lane-wise and (accumulator, value) for the lanes and the tail.
struct MaxOf {
  __attribute__((target("avx2,fma"), always_inline)) inline __m256 operator()(__m256 x, __m256 acc) const {
    return _mm256_max_ps(x, acc);
  }
  float operator()(float acc, float x) const { return std::max(acc, x); }
};

// A row reduced eight lanes at a time into four accumulators, then across the lanes and the tail.
template <typename Op>
__attribute__((target("avx2,fma"))) float reduce_row_avx2(const float* s, int64_t n, float init, Op op) {
  __m256 a0 = _mm256_set1_ps(init), a1 = a0, a2 = a0, a3 = a0;
  int64_t j = 0;
  for (; j + 32 <= n; j += 32) {
    a0 = op(_mm256_loadu_ps(s + j), a0);
    a1 = op(_mm256_loadu_ps(s + j + 8), a1);
    a2 = op(_mm256_loadu_ps(s + j + 16), a2);
    a3 = op(_mm256_loadu_ps(s + j + 24), a3);
  }
  for (; j + 8 <= n; j += 8) a0 = op(_mm256_loadu_ps(s + j), a0);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, op(op(a0, a1), op(a2, a3)));
  float r = init;
  for (float v : lanes) r = op(r, v);
  for (; j < n; ++j) r = op(r, s[j]);
  return r;
}

template <typename T>
T max_of_row(const T* s, int64_t n) {
  if constexpr (std::is_same_v<T, float>)
    if (kRowAvx2) return reduce_row_avx2(s, n, -std::numeric_limits<float>::infinity(), MaxOf{});
  T m = -std::numeric_limits<T>::infinity();
  for (int64_t j = 0; j < n; ++j) m = std::max(m, s[j]);
  return m;
}

// s[j] = exp(s[j] - m); returns their sum. float: vmath's one pass (minus, exp of a value <= 0, eight partial sums)
// where minus, exp and sum were three: Whisper-tiny's attention 32.1 -> 30.6 ms a run (AMD EPYC Zen 2, one thread).
template <typename T>
T row_exp_sum(T* s, int64_t n, T m) {
  if constexpr (std::is_same_v<T, float>) {
    return vmath::exp_sum_shifted(s, n, m);
  } else {
    T sum = 0;
    for (int64_t j = 0; j < n; ++j) sum += (s[j] = std::exp(s[j] - m));
    return sum;
  }
}

// Applies the mask, the causal limit and the short-mask padding to scores[0, kb) of query row i, keys
// j0.. (the keys at or past `visible` are masked for every row and are not in the block).
template <typename T, typename TK>
void mask_row(const Params& p, const Head<T, TK>& h, int64_t i, int64_t j0, int64_t kb, T* s) {
  const T neg_inf = -std::numeric_limits<T>::infinity();
  if (p.mask != MaskKind::kNone) {
    const int64_t base = i * h.mask_ld + j0 * h.mask_cs;
    if (p.mask == MaskKind::kAdd) {
      const T* m = static_cast<const T*>(h.mask) + base;
      if (h.mask_cs == 1) {
        for (int64_t j = 0; j < kb; ++j) s[j] += m[j];
      } else {
        for (int64_t j = 0; j < kb; ++j) s[j] += m[0];
      }
    } else {
      const auto* m = static_cast<const uint8_t*>(h.mask) + base;
      const bool keep_on = p.mask == MaskKind::kKeep;
      const T fill = static_cast<T>(p.fill);
      for (int64_t j = 0; j < kb; ++j)
        if ((m[j * h.mask_cs] != 0) != keep_on) s[j] = fill;
    }
  }
  if (p.causal) {
    const int64_t last = i + p.causal_offset;  // the last visible key of this row
    for (int64_t j = std::max<int64_t>(0, last + 1 - j0); j < kb; ++j) s[j] = neg_inf;
  }
}

// The keys [j0, j0 + kb) of K (as rows [kb, d] when k_rows, else as columns of K^T [d, kb]) and their V rows
// [kb, dv], as T: the head's own memory, or, for float16 / bfloat16 K and V, widened into `kbuf` / `vbuf`.
template <typename T, typename TK>
void key_block(const Params& p, const Head<T, TK>& h, int64_t j0, int64_t kb, T* kbuf, T* vbuf, const T*& kblock,
               int64_t& ldk, const T*& vblock, int64_t& ldv) {
  if constexpr (std::is_same_v<T, TK>) {
    kblock = h.k_rows ? h.k + j0 * h.ldk : h.k + j0;
    ldk = h.ldk;
    vblock = h.v + j0 * h.ldv;
    ldv = h.ldv;
  } else {
    static_assert(std::is_same_v<T, float> && std::is_same_v<TK, uint16_t>);
    // Rows one after the other (a KV cache's usual layout) widen in one call: a call per 64-value row was most
    // of a bfloat16 decode step's attention.
    if (h.k_rows && h.ldk == p.d) {
      widen_span(p.kv_type, h.k + j0 * h.ldk, kbuf, kb * p.d);
      ldk = p.d;
    } else if (h.k_rows) {
      for (int64_t j = 0; j < kb; ++j) widen_span(p.kv_type, h.k + (j0 + j) * h.ldk, kbuf + j * p.d, p.d);
      ldk = p.d;
    } else {
      for (int64_t c = 0; c < p.d; ++c) widen_span(p.kv_type, h.k + c * h.ldk + j0, kbuf + c * kb, kb);
      ldk = kb;
    }
    if (h.ldv == p.dv) {
      widen_span(p.kv_type, h.v + j0 * h.ldv, vbuf, kb * p.dv);
    } else {
      for (int64_t j = 0; j < kb; ++j) widen_span(p.kv_type, h.v + (j0 + j) * h.ldv, vbuf + j * p.dv, p.dv);
    }
    kblock = kbuf;
    vblock = vbuf;
    ldv = p.dv;
  }
}

// One query row over a float16 / bfloat16 K and V (a decode step's cache): refrt's GEMV reads them in place, widened
// in registers, in the calls gemm.h makes for a one-row product (so the sums are the widened path's, bit for bit),
// without widening each key block into a copy first (a bfloat16 decode step's attention spent most of its time there).
template <typename T, typename TK>
bool reads_in_place(const Params& p, int64_t rows) {
  if constexpr (std::is_same_v<T, TK>) {
    return false;
  } else {
    return rows == 1 && refrt_half_gemv_available(p.kv_type);
  }
}

// s = scale * q K^T over the keys [j0, j0 + kb).
BackendSet half_row_scores(const Params& p, const Head<float, uint16_t>& h, int64_t j0, int64_t kb, const float* q,
                           float* s) {
  const auto scale = static_cast<float>(p.scale);
  if (h.k_rows)
    refrt_half_gemv(p.kv_type, false, kb, p.d, scale, h.k + j0 * h.ldk, h.ldk, q, 0.0f, s);
  else
    refrt_half_gemv(p.kv_type, true, p.d, kb, scale, h.k + j0, h.ldk, q, 0.0f, s);
  return backend_bit(Backend::kRefrtHalfGemv);
}

// y = s V + beta * y over the keys [j0, j0 + kb).
BackendSet half_row_values(const Params& p, const Head<float, uint16_t>& h, int64_t j0, int64_t kb, const float* s,
                           float beta, float* y) {
  refrt_half_gemv(p.kv_type, true, kb, p.dv, 1.0f, h.v + j0 * h.ldv, h.ldv, s, beta, y);
  return backend_bit(Backend::kRefrtHalfGemv);
}

// The keys the rows [i0, i1) attend to are [0, returned): every key past it is masked for every row of the block
// (past the short mask, past the causal limit of the last row, or masked by the mask itself).
template <typename T, typename TK>
int64_t visible_keys(const Params& p, const Head<T, TK>& h, int64_t i0, int64_t i1) {
  const T neg_inf = -std::numeric_limits<T>::infinity();
  // Keys every row of the block masks: past the short mask, and (causal) past the last row's limit.
  int64_t visible = std::min(p.total, p.mask_cols);
  if (p.causal) visible = std::min(visible, std::max<int64_t>(0, i1 - 1 + p.causal_offset + 1));
  // Keys past the last one any row of the block can see are skipped: an additive causal mask (what the
  // exporters write) then costs half the products, as is_causal does. Scanned from the end of each row,
  // so the scan reads the masked tail only.
  if (p.mask == MaskKind::kAdd || (p.mask != MaskKind::kNone && std::isinf(p.fill) && p.fill < 0)) {
    int64_t live = 0;
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t base = i * h.mask_ld;
      for (int64_t j = visible; j > live; --j) {
        const int64_t at = base + (j - 1) * h.mask_cs;
        const bool dead = p.mask == MaskKind::kAdd
                              ? static_cast<const T*>(h.mask)[at] == neg_inf
                              : (static_cast<const uint8_t*>(h.mask)[at] != 0) != (p.mask == MaskKind::kKeep);
        if (!dead) {
          live = j;
          break;
        }
      }
    }
    visible = live;
  }
  return visible;
}

template <typename T, typename TK>
BackendSet run_rows(const NodeDef& node, const Params& p, const Head<T, TK>& h, int64_t i0, int64_t i1, T* scores,
                    T* row_max, T* row_sum, T* kbuf, T* vbuf) {
  const T neg_inf = -std::numeric_limits<T>::infinity();
  const int64_t r = i1 - i0;
  const int64_t visible = visible_keys(p, h, i0, i1);
  BackendSet ran = 0;
  const bool in_place = reads_in_place<T, TK>(p, r);
  std::fill(row_max, row_max + r, neg_inf);
  std::fill(row_sum, row_sum + r, T(0));
  const T* q = h.q + i0 * h.ldq;
  T* y = h.y + i0 * h.ldy;
  for (int64_t j0 = 0; j0 < visible; j0 += kKeys) {
    const int64_t kb = std::min(kKeys, visible - j0);
    const T *kblock = nullptr, *vblock = nullptr;
    int64_t ldk = 0, ldv = 0;
    if constexpr (!std::is_same_v<T, TK>) {
      if (in_place) ran |= half_row_scores(p, h, j0, kb, q, scores);
    }
    if (!in_place) {
      key_block(p, h, j0, kb, kbuf, vbuf, kblock, ldk, vblock, ldv);
      ran |= backend_bit(
          gemm<T>(node, false, h.k_rows, r, kb, p.d, static_cast<T>(p.scale), q, h.ldq, kblock, ldk, T(0), scores, kb));
    }
    for (int64_t ii = 0; ii < r; ++ii) {
      T* s = scores + ii * kb;
      mask_row(p, h, i0 + ii, j0, kb, s);
      const T m_new = std::max(row_max[ii], max_of_row(s, kb));
      if (m_new == neg_inf) {  // every key so far masked: no weight yet (the output row stays 0)
        std::fill(s, s + kb, T(0));
        continue;
      }
      const T sum = row_exp_sum(s, kb, m_new);
      // The running max grew: what was accumulated is rescaled to the new max (exp(-inf) = 0 at the start).
      const T corr = row_max[ii] == neg_inf ? T(0) : std::exp(row_max[ii] - m_new);
      if (j0 > 0 && corr != T(1))
        for (int64_t c = 0; c < p.dv; ++c) y[ii * h.ldy + c] *= corr;
      row_sum[ii] = row_sum[ii] * corr + sum;
      row_max[ii] = m_new;
    }
    if constexpr (!std::is_same_v<T, TK>) {
      if (in_place) ran |= half_row_values(p, h, j0, kb, scores, j0 == 0 ? 0.0f : 1.0f, y);
    }
    if (!in_place)
      ran |= backend_bit(
          gemm<T>(node, false, false, r, p.dv, kb, T(1), scores, kb, vblock, ldv, j0 == 0 ? T(0) : T(1), y, h.ldy));
  }
  const T nan = std::numeric_limits<T>::quiet_NaN();
  for (int64_t ii = 0; ii < r; ++ii) {
    T* yr = y + ii * h.ldy;
    if (visible == 0 || row_sum[ii] == T(0)) {  // every key masked: zeros (safe softmax) or Softmax's NaN
      std::fill(yr, yr + p.dv, p.safe ? T(0) : nan);
      continue;
    }
    const T inv = T(1) / row_sum[ii];
    for (int64_t c = 0; c < p.dv; ++c) yr[c] *= inv;
  }
  return ran;
}

}  // namespace

template <typename T, typename TK>
BackendSet run(const NodeDef& node, const KernelIO& io, const Params& p, const std::vector<Head<T, TK>>& heads) {
  if (p.sq == 0 || p.dv == 0 || heads.empty()) return 0;
  const int64_t blocks = (p.sq + kRows - 1) / kRows;
  const int64_t tasks = static_cast<int64_t>(heads.size()) * blocks;
  // Each chunk of tasks at least ~64 Ki multiply-adds: a smaller one costs less than handing it to a pool thread (the
  // zoo block's 2 x 5 heads of 5 x 5 x 32 ran 0.04 ms a run alone and 0.04-0.08 at 2 threads; AMD EPYC Zen 2).
  const int64_t task_work = std::min(kRows, p.sq) * std::max<int64_t>(p.total, 1) * (p.d + p.dv);
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(task_work, 1));
  std::atomic<BackendSet> ran{0};
  parallel_for(io, tasks, grain, [&](int64_t t0, int64_t t1) {
    const int64_t rows = std::min(kRows, p.sq);
    // The block's scores, and the widened key blocks of half K and V (K [kKeys, d] or K^T [d, kKeys], V [kKeys,
    // dv]; none when one query row reads them in place): the thread's scratch, uninitialised (each is written before it
    // is read; zeroed vectors per task cost a bfloat16 decode step at 2 threads 16 % of its time).
    T* scores = scratch<T>(rows * std::min(kKeys, std::max<int64_t>(p.total, 1)) + 1, ScratchSlot::kAttentionScores);
    std::vector<T> stats(static_cast<size_t>(2 * rows));
    const int64_t widened = std::is_same_v<T, TK> || reads_in_place<T, TK>(p, rows) ? 0 : std::min(kKeys, p.total);
    T* kbuf = widened ? scratch<T>(widened * p.d + 1, ScratchSlot::kAttentionKeys) : nullptr;
    T* vbuf = widened ? scratch<T>(widened * p.dv + 1, ScratchSlot::kAttentionValues) : nullptr;
    BackendSet mine = 0;
    for (int64_t t = t0; t < t1; ++t) {
      const Head<T, TK>& h = heads[static_cast<size_t>(t / blocks)];
      const int64_t i0 = (t % blocks) * kRows, i1 = std::min(p.sq, i0 + kRows);
      mine |= run_rows<T, TK>(node, p, h, i0, i1, scores, stats.data(), stats.data() + rows, kbuf, vbuf);
    }
    ran.fetch_or(mine, std::memory_order_relaxed);
  });
  return ran.load();
}

template BackendSet run<float>(const NodeDef&, const KernelIO&, const Params&, const std::vector<Head<float>>&);
template BackendSet run<double>(const NodeDef&, const KernelIO&, const Params&, const std::vector<Head<double>>&);
template BackendSet run<float, uint16_t>(const NodeDef&, const KernelIO&, const Params&,
                                         const std::vector<Head<float, uint16_t>>&);

std::string_view row_path() {
  const std::string_view vm = vmath::path();
  return vm == "avx512" ? "avx512" : vm == "haswell" ? "avx2" : "portable";
}

}  // namespace parity::refrt::fused_attention
