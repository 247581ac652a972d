// Internal: the fused attention core (attention_fused_core.cc) shared by the FusedAttention kernel
// (attention_fused.cc), which the load-time pass optimize/fuse_attention.cc makes from an opset-23
// Attention node or from the MatMul -> scale -> mask -> Softmax -> MatMul chain the exporters write.
//
// Per (batch, head) and block of query rows, in one pass over the keys in blocks: scores of the block
// (one GEMM, the scale as its alpha), the mask, an online softmax (running row max and sum, as flash
// attention and eager's CPU SDPA kernel keep them; the output rows rescaled when the max grows) and the
// product with the block of values (one GEMM accumulating into the output). The probabilities never
// leave a buffer of rows x key block; threads split over (head, query block). A single query row (a
// KV-cache decode step) makes both products GEMVs (gemm.h sends one-row products to refrt's GEMV).
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "../src/backend_probe.h"
#include "../src/kernel.h"

namespace parity::refrt::fused_attention {

// How the mask tensor enters a score: added (a float mask), or a bool condition choosing between the
// score and `fill` (Where(m, s, fill): kKeep; Where(m, fill, s): kDrop; the Attention op's bool mask is
// kKeep with fill -inf).
enum class MaskKind { kNone, kAdd, kKeep, kDrop };

struct Params {
  int64_t sq = 0, total = 0, d = 0, dv = 0;  // query rows, keys, head size of Q/K and of V
  double scale = 1;
  MaskKind mask = MaskKind::kNone;
  double fill = 0;                // kKeep / kDrop: the score of a masked key
  int64_t mask_cols = INT64_MAX;  // keys at or past this index are masked (-inf): the Attention op's short mask
  bool causal = false;            // key j is masked for query row i when j > i + causal_offset
  int64_t causal_offset = 0;
  bool safe = true;  // a row whose every score is -inf gives zeros (torch's _safe_softmax); else NaN (Softmax)
  DType kv_type = DType::kUndefined;  // float16 / bfloat16 K and V (Head's TK = uint16_t), widened block by block
};

// One (batch, head) problem: row i of Q at q + i * ldq; key j at k + j * ldk (k_rows, K as [total, d]) or
// column j of K^T at k + j with rows ldk apart (K^T as [d, total]); row j of V at v + j * ldv; output
// row i at y + i * ldy; the mask value of (i, j) at mask + i * mask_ld + j * mask_cs (elements of the
// mask's dtype: bool bytes for kKeep / kDrop, T for kAdd). K and V are of type TK: T, or uint16_t for float16 /
// bfloat16 K and V (Params::kv_type) read as they are and widened to T one block of keys at a time, so that a
// decode step's KV cache is not copied whole into float32 first.
template <typename T, typename TK = T>
struct Head {
  const T* q = nullptr;
  int64_t ldq = 0;
  const TK* k = nullptr;
  int64_t ldk = 0;
  bool k_rows = true;
  const TK* v = nullptr;
  int64_t ldv = 0;
  T* y = nullptr;
  int64_t ldy = 0;
  const void* mask = nullptr;
  int64_t mask_ld = 0, mask_cs = 1;
};

// Computes every head over io's pool; returns the backends the block products ran on. T: float or double; TK: T,
// or uint16_t with T = float.
template <typename T, typename TK = T>
BackendSet run(const NodeDef& node, const KernelIO& io, const Params& p, const std::vector<Head<T, TK>>& heads);

// The name of the row arithmetic's code path, for the profile label "refrt fused attention (<path>)": "avx512" (vmath's
// AVX-512 exp; the row maxima and sums stay 8 lanes wide), "avx2" (vmath's AVX2 + FMA exp) or "portable".
std::string_view row_path();

}  // namespace parity::refrt::fused_attention
