// cpu_isa.h's CpuFacts: the machine facts a profile or benchmark table states beside its timings.
#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>
#include <fstream>

#include "../kernels/dnnl_common.h"
#include "parity/refrt/cpu_isa.h"

namespace parity::refrt {
namespace {

std::string cpuinfo_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      return colon == std::string::npos ? "" : line.substr(line.find_first_not_of(' ', colon + 1));
    }
  return "";
}

// A string function of the linked OpenBLAS, looked up at run time (another BLAS may be linked).
std::string openblas_string(const char* symbol) {
  using Fn = char* (*)();
  auto fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, symbol));
  const char* s = fn ? fn() : nullptr;
  std::string out = s ? s : "";
  while (!out.empty() && std::isspace(static_cast<unsigned char>(out.back()))) out.pop_back();
  return out;
}

// OpenBLAS cores with AVX2 (or wider) kernels; any other core on an AVX2 CPU is its fallback.
bool avx2_core(std::string core) {
  std::transform(core.begin(), core.end(), core.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* name : {"haswell", "zen", "skylakex", "cooperlake", "sapphirerapids"})
    if (core == name) return true;
  return false;
}

}  // namespace

const CpuFacts& cpu_facts() {
  static const CpuFacts facts = [] {
    CpuFacts f;
    f.model_name = cpuinfo_model_name();
    f.family = cpu_features().family;  // CPUID is read in cpu_isa.cc only
    f.model = cpu_features().model;
    f.refrt_isa = isa_summary();
    f.onednn = dnnl_common::version();
    f.onednn_isa = dnnl_common::effective_isa();
    f.openblas = openblas_string("openblas_get_config");
    f.openblas_core = openblas_string("openblas_get_corename");
    f.openblas_generic = !f.openblas_core.empty() && isa_info().cpu >= IsaLevel::kAvx2 && !avx2_core(f.openblas_core);
    return f;
  }();
  return facts;
}

std::string generic_openblas_note() {
  const CpuFacts& f = cpu_facts();
  if (!f.openblas_generic || !isa_allows(IsaLevel::kAvx2)) return "";
  const char* forced = std::getenv("OPENBLAS_CORETYPE");
  const std::string why =
      forced && *forced ? std::string("OPENBLAS_CORETYPE=") + forced : std::string("it chooses by model number");
  return "note: OpenBLAS runs its generic '" + f.openblas_core + "' core on this CPU (" + f.model_name + ", family " +
         std::to_string(f.family) + " model " + std::to_string(f.model) + "; " + why +
         "). refrt's float32 GEMMs and convolutions run on " + f.onednn + " (" + f.onednn_isa +
         ") instead; only float64 products still use OpenBLAS.";
}

}  // namespace parity::refrt
