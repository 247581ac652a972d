// Operators that transformers defines in Python (torch.library.custom_op), for the libtorch reference
// executor: a C++ process has no kernel for them, so the reference registers C++ twins
// (reference_transformers.cc).
#pragma once

namespace parity::verify {

// Idempotent; an operator the process already has (a loaded library defining it) keeps its definition.
void register_transformers_ops();

}  // namespace parity::verify
