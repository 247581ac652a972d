// dnnl_common.h: the engine, streams, thread settings and names of refrt's oneDNN paths.
#include "dnnl_common.h"

#include <dlfcn.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <cstdlib>

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

}  // namespace

const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine = [] {
    try {
      dnnl::set_max_cpu_isa(dnnl_isa(isa_level()));
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
    if (isa_allows(IsaLevel::kAvx512Vnni)) return true;
    // AVX-VNNI (the VEX form: Alder Lake and newer) counts only at refrt's avx2 level, where oneDNN is capped
    // at avx2_vnni; capped at avx512_core, oneDNN would not use it.
    if (isa_info().level != IsaLevel::kAvx2) return false;
#if defined(__x86_64__)
    // CPUID leaf 7, subleaf 1, EAX bit 4 (clang 14's __builtin_cpu_supports does not know "avxvnni").
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a & (1u << 4)) != 0;
#else
    return false;
#endif
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
