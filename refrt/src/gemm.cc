// gemm.h: the float32 product on oneDNN, the BLAS calls, and the names of the backends that ran a product.
#include "gemm.h"

#include <cblas.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <unordered_map>

#include "../kernels/dnnl_common.h"
#include "parity/refrt/cpu_isa.h"

namespace parity::refrt {

bool sgemm_on_onednn() {
  static const bool on = dnnl_common::allowed("PARITY_REFRT_SGEMM_DNNL") && dnnl_common::float_gemm_prefers_onednn();
  return on;
}

void onednn_sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                  const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  backend_probe::hit(Backend::kOnednnSgemm);
  dnnl_common::cpu_engine();  // the ISA cap is set before oneDNN's first JIT
  const dnnl_common::OneOpenmpThread one_thread;
  const dnnl_status_t status = dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  if (status != dnnl_success)
    throw Error({"refrt"}, "oneDNN sgemm failed (status " + std::to_string(static_cast<int>(status)) + ") for " +
                               std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n));
}

namespace {

CBLAS_TRANSPOSE op(bool t) { return t ? CblasTrans : CblasNoTrans; }
int i32(int64_t v) { return static_cast<int>(v); }  // callers checked the range (check_blas_dims)

}  // namespace

void openblas_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                   const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  backend_probe::hit(Backend::kOpenblasSgemm);
  cblas_sgemm(CblasRowMajor, op(ta), op(tb), i32(m), i32(n), i32(k), alpha, a, i32(lda), b, i32(ldb), beta, c,
              i32(ldc));
}

void openblas_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
                   const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  backend_probe::hit(Backend::kOpenblasDgemm);
  cblas_dgemm(CblasRowMajor, op(ta), op(tb), i32(m), i32(n), i32(k), alpha, a, i32(lda), b, i32(ldb), beta, c,
              i32(ldc));
}

void openblas_gemv(bool trans, int64_t rows, int64_t cols, float alpha, const float* a, int64_t lda, const float* x,
                   int64_t incx, float beta, float* y, int64_t incy) {
  backend_probe::hit(Backend::kOpenblasSgemv);
  cblas_sgemv(CblasRowMajor, op(trans), i32(rows), i32(cols), alpha, a, i32(lda), x, i32(incx), beta, y, i32(incy));
}

void openblas_gemv(bool trans, int64_t rows, int64_t cols, double alpha, const double* a, int64_t lda, const double* x,
                   int64_t incx, double beta, double* y, int64_t incy) {
  backend_probe::hit(Backend::kOpenblasDgemv);
  cblas_dgemv(CblasRowMajor, op(trans), i32(rows), i32(cols), alpha, a, i32(lda), x, i32(incx), beta, y, i32(incy));
}

std::string_view backend_label(BackendSet set) {
  if (set == 0) return {};
  static std::mutex mutex;
  static std::unordered_map<BackendSet, std::string_view> labels;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = labels.find(set);
  if (it != labels.end()) return it->second;
  const std::string core = " (core " + cpu_facts().openblas_core + ")";
  std::string label;
  for (size_t i = 1; i < kBackendCount; ++i) {
    const auto b = static_cast<Backend>(i);
    if ((set & backend_bit(b)) == 0) continue;
    std::string part = backend_probe::name(b);
    if (b == Backend::kRefrtGemv || b == Backend::kRefrtHalfGemv || b == Backend::kRefrtPackedSgemm) part += " (avx2)";
    if (b == Backend::kRefrtPackedGemv) part += " (avx512)";
    if (b == Backend::kRefrtPackedGemvBf16) part += " (avx512_bf16)";
    if (b == Backend::kOnednnSgemm) part += " (" + dnnl_common::effective_isa() + ")";
    if (part.rfind("openblas ", 0) == 0) part += core;
    label += (label.empty() ? "" : " + ") + part;
  }
  return labels.emplace(set, intern_impl(label)).first->second;
}

}  // namespace parity::refrt
