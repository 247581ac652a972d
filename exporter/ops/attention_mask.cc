// Fully masked attention rows: torch returns zeros, a plain ONNX Softmax returns NaN (exp(-inf - -inf)).
#include "attention_mask.h"

#include <limits>

namespace parity::exporter {

// A row is fully masked when its maximum score is -inf (a NaN score keeps the row alive, as in torch,
// whose test is `scores == -inf` for every key).
std::string fully_masked_rows(TranslateContext& ctx, const std::string& scores, DType t) {
  const std::string row_max = ctx.temp("row_max");
  emit_reduce(ctx, "ReduceMax", scores, {-1}, true, row_max);
  return ctx.emit1("Equal", {row_max, ctx.constant(-std::numeric_limits<double>::infinity(), t)}, "fully_masked");
}

std::string zero_fully_masked_rows(TranslateContext& ctx, const std::string& scores, const std::string& weights,
                                   DType t) {
  return ctx.emit1("Where", {fully_masked_rows(ctx, scores, t), ctx.constant(0, t), weights}, "safe_weights");
}

}  // namespace parity::exporter
