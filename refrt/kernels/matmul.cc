// MatMul (numpy semantics, batch dims broadcast as broadcast.h does) and Gemm, on gemm.h.
#include <algorithm>
#include <array>
#include <atomic>
#include <climits>
#include <cstring>
#include <optional>
#include <tuple>
#include <utility>

#include "../src/activation.h"
#include "../src/broadcast.h"
#include "../src/dispatch.h"
#include "../src/gemm.h"
#include "../src/gemv_packed.h"
#include "../src/strided_copy.h"
#include "matmul_dnnl.h"

namespace parity::refrt {
namespace {

// Fused epilogue over the rows of `out` (row length n): + bias (if any), then the activations.
template <typename T>
void rows_epilogue(const KernelIO& io, Tensor& out, const Tensor* bias, int64_t n, const std::vector<ActStep>& acts) {
  if ((!bias && acts.empty()) || out.numel() == 0 || n == 0) return;
  T* po = out.data<T>();
  const T* pb = bias ? bias->data<T>() : nullptr;
  const int64_t rows = out.numel() / n;
  parallel_for(io, rows, std::max<int64_t>(1, 4096 / n), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      T* row = po + r * n;
      if (pb)
        for (int64_t j = 0; j < n; ++j) row[j] += pb[j];
      apply_activations(acts, row, n);
    }
  });
}

using matmul_dnnl::ConstantB;

// Packs a constant B for oneDNN: a bfloat16 B as it is where the CPU multiplies bfloat16 natively, a
// float32 B (or the float32 copy of a float16/bfloat16 one) where float GEMMs belong on oneDNN or on refrt's packed
// AVX2 GEMM (sgemm_packed.h).
void pack_constant_b(ConstantB& packed, const WidenedConstants& widened, const Tensor& b, bool trans,
                     const std::vector<ActStep>& acts) {
  if (b.dtype() == DType::kBFloat16 && matmul_dnnl::bf16_enabled()) {
    packed.set(b, trans, ConstantB::Kind::kBFloat16, acts);
  } else if (matmul_dnnl::float_enabled() || packed_sgemm_available()) {
    const Tensor* b32 = b.dtype() == DType::kFloat32 ? &b : widened.find(b);
    if (b32) packed.set(*b32, trans, ConstantB::Kind::kFloat32, acts);
  }
}

// A float32, float16 or bfloat16 B kept for the packed AVX-512 GEMV of one-row products (gemv_packed.h), where it
// runs: a half B in its own dtype (half the bytes to stream; half_gemv below).
void keep_for_gemv(PackedGemv& gemv, const Tensor& b, bool trans) {
  const bool packable = b.dtype() == DType::kFloat32 || is_float16_like(b.dtype());
  if (packable && b.rank() == 2 && packed_gemv_available()) gemv.set(b, trans);
}

// One row x the packed B (+ bias), then the activations: the node's output and label. The caller checked
// that B is gemv's and that the row has its K.
void gemv_product(KernelIO& io, const PackedGemv& gemv, const float* x, const float* bias, Tensor out,
                  const std::vector<ActStep>& acts) {
  note_backends(io, backend_bit(gemv.run(io, x, bias, out.data<float>())));
  rows_epilogue<float>(io, out, nullptr, gemv.n(), acts);
  io.outputs[0] = std::move(out);
}

// One float16/bfloat16 row A (any leading dims of size 1) x the packed half B (+ bias), then the activations: A
// widened (K floats), the float32 path's products and sums, one rounding. false: not this path.
bool half_gemv(KernelIO& io, const PackedGemv& gemv, const WidenedConstants& widened, const Tensor* bias,
               const std::vector<ActStep>& acts) {
  const Tensor& a = io.in(0);
  if (!gemv.holds(io.in(1)) || gemv.dtype() != a.dtype() || a.rank() < 1 || gemv.k() == 0 ||
      a.shape().back() != gemv.k() || a.numel() != gemv.k() ||
      (bias && (bias->dtype() != a.dtype() || bias->numel() != gemv.n())))
    return false;
  Tensor bias_copy;  // a bias that is not a constant, widened for this call
  const Tensor* bias32 = bias ? widened.find(*bias) : nullptr;
  if (bias && !bias32) bias32 = &(bias_copy = widen_to_float32(*bias));
  const Tensor x32 = widen_to_float32(a);
  Tensor y32(DType::kFloat32, {1, gemv.n()});
  note_backends(
      io, backend_bit(gemv.run(io, x32.data<float>(), bias32 ? bias32->data<float>() : nullptr, y32.data<float>())));
  rows_epilogue<float>(io, y32, nullptr, gemv.n(), acts);
  Shape shape = a.shape();
  shape.back() = gemv.n();
  io.outputs[0] = narrow_from_float32(y32, a.dtype()).reshaped(shape);
  return true;
}

