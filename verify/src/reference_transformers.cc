// C++ twins of the operators transformers registers from Python, with the same ATen calls in the same
// order as transformers' Python bodies, so the reference matches eager bit for bit.
#include "reference_transformers.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <mutex>
#include <optional>

namespace parity::verify {

namespace {

// transformers::grouped_mm_fallback (transformers/integrations/moe.py): the experts' product on CPU.
// Rows start..offs[g] of `input` (sorted by expert) times weight[g], written into a zeroed output; an
// empty group is skipped and offs are taken as Python slices take them (clamped to the row count).
at::Tensor grouped_mm_fallback(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& offs) {
  TORCH_CHECK(input.dim() == 2, "grouped_mm_fallback: input must be 2-D, got ", input.sizes());
  TORCH_CHECK(weight.dim() == 3, "grouped_mm_fallback: weight must be 3-D, got ", weight.sizes());
  TORCH_CHECK(offs.dim() == 1 && offs.size(0) == weight.size(0),
              "grouped_mm_fallback: offs must hold one end per expert, got ", offs.sizes(), " for ", weight.size(0),
              " experts");
  TORCH_CHECK(input.size(1) == weight.size(1), "grouped_mm_fallback: input_dim ", input.size(1),
              " does not match the weight's ", weight.size(1));
  TORCH_CHECK(offs.scalar_type() == at::kInt || offs.scalar_type() == at::kLong,
              "grouped_mm_fallback: offs must be an integer tensor, got ", offs.scalar_type());
  at::Tensor output = at::zeros({input.size(0), weight.size(2)}, input.options());
  const at::Tensor ends = offs.to(at::kLong).contiguous();
  const int64_t* end_of = ends.data_ptr<int64_t>();
  int64_t start = 0;
  for (int64_t g = 0; g < ends.size(0); ++g) {
    const int64_t end = end_of[g];
    if (start == end) continue;
    at::Tensor rows = output.slice(0, start, end);
    at::mm_out(rows, input.slice(0, start, end), weight.select(0, g));
    start = end;
  }
  return output;
}

}  // namespace

void register_transformers_ops() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (c10::Dispatcher::singleton().findSchema({"transformers::grouped_mm_fallback", ""})) return;
    // A fragment: the namespace may hold other operators defined elsewhere.
    static auto* lib = new torch::Library(torch::Library::FRAGMENT, "transformers", std::nullopt, __FILE__, __LINE__);
    lib->def("grouped_mm_fallback(Tensor input, Tensor weight, Tensor offs) -> Tensor", &grouped_mm_fallback);
  });
}

}  // namespace parity::verify
