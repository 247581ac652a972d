// The seam between parity_verify and the libtorch reference module (libparity_reference.so).
// The module is loaded on first use (reference_loader.cc), so that the commands that never run the
// reference (run, export, profile, ops, conformance, ...) do not pay libtorch's start-up: its static
// operator registration costs about 0.4 s of every process that links it.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "parity/verify/reference.h"

namespace parity::verify {

struct ReferenceApi {
  ReferenceResult (*run)(const pt2::Program& program, const std::vector<Tensor>& user_inputs, bool keep_intermediates,
                         const std::map<std::string, Tensor>* substitutes);
  std::string (*torch_version)();
  void (*load_library)(const std::string& path);
};

}  // namespace parity::verify

// The module's one entry point, found with dlsym.
extern "C" const parity::verify::ReferenceApi* parity_reference_api();
