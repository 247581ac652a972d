// gemm.h: the float32 product on oneDNN, and the names of what runs gemm<T>.
#include "gemm.h"

#include <cstdlib>
#include <string>

#include "../kernels/dnnl_common.h"
#include "parity/refrt/cpu_isa.h"

namespace parity::refrt {

bool sgemm_on_onednn() {
  static const bool on = dnnl_common::allowed("PARITY_REFRT_SGEMM_DNNL") && dnnl_common::float_gemm_prefers_onednn();
  return on;
}

void onednn_sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                  const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  dnnl_common::cpu_engine();  // the ISA cap is set before oneDNN's first JIT
  const dnnl_common::OneOpenmpThread one_thread;
  const dnnl_status_t status = dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  if (status != dnnl_success)
    throw Error({"refrt"}, "oneDNN sgemm failed (status " + std::to_string(static_cast<int>(status)) + ") for " +
                               std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n));
}

std::string_view gemm_impl_name(bool float32) {
  static const std::string_view onednn = intern_impl("onednn sgemm (" + dnnl_common::effective_isa() + ")");
  static const std::string_view sgemm = intern_impl("openblas sgemm (core " + cpu_facts().openblas_core + ")");
  static const std::string_view dgemm = intern_impl("openblas dgemm (core " + cpu_facts().openblas_core + ")");
  if (!float32) return dgemm;
  return sgemm_on_onednn() ? onednn : sgemm;
}

}  // namespace parity::refrt
