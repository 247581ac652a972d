// The instruction-set level refrt's hand-written kernels use: decided once per process from the CPU's
// feature bits, capped by the environment variable PARITY_REFRT_ISA so that the tests can run every
// lower path on one machine. Kernels ask `isa_allows(level)`; nothing else reads CPUID.
// OpenBLAS picks its own kernels (its variable OPENBLAS_CORETYPE governs that, not this one).
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parity::refrt {

// Ordered: each level includes the ones below it.
enum class IsaLevel : int {
  kScalar = 0,  // no hand-written vector code (the compiler's baseline, SSE2 on x86-64)
  kAvx2 = 1,    // AVX2 + FMA
  kAvx512 = 2,  // AVX-512 F, BW, VL, DQ (and the OS saves the ZMM state)
  kAvx512Vnni = 3,
  kAvx512Bf16 = 4,
  kAmx = 5,  // AMX tile + int8 + bf16, and the kernel granted this process the tile state
};

struct IsaInfo {
  IsaLevel cpu = IsaLevel::kScalar;    // what this CPU (and OS) can execute
  IsaLevel level = IsaLevel::kScalar;  // what the kernels use: min(cpu, cap)
  std::optional<IsaLevel> cap;         // from PARITY_REFRT_ISA, when set and valid
  std::string note;                    // set when the cap is above the CPU's level
  std::string error;                   // set when PARITY_REFRT_ISA names no level
};

// Every level, lowest first, and its name as PARITY_REFRT_ISA spells it ("scalar", "avx2", "avx512",
// "avx512_vnni", "avx512_bf16", "amx").
const std::vector<IsaLevel>& isa_levels();
const char* isa_name(IsaLevel level);
std::optional<IsaLevel> parse_isa_level(std::string_view name);

// The decision, from the CPU's level and the variable's value (nullptr or "" = unset; "native" = the
// CPU's level). Pure, for tests.
IsaInfo decide_isa(IsaLevel cpu, const char* cap_value);
// This CPU's level from its feature bits.
IsaLevel detect_cpu_isa();

// This process's decision, made on first use; never throws (kernels call it from static initialisers).
const IsaInfo& isa_info();
// The level in use; throws parity::Error (usage) when PARITY_REFRT_ISA names no level. Session loading
// calls it, so a misspelt cap fails loudly before any kernel runs.
IsaLevel isa_level();
// Whether the kernels may use `level`'s instructions (false for every vector level when the
// variable is invalid: the session refuses to load anyway).
bool isa_allows(IsaLevel level);
// One line for people: "avx2 (CPU: avx2)", "scalar (PARITY_REFRT_ISA=scalar; CPU: avx2)".
std::string isa_summary();

// What decides refrt's speed on this machine, for profiles and benchmark tables: the CPU by name and
// family/model, refrt's level, the ISA oneDNN dispatches to, and the core OpenBLAS chose (from the
// CPU's model number: a CPU newer than the library gets a generic core, `openblas_generic`).
struct CpuFacts {
  std::string model_name;  // /proc/cpuinfo's "model name"
  int family = 0, model = 0;
  std::string refrt_isa;   // isa_summary()
  std::string onednn;      // "oneDNN 2.6.3"
  std::string onednn_isa;  // "avx512_core_amx", "avx2", ...
  std::string openblas;    // "OpenBLAS 0.3.21 ..." (openblas_get_config), "" when another BLAS is linked
  std::string openblas_core;
  bool openblas_generic = false;  // the core has no AVX2 kernels although the CPU has AVX2
};
const CpuFacts& cpu_facts();
// One line saying that OpenBLAS runs a generic core on this CPU and what refrt still computes with it, or ""
// when its core has AVX2 kernels (or refrt's level is below AVX2). `parity profile` and `parity ops` print it;
// sessions stay silent (a command's first stderr line is its error).
std::string generic_openblas_note();

}  // namespace parity::refrt
