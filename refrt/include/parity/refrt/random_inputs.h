// Inputs generated from a model's declared types, for `parity run/profile --random`.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "parity/refrt/session.h"

namespace parity::refrt {

// "batch=4,seq=16" → {batch: 4, seq: 16}; usage errors name the bad item.
std::map<std::string, int64_t> parse_dim_overrides(const std::vector<std::string>& items);

// One tensor per declared input: symbolic dims take `dims[name]` or `default_dim`; unknown dims take
// `default_dim`. Floats are uniform in [-1, 1), integers in [0, 4), bools fair coins; deterministic in
// `seed`. Throws (kInput) when an input has no declared dtype, (kUsage) when a --dim name is unused.
std::vector<Tensor> random_inputs(const std::vector<ValueInfo>& inputs, const std::map<std::string, int64_t>& dims,
                                  uint64_t seed = 0, int64_t default_dim = 2);

}  // namespace parity::refrt
