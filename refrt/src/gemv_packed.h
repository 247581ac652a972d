// Internal: the one-row product with a constant B (weights) on AVX-512, B packed for streaming: the decode
// step of a language model (MatMul / Gemm / FusedMatMul with M == 1).
//
// Why packed: a GEMV reads every weight once, so its speed is the speed at which B streams from memory. B as
// stored ([K, N] rows, or a Linear's [N, K]) is read either in short pieces of each row (threads split by
// columns) or whole rows into an accumulator row (gemv.cc's AVX2 path, threads split by K with a sum of partial
// rows at the end). Packed, each panel of 64 output columns is one contiguous stream along K (64 floats per k:
// four cache lines), its 64 sums stay in four ZMM registers, and threads take whole panels: every thread reads
// one sequential stream and writes its own columns, and the result is the same for every thread count (each
// column is summed over k in order from zero, as the AVX2 path's single-thread sums are).
//
// float16 / bfloat16 weights are packed as they are (half the bytes to stream) and widened in registers: the
// products and sums are those of the float32 path on the weights widened (exact), in the same order. Where refrt's
// level has AVX-512 BF16 (avx512_bf16, amx), bfloat16 weights are packed in pairs of k instead and multiplied by
// vdpbf16ps: 32 products an instruction, with no widening (a bfloat16 row x is bfloat16 too, ONNX's MatMul / Gemm
// type constraint, so its pairs are exact). Each product is exact in float32 and each is added with one rounding, as
// an FMA adds it, but the instruction adds k + 1 before k (and flushes denormals): the sums differ from the widening
// path's by the rounding of the order, and are the same for every thread count.
//
// The panels are made at the first one-row run, not when the session loads: a model that never runs one row
// (prefill, batches) does not hold its weights twice. PARITY_REFRT_PACKED_GEMV=0 turns the path off (the
// AVX2 gemv / BLAS paths of gemm.h then run), and refrt's level must have AVX-512 (PARITY_REFRT_ISA caps it).
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>

#include "backend_probe.h"
#include "kernel.h"

namespace parity::refrt {

// Whether the packed GEMV may run: refrt's level has AVX-512 (F, BW, VL, DQ) and PARITY_REFRT_PACKED_GEMV is not 0.
bool packed_gemv_available();

class PackedGemv {
 public:
  PackedGemv();
  ~PackedGemv();
  // b: a float32, float16 or bfloat16 [K, N] matrix, or [N, K] when trans (Gemm's transB, a Linear's weight).
  // Kept (a shared buffer); packed, in its dtype, at the first run.
  void set(const Tensor& b, bool trans);
  DType dtype() const { return b_.dtype(); }
  // Whether `b` is the tensor given to set() (a graph input overriding it would not be).
  bool holds(const Tensor& b) const { return b_.defined() && b.raw() == b_.raw() && b.dtype() == b_.dtype(); }
  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  // y[0, n) = x[0, k) B (x and y float32 whatever B's dtype), + bias[0, n) when given (added after the sum, as an
  // epilogue does), columns split over io's pool. Returns the backend that ran (kRefrtPackedGemv, or
  // kRefrtPackedGemvBf16 for bfloat16 pairs), for the node's label.
  Backend run(const KernelIO& io, const float* x, const float* bias, float* y) const;

  struct Panels;

 private:
  const Panels& panels(const KernelIO& io) const;
  Tensor b_;
  bool trans_ = false;
  bool pairs_ = false;  // bfloat16 B in pairs of k, for vdpbf16ps
  int64_t k_ = 0, n_ = 0;
  mutable std::once_flag packed_;
  mutable std::unique_ptr<Panels> panels_;
};

}  // namespace parity::refrt