// A float16 / bfloat16 A (its leading dims `rows` rows of K) x the packed constant B (+ bias), then the activations,
// in float32 on oneDNN: a bfloat16 A on a bfloat16 B as it is (native products), else A widened whole onto B's float32
// copy. Each thread's block of C is rounded into the half output while it is in cache (the widened path rounded all of
// a float32 C after the product, a pass at memory speed): float16 BERT at 2 threads 0.92-0.96 of that path's time, at
// one thread (one block, all of C) 1.01 (AMX Xeon, one process, alternating). The same float32 sums, rounded once.
// A may come widened (float32 holding B's type's values, optimize/keep_widened.cc): it is read as it is. With
// `widened_out`, C is written so too (float32, each value rounded to B's type). false (nothing written): not this
// path, the caller computes.
bool half_product(KernelIO& io, const ConstantB& packed, const WidenedConstants& widened, int64_t rows,
                  const Tensor* bias, bool widened_out = false) {
  const Tensor& a = io.in(0);
  const DType half = io.in(1).dtype();
  const bool a_widened = a.dtype() == DType::kFloat32;
  const bool native = a.dtype() == DType::kBFloat16 && packed.kind() == ConstantB::Kind::kBFloat16;
  const Tensor* b32 = widened.find(io.in(1));
  const bool widened_b = packed.kind() == ConstantB::Kind::kFloat32 && b32 && packed.holds(*b32);
  if (!is_float16_like(half) || (a.dtype() != half && !a_widened) || !(native ? packed.holds(io.in(1)) : widened_b) ||
      a.rank() < 2 || a.shape().back() != packed.k() ||
      (bias && (bias->dtype() != half || bias->numel() != packed.n())))
    return false;
  Tensor bias_copy;  // a bias that is not a constant, widened for this call
  const Tensor* bias32 = bias ? widened.find(*bias) : nullptr;
  if (bias && !bias32) bias32 = &(bias_copy = widen_to_float32(*bias));
  const Tensor a32 = native || a_widened ? a : widen_to_float32(a, &io);
  Tensor c(widened_out ? DType::kFloat32 : half, {rows, packed.n()});
  if (!packed.run(io, rows, a32.raw(), packed.k(), bias32 ? bias32->data<float>() : nullptr, c.mutable_raw(), half,
                  widened_out))
    return false;
  if (!native) io.impl = intern_impl("float32 " + std::string(io.impl));
  Shape shape = a.shape();
  shape.back() = packed.n();
  io.outputs[0] = c.reshaped(shape);
  return true;
}

// keep_widened's first product of a float16 A that other products read too: A widened once, the product computed from
// that float32 copy (as a widened A) by `compute`, and the copy handed on as output 1 for the others.
template <typename Compute>
void share_widened(KernelIO& io, Compute compute) {
  const Tensor a32 = widen_to_float32(io.in(0), &io);
  KernelIO f;
  f.pool = io.pool;
  f.inputs = io.inputs;
  f.inputs[0] = &a32;
  f.outputs.resize(1);
  compute(f);
  io.impl = f.impl;
  io.outputs[0] = std::move(f.outputs[0]);
  io.outputs[1] = a32;
}

// A widened A (float32 holding `half` values) rounded back to `half` (exact), and `compute` run on it: the paths that
// take a half A but not a widened one (the packed GEMV, the float32 fallback).
template <typename Compute>
void on_narrowed_a(KernelIO& io, DType half, Compute compute) {
  const Tensor narrowed = narrow_from_float32(io.in(0), half, &io);
  const Tensor* given = io.inputs[0];
  io.inputs[0] = &narrowed;
  compute(io);
  io.inputs[0] = given;
}

// A's leading dims as rows of its last dim (K).
int64_t rows_of(const Tensor& a) { return checked_numel(a.shape()) / std::max<int64_t>(a.shape().back(), 1); }

