#include "parity/refrt/cpu_isa.h"

#include <array>
#include <cstdlib>

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

#if defined(__x86_64__)
// AMX tile, int8 and bf16 from CPUID leaf 7 (EDX bits 24, 25, 22): clang 14's __builtin_cpu_supports
// does not know the amx-* names, so the bits are read directly.
bool cpu_has_amx() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  constexpr unsigned kAmxBf16 = 1u << 22, kAmxTile = 1u << 24, kAmxInt8 = 1u << 25;
  return (d & kAmxBf16) && (d & kAmxTile) && (d & kAmxInt8);
}

// Linux hands out the AMX tile state only on request (arch_prctl ARCH_REQ_XCOMP_PERM, XTILEDATA);
// without it the first tile instruction faults, so a CPU with AMX but no grant stays below amx.
bool amx_granted() {
#if defined(__linux__)
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
}
#endif

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

// __builtin_cpu_supports checks the OS's saved-state bits (XCR0) too, so "avx512f" means usable.
IsaLevel detect_cpu_isa() {
  IsaLevel level = IsaLevel::kScalar;
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (!(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))) return level;
  level = IsaLevel::kAvx2;
  if (!(__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512dq")))
    return level;
  level = IsaLevel::kAvx512;
  if (!__builtin_cpu_supports("avx512vnni")) return level;
  level = IsaLevel::kAvx512Vnni;
  if (!__builtin_cpu_supports("avx512bf16")) return level;
  level = IsaLevel::kAvx512Bf16;
  if (!(cpu_has_amx() && amx_granted())) return level;
  level = IsaLevel::kAmx;
#endif
  return level;
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
  static const IsaInfo info = decide_isa(detect_cpu_isa(), std::getenv("PARITY_REFRT_ISA"));
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
  return s;
}

}  // namespace parity::refrt
