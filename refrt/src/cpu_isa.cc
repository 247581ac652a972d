#include "parity/refrt/cpu_isa.h"

#include <array>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>

#include "parity/error.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif
#if defined(__x86_64__) && defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace parity::refrt {
namespace {

constexpr std::array<const char*, 6> kNames = {"scalar", "avx2", "avx512", "avx512_vnni", "avx512_bf16", "amx"};

constexpr std::array<const char*, kCpuFeatureCount> kFeatureNames = {
    "popcnt",      "avx",         "avx2",     "fma",      "f16c",     "bmi1",     "bmi2",
    "lzcnt",       "movbe",       "avx_vnni", "avx512f",  "avx512bw", "avx512vl", "avx512dq",
    "avx512_vnni", "avx512_bf16", "amx_tile", "amx_int8", "amx_bf16"};

#if defined(__x86_64__)
struct Regs {
  unsigned a = 0, b = 0, c = 0, d = 0;
};

Regs cpuid(unsigned leaf, unsigned subleaf) {
  Regs r;
  if (!__get_cpuid_count(leaf, subleaf, &r.a, &r.b, &r.c, &r.d)) return Regs{};
  return r;
}

// The register state the OS saves on a context switch (XCR0); XGETBV exists only where CPUID says OSXSAVE.
uint64_t xcr0() {
  unsigned lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

// Linux hands out the AMX tile state only on request (arch_prctl ARCH_REQ_XCOMP_PERM, XTILEDATA);
// without it the first tile instruction faults, so a CPU with AMX but no grant stays below amx.
bool request_amx() {
#if defined(__linux__)
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
}
#endif

bool bit(unsigned reg, int n) { return ((reg >> n) & 1u) != 0; }

}  // namespace

const std::vector<IsaLevel>& isa_levels() {
  static const std::vector<IsaLevel> levels = {IsaLevel::kScalar,     IsaLevel::kAvx2,       IsaLevel::kAvx512,
                                               IsaLevel::kAvx512Vnni, IsaLevel::kAvx512Bf16, IsaLevel::kAmx};
  return levels;
}

const char* isa_name(IsaLevel level) { return kNames.at(static_cast<size_t>(level)); }

std::optional<IsaLevel> parse_isa_level(std::string_view name) {
  for (IsaLevel level : isa_levels())
    if (name == isa_name(level)) return level;
  return std::nullopt;
}

const char* feature_name(CpuFeature f) { return kFeatureNames.at(static_cast<size_t>(f)); }

std::optional<CpuFeature> parse_feature(std::string_view name) {
  for (size_t i = 0; i < kCpuFeatureCount; ++i)
    if (name == kFeatureNames[i]) return static_cast<CpuFeature>(i);
  return std::nullopt;
}

CpuFeatures read_cpu_features() {
  CpuFeatures f;
#if defined(__x86_64__)
  using F = CpuFeature;
  const Regs l1 = cpuid(1, 0), l7 = cpuid(7, 0), l7s1 = l7.a >= 1 ? cpuid(7, 1) : Regs{}, ext = cpuid(0x80000001u, 0);
  const unsigned base_family = (l1.a >> 8) & 0xf, ext_family = (l1.a >> 20) & 0xff;
  const unsigned base_model = (l1.a >> 4) & 0xf, ext_model = (l1.a >> 16) & 0xf;
  f.family = static_cast<int>(base_family == 0xf ? base_family + ext_family : base_family);
  f.model = static_cast<int>(base_family == 0x6 || base_family == 0xf ? (ext_model << 4) + base_model : base_model);
  // The OS's saved state: XMM + YMM (bits 1, 2) for VEX code; opmask + both ZMM halves (5, 6, 7) for
  // EVEX; tile config + data (17, 18) for AMX.
  const uint64_t state = bit(l1.c, 27) ? xcr0() : 0;
  const bool ymm = (state & 0x6) == 0x6, zmm = ymm && (state & 0xe0) == 0xe0;
  const bool tiles = (state & 0x60000) == 0x60000;
  f.set(F::kPopcnt, bit(l1.c, 23));
  f.set(F::kMovbe, bit(l1.c, 22));
  f.set(F::kLzcnt, bit(ext.c, 5));
  f.set(F::kBmi1, bit(l7.b, 3));
  f.set(F::kBmi2, bit(l7.b, 8));
  f.set(F::kAvx, ymm && bit(l1.c, 28));
  f.set(F::kFma, ymm && bit(l1.c, 12));
  f.set(F::kF16c, ymm && bit(l1.c, 29));
  f.set(F::kAvx2, ymm && bit(l7.b, 5));
  f.set(F::kAvxVnni, ymm && bit(l7s1.a, 4));
  f.set(F::kAvx512f, zmm && bit(l7.b, 16));
  f.set(F::kAvx512dq, zmm && bit(l7.b, 17));
  f.set(F::kAvx512bw, zmm && bit(l7.b, 30));
  f.set(F::kAvx512vl, zmm && bit(l7.b, 31));
  f.set(F::kAvx512Vnni, zmm && bit(l7.c, 11));
  f.set(F::kAvx512Bf16, zmm && bit(l7s1.a, 5));
  f.set(F::kAmxBf16, tiles && bit(l7.d, 22));
  f.set(F::kAmxTile, tiles && bit(l7.d, 24));
  f.set(F::kAmxInt8, tiles && bit(l7.d, 25));
#endif
  return f;
}

CpuFeatures mask_features(CpuFeatures detected, const char* mask_value, std::string* error) {
  if (mask_value == nullptr) return detected;
  std::string_view rest = mask_value;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view name = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (name.empty()) continue;
    if (const auto f = parse_feature(name)) {
      detected.set(*f, false);
    } else if (error) {
      std::string names;
      for (const char* n : kFeatureNames) names += std::string(names.empty() ? "" : ", ") + n;
      *error = "PARITY_REFRT_MASK_FEATURES names '" + std::string(name) +
               "', which is not a feature (one of: " + names + ")";
    }
  }
  return detected;
}