class MatMulKernel : public Kernel {
 public:
  explicit MatMulKernel(const NodeDef& node)
      : node_(node),
        acts_(parse_activations(node)),
        trans_b_(node.attr_int("transB", 0) != 0),
        b_shape_(node.attr("b_shape") ? std::optional(node.attr_ints("b_shape")) : std::nullopt),
        widened_input_(node.attr_int("widened_input", 0) != 0),
        widened_output_(node.attr_int("widened_output", 0) != 0),
        shares_widened_(node.attr_int("shares_widened", 0) != 0) {}
  // A constant matrix B (weights) is packed for oneDNN once (matmul_dnnl.h): float32, or bfloat16 where
  // the CPU multiplies it natively; other float16/bfloat16 weights are widened to float32 once.
  void prepare(const std::vector<const Tensor*>& constants) override {
    for (const Tensor* t : constants)
      if (t) widened_.add(*t);
    const Tensor* b = constants.size() > 1 ? constants[1] : nullptr;
    if (b && b->rank() == 2 && !b_shape_) {
      pack_constant_b(constant_b_, widened_, *b, trans_b_, acts_);
      keep_for_gemv(gemv_b_, *b, trans_b_);
    }
  }
  void compute(KernelIO& io) const override {
    const Tensor& a = io.in(0);
    if (shares_widened_ && io.outputs.size() > 1 && is_float16_like(a.dtype()))
      return share_widened(io, [&](KernelIO& f) { compute(f); });
    if ((widened_input_ || shares_widened_) && a.dtype() == DType::kFloat32 && is_float16_like(io.in(1).dtype()))
      return compute_widened(io);
    if (a.dtype() != io.in(1).dtype()) node_.fail("input dtypes differ");
    // float16/bfloat16: float32 products and sums, rounded once (torch's CPU matmul).
    if (is_float16_like(a.dtype())) {
      const Tensor* bias = io.optional(2);
      if (half_gemv(io, gemv_b_, widened_, bias, acts_)) return;
      if (a.rank() >= 2 && half_product(io, constant_b_, widened_, rows_of(a), bias, widened_output_)) return;
      return with_float32(
          io, a.dtype(), [&](KernelIO& f) { compute(f); }, &widened_);
    }
    // FusedMatMul with transB (optimize/fold_transpose_matmul.cc): B is stored [..., N, K].
    bool tb = false;
    Tensor b = io.in(1);
    Shape sb = b.shape();
    if (trans_b_) std::tie(b, sb, tb) = transposed_b(b);
    if (a.rank() == 0 || b.rank() == 0) node_.fail("MatMul inputs must have rank >= 1");
    // 1-D operands are promoted to matrices and the added dim is removed from the result.
    Shape sa = a.shape();
    const size_t b_rank = sb.size();
    if (sa.size() == 1) sa.insert(sa.begin(), 1);
    if (sb.size() == 1) sb.push_back(1);
    const int64_t m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
    if (sb[sb.size() - 2] != k)
      node_.fail("inner dimensions differ: " + shape_str(a.shape()) + " x " + shape_str(b.shape()));
    check_blas_dims(node_, m, n, k);
    const Shape batch_a(sa.begin(), sa.end() - 2), batch_b(sb.begin(), sb.end() - 2);
    const Shape batch = broadcast_shapes(batch_a, batch_b, &node_);
    Shape out_shape = batch;
    if (a.rank() > 1) out_shape.push_back(m);
    if (b_rank > 1) out_shape.push_back(n);
    Tensor out(a.dtype(), out_shape);
    // FusedMatMul: an optional bias [N] (or [1, N]) added to every row, then the activations.
    const Tensor* bias = io.optional(2);
    if (bias && (bias->dtype() != a.dtype() || bias->numel() != n || b_rank < 2))
      node_.fail("bias " + shape_str(bias->shape()) + " must have the " + std::to_string(n) +
                 " columns of the product");
    if (a.dtype() == DType::kFloat32) {
      // One row (a decode step) is a GEMV, bound by memory: with B a constant, refrt's AVX-512 GEMV streams it
      // packed (gemv_packed.h); otherwise refrt's AVX2 GEMV (gemm.h) streams it as it is stored.
      if (gemv_b_.holds(io.in(1)) && k > 0 && checked_numel(batch) * m == 1)
        return gemv_product(io, gemv_b_, a.data<float>(), bias ? bias->data<float>() : nullptr, std::move(out), acts_);
      // B the packed constant: A's batch is more rows of one product.
      if (constant_b_.holds(io.in(1)) && a.rank() >= 2 && k > 0 && checked_numel(batch) * m > 1 &&
          constant_b_.run(io, checked_numel(batch) * m, a.data<float>(), k, bias ? bias->data<float>() : nullptr,
                          out.data<float>())) {
        io.outputs[0] = std::move(out);
        return;
      }
      run<float>(io, a, b, tb, out, batch, batch_a, batch_b, m, k, n);
      epilogue<float>(io, out, bias, n);
    } else if (a.dtype() == DType::kFloat64) {
      run<double>(io, a, b, tb, out, batch, batch_a, batch_b, m, k, n);
      epilogue<double>(io, out, bias, n);
    } else {
      node_.fail("dtype " + dtype_name(a.dtype()) + " is not implemented", ErrorKind::kUnsupported);
    }
    io.outputs[0] = std::move(out);
  }
  double flops(const KernelIO& io) const override {  // 2 m n k per output matrix
    return 2.0 * static_cast<double>(io.outputs[0].numel()) * static_cast<double>(io.in(0).shape().back());
  }

