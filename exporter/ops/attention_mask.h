// Internal: torch's rule for attention rows whose every key is masked (shared by the unfused attention
// translations in nn.cc and norms_upsample_losses.cc).
#pragma once
#include <string>

#include "../src/translate.h"

namespace parity::exporter {

// `weights` = Softmax(scores) over the last axis with the rows whose scores are all -inf set to 0, as
// torch's scaled_dot_product_attention (its _safe_softmax) does: a plain Softmax gives NaN there (left
// padding under a causal mask hides every key of the padded query rows).
std::string zero_fully_masked_rows(TranslateContext& ctx, const std::string& scores, const std::string& weights,
                                   DType t);

// Bool [..., rows, 1]: the rows of `scores` whose every entry is -inf.
std::string fully_masked_rows(TranslateContext& ctx, const std::string& scores, DType t);

}  // namespace parity::exporter
