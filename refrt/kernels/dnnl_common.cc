// dnnl_common.h: the engine, streams, thread settings and names of refrt's oneDNN paths.
#include "dnnl_common.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

#include "../src/kernel.h"
#include "parity/refrt/cpu_isa.h"

namespace parity::refrt::dnnl_common {
namespace {

// oneDNN's ceiling from refrt's ISA level (PARITY_REFRT_ISA), set before its first JIT.
dnnl::cpu_isa dnnl_isa(IsaLevel level) {
  switch (level) {
    case IsaLevel::kAvx512:
      return dnnl::cpu_isa::avx512_core;
    case IsaLevel::kAvx512Vnni:
      return dnnl::cpu_isa::avx512_core_vnni;
    case IsaLevel::kAvx512Bf16:
      return dnnl::cpu_isa::avx512_core_bf16;
    case IsaLevel::kAmx:
      return dnnl::cpu_isa::avx512_core_amx;
    default:
      // avx2_vnni: AVX2 plus AVX-VNNI (Alder Lake, and the AVX2 side of newer Xeons); oneDNN uses VNNI
      // there only when the CPU has it.
      return dnnl::cpu_isa::avx2_vnni;
  }
}

// oneDNN's own cap, ONEDNN_MAX_CPU_ISA (or its older name DNNL_MAX_CPU_ISA), as oneDNN spells the levels;
// nullopt when unset or not one of them. oneDNN reads it only when nobody calls set_max_cpu_isa, which
// refrt does: refrt applies it itself (onednn_isa_cap), so that the variable caps oneDNN inside refrt too.
std::optional<dnnl::cpu_isa> env_isa_cap() {
  const char* v = std::getenv("ONEDNN_MAX_CPU_ISA");
  if (v == nullptr || *v == '\0') v = std::getenv("DNNL_MAX_CPU_ISA");
  if (v == nullptr || *v == '\0') return std::nullopt;
  std::string name = v;
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::toupper(c); });
  using I = dnnl::cpu_isa;
  const std::pair<const char*, I> names[] = {{"ALL", I::all},
                                             {"SSE41", I::sse41},
                                             {"AVX", I::avx},
                                             {"AVX2", I::avx2},
                                             {"AVX2_VNNI", I::avx2_vnni},
                                             {"AVX512_CORE", I::avx512_core},
                                             {"AVX512_CORE_VNNI", I::avx512_core_vnni},
                                             {"AVX512_CORE_BF16", I::avx512_core_bf16},
                                             {"AVX512_CORE_AMX", I::avx512_core_amx}};
  for (const auto& [n, isa] : names)
    if (name == n) return isa;
  return std::nullopt;
}

}  // namespace

dnnl::cpu_isa onednn_isa_cap() {
  static const dnnl::cpu_isa cap = [] {
    const dnnl::cpu_isa own = dnnl_isa(isa_info().error.empty() ? isa_info().level : IsaLevel::kScalar);
    const auto env = env_isa_cap();
    if (!env || *env == dnnl::cpu_isa::all) return own;
    // oneDNN's ISA values are sets of feature bits, each level holding the ones below it: the common part
    // of two caps is their bitwise and (avx2_vnni & avx512_core = avx2).
    return static_cast<dnnl::cpu_isa>(static_cast<unsigned>(own) & static_cast<unsigned>(*env));
  }();
  return cap;
}

bool onednn_allows(dnnl::cpu_isa isa) {
  const unsigned want = static_cast<unsigned>(isa);
  return (static_cast<unsigned>(onednn_isa_cap()) & want) == want;
}

const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine = [] {
    try {
      dnnl::set_max_cpu_isa(onednn_isa_cap());
    } catch (const dnnl::error&) {  // only before oneDNN's first JIT; nothing else in refrt runs one
    }
    return dnnl::engine(dnnl::engine::kind::cpu, 0);
  }();
  return engine;
}

dnnl::stream& thread_stream() {
  thread_local dnnl::stream stream(cpu_engine());
  return stream;
}

namespace {

// The Debian build of oneDNN threads with OpenMP (libgomp): its entry points for the thread count, looked up
// in the libgomp that libdnnl loaded (torch carries its own copy under another name).
struct Gomp {
  using Set = void (*)(int);
  using Get = int (*)();
  Set set = nullptr;
  Get get = nullptr;
};

const Gomp& gomp() {
  static const Gomp g = [] {
    Gomp out;
    if (void* lib = dlopen("libgomp.so.1", RTLD_LAZY | RTLD_NOLOAD)) {
      out.set = reinterpret_cast<Gomp::Set>(dlsym(lib, "omp_set_num_threads"));
      out.get = reinterpret_cast<Gomp::Get>(dlsym(lib, "omp_get_max_threads"));
    }
    return out;
  }();
  return g;
}

}  // namespace

// A per-thread setting, set on every call: whoever else shares the library may change it in between.
OneOpenmpThread::OneOpenmpThread() {
  const Gomp& g = gomp();
  if (!g.set || !g.get) return;
  saved_ = g.get();
  if (saved_ != 1) g.set(1);
}

OneOpenmpThread::~OneOpenmpThread() {
  if (saved_ > 1) gomp().set(saved_);
}

bool allowed(const char* env) {
  const char* v = std::getenv(env);
  if (v != nullptr && std::string(v) == "0") return false;
  return isa_allows(IsaLevel::kAvx2);
}

bool float_gemm_prefers_onednn() {
  static const bool prefer = [] {
    if (isa_allows(IsaLevel::kAvx512)) return true;
    const CpuFacts& f = cpu_facts();
    return f.openblas_core.empty() || f.openblas_generic;
  }();
  return prefer;
}

bool has_vnni() {
  static const bool vnni = [] {
    if (isa_allows(IsaLevel::kAvx512Vnni)) return onednn_allows(dnnl::cpu_isa::avx512_core_vnni);
    // AVX-VNNI (the VEX form: Alder Lake and newer) counts only at refrt's avx2 level, where oneDNN is capped
    // at avx2_vnni; capped at avx512_core, oneDNN would not use it.
    return isa_info().level == IsaLevel::kAvx2 && cpu_has(CpuFeature::kAvxVnni) &&
           onednn_allows(dnnl::cpu_isa::avx2_vnni);
  }();
  return vnni;
}

std::string effective_isa() {
  cpu_engine();  // the cap is set first
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::sse41:
      return "sse41";
    case dnnl::cpu_isa::avx:
      return "avx";
    case dnnl::cpu_isa::avx2:
      return "avx2";
    case dnnl::cpu_isa::avx2_vnni:
      return "avx2_vnni";
    case dnnl::cpu_isa::avx512_core:
      return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni:
      return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16:
      return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx:
      return "avx512_core_amx";
    case dnnl::cpu_isa::all:
      return "all";
    default:
      return "other";
  }
}

std::string version() {
  const dnnl_version_t* v = dnnl_version();
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
}

std::string_view impl_name(const char* onednn_impl) {
  std::string name = std::string("onednn ") + onednn_impl;
  // Some implementations do not name their ISA ("gemm:jit"): the one oneDNN dispatches to is added.
  if (name.find("avx") == std::string::npos && name.find("amx") == std::string::npos &&
      name.find("sse") == std::string::npos)
    name += " (" + effective_isa() + ")";
  return intern_impl(name);
}

}  // namespace parity::refrt::dnnl_common
