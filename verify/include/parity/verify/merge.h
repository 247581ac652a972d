// Sharded matrix runs (`parity matrix --shard K/N`) joined into one report (`parity report --merge`).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace parity::verify {

struct Shard {
  int index = 0, count = 0;  // 1-based K of N; count 0 = not sharded
};

// "K/N" with 1 <= K <= N; a usage parity::Error otherwise.
Shard parse_shard(const std::string& text);

// The split itself happens in capture (scenarios/suite.py: the i-th (case, mode) pair of the run's order
// goes to shard i % N + 1), so the matrix verifies only what its shard captured.

// Joins the reports of the shards of one matrix run: their cases in the order one run writes them (case
// name, then mode in the run's mode order), summary and peer counts recomputed, regressions joined.
// Throws parity::Error naming the file for a report that is not one, a (case, mode) present twice,
// shards of different counts or a missing shard.
nlohmann::json merge_reports(const std::vector<std::string>& paths);

}  // namespace parity::verify