 private:
  // A widened by its producer: the packed product reads it as it is; any other path gets it rounded back to the half
  // type (exact: it holds that type's values) and computes as for a half A.
  void compute_widened(KernelIO& io) const {
    const Tensor& a = io.in(0);
    if (a.rank() >= 2 && rows_of(a) > 1 &&
        half_product(io, constant_b_, widened_, rows_of(a), io.optional(2), widened_output_))
      return;
    on_narrowed_a(io, io.in(1).dtype(), [&](KernelIO& f) { compute(f); });
  }
  template <typename T>
  void epilogue(const KernelIO& io, Tensor& out, const Tensor* bias, int64_t n) const {
    rows_epilogue<T>(io, out, bias, n, acts_);
  }
  template <typename T>
  void run(const KernelIO& io, const Tensor& a, const Tensor& b, bool tb, Tensor& out, const Shape& batch,
           const Shape& batch_a, const Shape& batch_b, int64_t m, int64_t k, int64_t n) const {
    const int64_t ldb = tb ? k : n;
    T* po = out.data<T>();
    if (k == 0) {
      std::memset(po, 0, out.nbytes());
      return;
    }
    // B without batch dims (or all of size 1): the batch of A is just more rows of one product.
    bool b_single = true;
    for (int64_t d : batch_b) b_single = b_single && d == 1;
    if (b_single && batch_a.size() >= batch_b.size()) {
      const int64_t rows = checked_numel(batch) * m;
      check_blas_dims(node_, rows, n, k);
      return note_backends(
          io, pool_gemm<T>(io, false, tb, rows, n, k, T(1), a.data<T>(), k, b.data<T>(), ldb, T(0), po, n));
    }
    // Batch index -> matrix index in a and b (numpy broadcasting of the batch dims, broadcast.h).
    const auto plan = plan_broadcast<2>({&batch_a, &batch_b}, node_);
    std::vector<std::array<int64_t, 2>> offsets(static_cast<size_t>(plan.numel));
    for_each_broadcast(plan,
                       [&](int64_t o, const std::array<int64_t, 2>& off) { offsets[static_cast<size_t>(o)] = off; });
    const int64_t count = plan.numel;
    auto matrix = [&](int64_t i) {  // (A, B) of product i
      const auto& off = offsets[static_cast<size_t>(i)];
      return std::pair(a.data<T>() + off[0] * m * k, b.data<T>() + off[1] * k * n);
    };
    // A batch at least as large as the pool is spread over it, whole products (attention's heads) as
    // tasks, each a single-threaded GEMM; otherwise each product is split by columns over the pool
    // (pool_gemm). BLAS itself runs on one thread. (Tiny batches stay on the caller: waking the pool
    // costs more than they do.)
    const int64_t threads = io.pool ? io.pool->size() : 1;
    if (threads > 1 && count >= threads && count * m * n * k >= (int64_t{1} << 15))
      return note_backends(io, batch_over_pool<T>(io, count, threads, matrix, tb, m, k, n, po));
    BackendSet ran = 0;
    for (int64_t i = 0; i < count; ++i) {
      const auto [pa, pb] = matrix(i);
      ran |= pool_gemm<T>(io, false, tb, m, n, k, T(1), pa, k, pb, ldb, T(0), po + i * m * n, n);
    }
    note_backends(io, ran);
  }
  // The products of a batch as tasks taken by whichever pool thread is free next (one running late
  // takes fewer). When the count does not divide by the threads, each product is cut into `parts`
  // column blocks so that the tasks do (5 heads on 2 threads: 10 halves), while blocks keep >= 16
  // columns; otherwise the last round of whole products would leave threads idle.
  template <typename T, typename Matrix>
  static BackendSet batch_over_pool(const KernelIO& io, int64_t count, int64_t threads, const Matrix& matrix, bool tb,
                                    int64_t m, int64_t k, int64_t n, T* po) {
    int64_t parts = 1;
    while ((count * parts) % threads != 0 && n / (parts + 1) >= 16) ++parts;
    if ((count * parts) % threads != 0) parts = 1;
    const int64_t ldb = tb ? k : n;
    std::atomic<BackendSet> ran{0};
    parallel_each(io, count * parts, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t i = t / parts, c0 = n * (t % parts) / parts, c1 = n * (t % parts + 1) / parts;
        const auto [pa, pb] = matrix(i);
        const Backend used = gemm<T>(false, tb, m, c1 - c0, k, T(1), pa, k, tb ? pb + c0 * ldb : pb + c0, ldb, T(0),
                                     po + i * m * n + c0, n);
        ran.fetch_or(backend_bit(used), std::memory_order_relaxed);
      }
    });
    return ran.load();
  }
  // B given as X with the Transpose of its last two axes (and a Reshape to b_shape_) folded away:
  // (storage, logical shape of B, transposed). The transpose stays virtual when the Reshape keeps the
  // last two dims (it then only regroups the batch dims); otherwise it is materialised, as the
  // unfused graph would compute it.
  std::tuple<Tensor, Shape, bool> transposed_b(const Tensor& x) const {
    if (x.rank() < 2) node_.fail("transB needs B of rank >= 2, got " + shape_str(x.shape()));
    Shape st = x.shape();
    std::swap(st[st.size() - 1], st[st.size() - 2]);
    if (!b_shape_) return {x, st, true};
    const std::optional<Shape> target = reshape_target(st, *b_shape_);
    if (!target) node_.fail("cannot reshape " + shape_str(st) + " to " + shape_str(*b_shape_));
    const size_t r = target->size();
    if (r >= 2 && (*target)[r - 2] == st[st.size() - 2] && (*target)[r - 1] == st.back()) {
      Shape storage = *target;
      std::swap(storage[r - 1], storage[r - 2]);
      return {x.reshaped(storage), *target, true};
    }
    Tensor t(x.dtype(), st);
    std::vector<int64_t> strides = row_major_strides(x.shape());
    std::swap(strides[strides.size() - 1], strides[strides.size() - 2]);
    strided_copy(x.raw(), 0, strides, t.mutable_raw(), st, dtype_size(x.dtype()));
    return {t.reshaped(*target), *target, false};
  }
  // ONNX Reshape (allowzero = 0: 0 copies the input dim, one -1 is inferred) of `in`; nullopt when
  // the element counts cannot match.
  static std::optional<Shape> reshape_target(const Shape& in, const std::vector<int64_t>& spec) {
    Shape out(spec.begin(), spec.end());
    int64_t known = 1, infer = -1;
    for (size_t i = 0; i < out.size(); ++i) {
      if (out[i] == 0) {
        if (i >= in.size()) return std::nullopt;
        out[i] = in[i];
      }
      if (out[i] == -1) {
        if (infer >= 0) return std::nullopt;
        infer = static_cast<int64_t>(i);
      } else if (out[i] < 0) {
        return std::nullopt;
      } else {
        known *= out[i];
      }
    }
    const int64_t total = checked_numel(in);
    if (infer >= 0) {
      if (known == 0 || total % known != 0) return std::nullopt;
      out[static_cast<size_t>(infer)] = total / known;
    } else if (known != total) {
      return std::nullopt;
    }
    return out;
  }

  NodeDef node_;
  std::vector<ActStep> acts_;
  bool trans_b_;
  std::optional<std::vector<int64_t>> b_shape_;
  // keep_widened (optimize/keep_widened.cc): A may be float32 holding B's half type's values; the half output may be
  // written so for the readers.
  bool widened_input_, widened_output_, shares_widened_;
  matmul_dnnl::ConstantB constant_b_;
  PackedGemv gemv_b_;
  WidenedConstants widened_;
};

