// Internal: the 256-entry tables of 8-bit elementwise islands (optimize/fuse_qdq_activation.h), as the fused
// QGemm / QConv apply them to their requantized outputs and the QLookup node to its input.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "../src/kernel.h"

namespace parity::refrt::qlookup {

struct Table {
  std::array<uint8_t, 256> bytes{};  // y's byte for each byte pattern of x
  DType out = DType::kUInt8;
  std::string ops;  // the island's ops, for the profile label ("Gelu")
  bool defined = false;
};

// The node's "lut" / "lut_ops" attributes (a 256-element int8 / uint8 tensor), or an undefined table.
Table parse(const NodeDef& node);

// p[0, n) = table[p[0, n)] in place, and y[0, n) = table[x[0, n)].
void apply(const Table& t, uint8_t* p, int64_t n);
void apply(const Table& t, const uint8_t* x, uint8_t* y, int64_t n);

// `base` (empty: "refrt") with the table's epilogue named: "onednn brg:avx512_core_vnni + lookup(Gelu)".
std::string_view label(const Table& t, std::string_view base);

}  // namespace parity::refrt::qlookup
