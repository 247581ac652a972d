// Tie-aware comparison of index outputs (argmax/argmin/topk/sort/max.dim/min.dim): when two engines pick
// different indices of equal values, both answers are right (ONNX takes the lower index, PyTorch's
// kernels do not promise an order). The FX op that produced the value decides, not its dtype.
#pragma once
#include <optional>
#include <string>

#include "parity/exporter/program.h"
#include "parity/tensor.h"
#include "parity/verify/compare.h"

namespace parity::verify {

// Where an index value comes from: the input it indexes and the dim it indexes along.
struct IndexSource {
  std::string node;         // FX node name
  std::string op;           // "aten::topk.default"
  std::string input_value;  // the FX value whose elements the indices select
  int64_t dim = 0;          // normalised; ignored when `flat`
  bool flat = false;        // argmax/argmin without dim: indices into the flattened input
};

// The index source of FX value `value` when an arg-extreme, topk or sort node produced it as its
// indices output; nullopt for any other value.
std::optional<IndexSource> index_source(const pt2::Program& program, const std::string& value);

// Turns a failed comparison of index tensors into a pass when every differing index selects a value of
// `input` equal to the one the expected index selects (within the input dtype's tolerance; exactly for
// integers): sets passed, mismatches = 0, ties = the number of such elements, and errors/histogram of
// the selected values. Leaves `cmp` untouched when any difference is not a tie.
void settle_ties(Comparison& cmp, const IndexSource& source, const Tensor& input, const Tensor& expected,
                 const Tensor& actual);

}  // namespace parity::verify