// Y = alpha * A' B' + beta * C, C broadcast to (M, N).
class GemmKernel : public Kernel {
 public:
  explicit GemmKernel(const NodeDef& node)
      : node_(node),
        alpha_(node.attr_float("alpha", 1.0f)),
        beta_(node.attr_float("beta", 1.0f)),
        trans_a_(node.attr_int("transA", 0) != 0),
        trans_b_(node.attr_int("transB", 0) != 0),
        widened_input_(node.attr_int("widened_input", 0) != 0),
        widened_output_(node.attr_int("widened_output", 0) != 0),
        shares_widened_(node.attr_int("shares_widened", 0) != 0),
        acts_(parse_activations(node)) {}
  // A constant B (a Linear's weight) is packed for oneDNN once (matmul_dnnl.h), as in MatMul.
  void prepare(const std::vector<const Tensor*>& constants) override {
    for (const Tensor* t : constants)
      if (t) widened_.add(*t);
    const Tensor* b = constants.size() > 1 ? constants[1] : nullptr;
    if (b && b->rank() == 2 && !trans_a_ && alpha_ == 1.0f) {
      pack_constant_b(constant_b_, widened_, *b, trans_b_, acts_);
      keep_for_gemv(gemv_b_, *b, trans_b_);
    }
  }

