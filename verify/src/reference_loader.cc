// run_reference and friends for the rest of Parity: they load the libtorch reference module
// (libparity_reference.so, next to this library) on first use and call into it. See reference_api.h.
#include <dlfcn.h>

#include <filesystem>
#include <string>

#include "parity/error.h"
#include "reference_api.h"

namespace parity::verify {
namespace {

std::string module_path() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<const void*>(&module_path), &info) || !info.dli_fname)
    throw Error({"verify"}, "cannot locate libparity_verify (dladdr failed), so not the libtorch reference either");
  return (std::filesystem::path(info.dli_fname).parent_path() / "libparity_reference.so").string();
}

const ReferenceApi& load() {
  const std::string path = module_path();
  // RTLD_GLOBAL: custom-op libraries loaded later (TORCH_LIBRARY) resolve against this libtorch.
  // RTLD_DEEPBIND: libtorch's own symbols first. Without it libtorch's BLAS calls (sgemm_ of the MKL inside
  // libtorch_cpu) bound to the OpenBLAS refrt had already loaded, so the reference's GEMMs rounded unlike
  // eager's (5.96e-8 on a LLaMA k_proj: enough to flip a dynamically quantized activation by one step).
#if defined(__SANITIZE_ADDRESS__)
  const int deepbind = 0;  // the sanitizer runtimes refuse RTLD_DEEPBIND
#else
  const int deepbind = RTLD_DEEPBIND;
#endif
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL | deepbind);
  if (!handle) {
    const char* why = dlerror();
    throw Error({"verify", path},
                std::string("cannot load the libtorch reference module: ") + (why ? why : "dlopen failed"));
  }
  using Entry = const ReferenceApi* (*)();
  auto entry = reinterpret_cast<Entry>(dlsym(handle, "parity_reference_api"));
  if (!entry) throw Error({"verify", path}, "not a Parity reference module (no parity_reference_api)");
  return *entry();
}

const ReferenceApi& api() {
  static const ReferenceApi& loaded = load();  // a failed load throws and is retried by the next call
  return loaded;
}

}  // namespace

ReferenceResult run_reference(const pt2::Program& program, const std::vector<Tensor>& user_inputs,
                              bool keep_intermediates, const std::map<std::string, Tensor>* substitutes) {
  return api().run(program, user_inputs, keep_intermediates, substitutes);
}

std::string libtorch_version() { return api().torch_version(); }

void load_torch_library(const std::string& path) { api().load_library(path); }

}  // namespace parity::verify
