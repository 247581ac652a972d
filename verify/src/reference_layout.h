// Internal (verify): what the libtorch reference needs to follow the program where libtorch's own kernels
// would not. Free of libtorch (reference.cc applies it), so that it is unit-tested on its own.
//
// Layouts: torch.export records each value's strides as its fake (meta) kernels computed them, and torch's
// decompositions choose `view` over a copying `reshape` from those strides. A CPU kernel may return another
// layout than its meta kernel (aten::_native_batch_norm_legit_no_training returns a contiguous tensor for a
// permuted input; the meta kernel keeps the input's order), and then a decomposed program's `view` fails in
// libtorch (and in torch's own ExportedProgram.module()) though the program is valid for its recorded layouts.
//
// Runtime assertions: torch.export turns torch._check on a data-dependent value (an unbacked symbol, u0)
// into `aten::_assert_scalar` nodes. A check written for export only (under torch.compiler.is_exporting())
// was never run by eager, so eager's input may violate it while eager's result is still well defined.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace parity::verify {

// The dims of a dense, non-overlapping layout ordered outermost first (largest stride first; size-1 dims,
// whose strides say nothing, last); nullopt when `strides` (recorded, or their example values) are not such
// a layout of `sizes`, or the tensor is empty.
std::optional<std::vector<int64_t>> dense_dim_order(const std::vector<int64_t>& sizes,
                                                    const std::vector<int64_t>& strides);

// The strides of a dense tensor of `sizes` whose dims are laid out in `order` (outermost first).
std::vector<int64_t> dense_strides(const std::vector<int64_t>& sizes, const std::vector<int64_t>& order);

// Whether a tensor of `sizes` with `strides` is laid out as `expected` on every dim of size > 1 (the strides
// of a size-1 dim are irrelevant to every view and kernel).
bool same_layout(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
                 const std::vector<int64_t>& expected);

// The expression of torch's runtime-assertion message ("Runtime assertion failed for expression u0 >= 2 on
// node 'ge'") when it involves an unbacked symbol (u0, u1, ...: a size or value read from tensor data);
// nullopt for any other message, including assertions on input sizes only (s0, s1, ...).
std::optional<std::string> unbacked_assertion(const std::string& message);

}  // namespace parity::verify