  void compute(KernelIO& io) const override {
    const Tensor& a = io.in(0);
    const Tensor& b = io.in(1);
    const Tensor* c = io.optional(2);
    if (a.rank() != 2 || b.rank() != 2) node_.fail("Gemm needs rank-2 A and B");
    if (shares_widened_ && io.outputs.size() > 1 && is_float16_like(a.dtype()))
      return share_widened(io, [&](KernelIO& f) { compute(f); });
    const bool bias_row = !c || (beta_ == 1.0f && (c->rank() == 1 || (c->rank() == 2 && c->dim(0) == 1)));
    // A widened by its producer (optimize/keep_widened.cc), as in MatMul: read as it is by the packed product, else
    // rounded back to B's type (exact) for the paths below.
    if ((widened_input_ || shares_widened_) && a.dtype() == DType::kFloat32 && is_float16_like(b.dtype())) {
      if (bias_row && a.dim(0) > 1 && half_product(io, constant_b_, widened_, a.dim(0), c, widened_output_)) return;
      return on_narrowed_a(io, b.dtype(), [&](KernelIO& f) { compute(f); });
    }
    if (a.dtype() != b.dtype() || (c && c->dtype() != a.dtype())) node_.fail("input dtypes differ");
    // float16/bfloat16: float32 products, sums and bias, rounded once (torch's addmm on CPU).
    if (is_float16_like(a.dtype())) {
      if (bias_row && a.dim(0) == 1 && half_gemv(io, gemv_b_, widened_, c, acts_)) return;
      if (bias_row && half_product(io, constant_b_, widened_, a.dim(0), c, widened_output_)) return;
      return with_float32(
          io, a.dtype(), [&](KernelIO& f) { compute(f); }, &widened_);
    }
    const int64_t m = trans_a_ ? a.dim(1) : a.dim(0), k = trans_a_ ? a.dim(0) : a.dim(1);
    const int64_t kb = trans_b_ ? b.dim(1) : b.dim(0), n = trans_b_ ? b.dim(0) : b.dim(1);
    if (k != kb) node_.fail("inner dimensions differ: " + shape_str(a.shape()) + " and " + shape_str(b.shape()));
    check_blas_dims(node_, m, n, k);
    Tensor out(a.dtype(), {m, n});
    // C as a bias row (a Linear): [N] or [1, N] with beta 1.
    const bool c_is_bias =
        c && beta_ == 1.0f && c->numel() == n && (c->rank() == 1 || (c->rank() == 2 && c->dim(0) == 1));
    if (a.dtype() == DType::kFloat32 && gemv_b_.holds(b) && (!c || c_is_bias) && k > 0 && m == 1)
      return gemv_product(io, gemv_b_, a.data<float>(), c ? c->data<float>() : nullptr, std::move(out), acts_);
    if (a.dtype() == DType::kFloat32 && constant_b_.holds(b) && (!c || c_is_bias) && k > 0 && m > 1 &&
        constant_b_.run(io, m, a.data<float>(), k, c ? c->data<float>() : nullptr, out.data<float>())) {
      io.outputs[0] = std::move(out);
      return;
    }
    if (a.dtype() == DType::kFloat32) {
      run<float>(io, a, b, c, out, m, k, n);
      rows_epilogue<float>(io, out, nullptr, n, acts_);
    } else if (a.dtype() == DType::kFloat64) {
      run<double>(io, a, b, c, out, m, k, n);
      rows_epilogue<double>(io, out, nullptr, n, acts_);
    } else
      node_.fail("dtype " + dtype_name(a.dtype()) + " is not implemented", ErrorKind::kUnsupported);
    io.outputs[0] = std::move(out);
  }
  double flops(const KernelIO& io) const override {
    const Tensor& a = io.in(0);
    return 2.0 * static_cast<double>(io.outputs[0].numel()) * static_cast<double>(trans_a_ ? a.dim(0) : a.dim(1));
  }

