// The instruction-set level refrt's hand-written kernels use: decided once per process from the CPU's
// feature bits, capped by the environment variable PARITY_REFRT_ISA so that the tests can run every
// lower path on one machine. Kernels ask `isa_allows(level)`, and `cpu_has(feature)` for an extension
// outside the level's set (F16C, BMI, AVX-VNNI, ...). cpu_isa.cc is the one place in refrt that executes
// CPUID (and XGETBV): cpu_facts.cc and the oneDNN glue read the CPU through the functions below.
// OpenBLAS picks its own kernels (its variable OPENBLAS_CORETYPE governs that, not this one), and oneDNN
// its own (capped at refrt's level and ONEDNN_MAX_CPU_ISA, dnnl_common.cc).
#pragma once
#include <array>
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

// The CPU extensions refrt's code paths use, each as /proc/cpuinfo names it ("abm" is LZCNT there; refrt
// says "lzcnt"). A VEX/EVEX extension counts only when the OS saves its registers (XCR0), AMX's also
// needs the kernel's grant (cpu_isa.cc).
enum class CpuFeature : int {
  kPopcnt,
  kAvx,
  kAvx2,
  kFma,
  kF16c,
  kBmi1,
  kBmi2,
  kLzcnt,
  kMovbe,
  kAvxVnni,  // the VEX form of VNNI (Alder Lake, Sapphire Rapids, Zen 5)
  kAvx512f,
  kAvx512bw,
  kAvx512vl,
  kAvx512dq,
  kAvx512Vnni,
  kAvx512Bf16,
  kAmxTile,
  kAmxInt8,
  kAmxBf16,
  kCount,
};
constexpr size_t kCpuFeatureCount = static_cast<size_t>(CpuFeature::kCount);

struct CpuFeatures {
  std::array<bool, kCpuFeatureCount> bits{};
  int family = 0, model = 0;  // CPUID leaf 1, with the extended fields folded in
  bool has(CpuFeature f) const { return bits[static_cast<size_t>(f)]; }
  void set(CpuFeature f, bool on) { bits[static_cast<size_t>(f)] = on; }
};

const char* feature_name(CpuFeature f);
std::optional<CpuFeature> parse_feature(std::string_view name);
// This CPU's features from CPUID and XGETBV, as the hardware and OS report them.
CpuFeatures read_cpu_features();
// `detected` without the features named in `mask_value` (comma-separated feature_name()s; nullptr or "" = none).
// A name that is no feature sets *error. Pure, for tests.
CpuFeatures mask_features(CpuFeatures detected, const char* mask_value, std::string* error);
// This process's features: read_cpu_features() minus the test-only variable PARITY_REFRT_MASK_FEATURES, which
// makes refrt behave as on a CPU (or VM) without them, so that every path that depends on a feature is seen
// not taken on a machine that has it. Read once; never throws (a misspelt name makes isa_level() throw).
const CpuFeatures& cpu_features();
bool cpu_has(CpuFeature f);

struct IsaInfo {
  IsaLevel cpu = IsaLevel::kScalar;    // what this CPU (and OS) can execute
  IsaLevel level = IsaLevel::kScalar;  // what the kernels use: min(cpu, cap)
  std::optional<IsaLevel> cap;         // from PARITY_REFRT_ISA, when set and valid
  std::string note;                    // set when the cap is above the CPU's level
  std::string error;                   // set when PARITY_REFRT_ISA names no level (or the feature mask no feature)
  std::string masked;                  // PARITY_REFRT_MASK_FEATURES as applied: "f16c,avx_vnni", or ""
};

// Every level, lowest first, and its name as PARITY_REFRT_ISA spells it ("scalar", "avx2", "avx512",
// "avx512_vnni", "avx512_bf16", "amx").
const std::vector<IsaLevel>& isa_levels();
const char* isa_name(IsaLevel level);
std::optional<IsaLevel> parse_isa_level(std::string_view name);

// The decision, from the CPU's level and the variable's value (nullptr or "" = unset; "native" = the
// CPU's level). Pure, for tests.
IsaInfo decide_isa(IsaLevel cpu, const char* cap_value);
// The level `features` reach (each level needs every extension its kernels are compiled for: avx2 = AVX, AVX2,
// FMA, POPCNT; avx512 adds F, BW, VL, DQ; amx also needs `amx_granted`). Pure, for tests.
IsaLevel isa_of(const CpuFeatures& features, bool amx_granted);
// This process's CPU level, from cpu_features().
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
  std::string model_name;     // /proc/cpuinfo's "model name"
  int family = 0, model = 0;  // cpu_features()'s
  std::string refrt_isa;      // isa_summary()
  std::string onednn;         // "oneDNN 2.6.3"
  std::string onednn_isa;     // "avx512_core_amx", "avx2", ...
  std::string openblas;       // "OpenBLAS 0.3.21 ..." (openblas_get_config), "" when another BLAS is linked
  std::string openblas_core;
  bool openblas_generic = false;  // the core has no AVX2 kernels although the CPU has AVX2
};
const CpuFacts& cpu_facts();
// One line saying that OpenBLAS runs a generic core on this CPU and what refrt still computes with it, or ""
// when its core has AVX2 kernels (or refrt's level is below AVX2). `parity profile` and `parity ops` print it;
// sessions stay silent (a command's first stderr line is its error).
std::string generic_openblas_note();

}  // namespace parity::refrt