namespace {

struct Detected {
  CpuFeatures features;
  std::string masked, error;
};

const Detected& detected() {
  static const Detected d = [] {
    Detected out;
    const char* mask = std::getenv("PARITY_REFRT_MASK_FEATURES");
    out.features = mask_features(read_cpu_features(), mask, &out.error);
    if (mask) out.masked = mask;
    return out;
  }();
  return d;
}

}  // namespace

const CpuFeatures& cpu_features() { return detected().features; }

bool cpu_has(CpuFeature f) { return cpu_features().has(f); }

IsaLevel isa_of(const CpuFeatures& f, bool amx_granted) {
  using F = CpuFeature;
  auto all = [&](std::initializer_list<F> need) {
    for (F x : need)
      if (!f.has(x)) return false;
    return true;
  };
  if (!all({F::kAvx, F::kAvx2, F::kFma, F::kPopcnt})) return IsaLevel::kScalar;
  if (!all({F::kAvx512f, F::kAvx512bw, F::kAvx512vl, F::kAvx512dq})) return IsaLevel::kAvx2;
  if (!f.has(F::kAvx512Vnni)) return IsaLevel::kAvx512;
  if (!f.has(F::kAvx512Bf16)) return IsaLevel::kAvx512Vnni;
  if (!(all({F::kAmxTile, F::kAmxInt8, F::kAmxBf16}) && amx_granted)) return IsaLevel::kAvx512Bf16;
  return IsaLevel::kAmx;
}

IsaLevel detect_cpu_isa() {
  const CpuFeatures& f = cpu_features();
  bool granted = false;
#if defined(__x86_64__)
  // Asked only where the tiles would be used (a masked AMX leaves the process without the grant).
  granted = f.has(CpuFeature::kAmxTile) && f.has(CpuFeature::kAmxInt8) && f.has(CpuFeature::kAmxBf16) && request_amx();
#endif
  return isa_of(f, granted);
}

IsaInfo decide_isa(IsaLevel cpu, const char* cap_value) {
  IsaInfo info;
  info.cpu = info.level = cpu;
  if (cap_value == nullptr || *cap_value == '\0') return info;
  const std::string value = cap_value;
  if (value == "native") return info;
  const auto cap = parse_isa_level(value);
  if (!cap) {
    std::string names;
    for (IsaLevel level : isa_levels()) names += std::string(names.empty() ? "" : ", ") + isa_name(level);
    info.error = "PARITY_REFRT_ISA='" + value + "' is not an ISA level (one of: " + names + ", native)";
    return info;
  }
  info.cap = *cap;
  if (*cap > cpu) {
    info.note = "PARITY_REFRT_ISA=" + value + " is above this CPU's level (" + isa_name(cpu) + "): running at " +
                isa_name(cpu) + "; the " + value + " kernels are not tested on this machine";
  } else {
    info.level = *cap;
  }
  return info;
}

const IsaInfo& isa_info() {
  static const IsaInfo info = [] {
    IsaInfo i = decide_isa(detect_cpu_isa(), std::getenv("PARITY_REFRT_ISA"));
    i.masked = detected().masked;
    if (i.error.empty()) i.error = detected().error;
    return i;
  }();
  return info;
}

IsaLevel isa_level() {
  const IsaInfo& info = isa_info();
  if (!info.error.empty()) throw Error({"refrt"}, info.error, ErrorKind::kUsage);
  return info.level;
}

bool isa_allows(IsaLevel level) {
  const IsaInfo& info = isa_info();
  return info.error.empty() ? info.level >= level : level == IsaLevel::kScalar;
}

std::string isa_summary() {
  const IsaInfo& info = isa_info();
  if (!info.error.empty()) return std::string("invalid: ") + info.error;
  std::string s = isa_name(info.level);
  if (info.cap) {
    s += std::string(" (PARITY_REFRT_ISA=") + isa_name(*info.cap) + "; CPU: " + isa_name(info.cpu) + ")";
  } else {
    s += std::string(" (CPU: ") + isa_name(info.cpu) + ")";
  }
  if (!info.masked.empty()) s += " (PARITY_REFRT_MASK_FEATURES=" + info.masked + ")";
  return s;
}

}  // namespace parity::refrt