 private:
  template <typename T>
  void run(const KernelIO& io, const Tensor& a, const Tensor& b, const Tensor* c, Tensor& out, int64_t m, int64_t k,
           int64_t n) const {
    T* po = out.data<T>();
    T beta = 0;
    if (c && beta_ != 0.0f) {
      const Shape out_shape{m, n};
      if (broadcast_shapes(c->shape(), out_shape, &node_) != out_shape)
        node_.fail("C of shape " + shape_str(c->shape()) + " does not broadcast to " + shape_str(out_shape));
      // Fill Y with C broadcast, rows split over the pool (a serial pass on the run's thread left the
      // pool idle for it); the GEMM then accumulates beta * Y.
      const Shape cs = c->shape();
      const int64_t cm = cs.size() == 2 ? cs[0] : 1, cn = cs.empty() ? 1 : cs.back();
      const T* pc = c->data<T>();
      parallel_for(io, m, std::max<int64_t>(1, 4096 / std::max<int64_t>(n, 1)), [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) {
          const T* row = pc + (cm == 1 ? 0 : i) * cn;
          if (cn == n)
            std::memcpy(po + i * n, row, static_cast<size_t>(n) * sizeof(T));
          else
            std::fill(po + i * n, po + (i + 1) * n, row[0]);
        }
      });
      beta = static_cast<T>(beta_);
    } else {
      std::memset(po, 0, out.nbytes());
    }
    if (k == 0) {
      for (int64_t i = 0; i < m * n; ++i) po[i] *= beta;
      return;
    }
    note_backends(io, pool_gemm<T>(io, trans_a_, trans_b_, m, n, k, static_cast<T>(alpha_), a.data<T>(), a.dim(1),
                                   b.data<T>(), b.dim(1), beta, po, n));
  }
  NodeDef node_;
  float alpha_, beta_;
  bool trans_a_, trans_b_;
  bool widened_input_, widened_output_, shares_widened_;  // keep_widened, as in MatMul
  std::vector<ActStep> acts_;
  matmul_dnnl::ConstantB constant_b_;
  PackedGemv gemv_b_;
  WidenedConstants widened_;
};

}  // namespace

// MatMul has had numpy semantics since 1; 9 and 13 only widened the type list.
PARITY_KERNEL("MatMul", 1, MatMulKernel, kFloatTypes16);
// Gemm 7: unidirectional broadcast of C; 11: C optional; 13 widened types.
PARITY_KERNEL("Gemm", 7, GemmKernel, kFloatTypes16);
PARITY_KERNEL("Gemm", 11, GemmKernel, kFloatTypes16);
// + bias + activations fused at load (refrt/src/optimize/).
PARITY_FUSED_KERNEL("FusedMatMul", MatMulKernel, kFloatTypes16);
PARITY_FUSED_KERNEL("FusedGemm", GemmKernel, kFloatTypes16);

}  // namespace parity::refrt
