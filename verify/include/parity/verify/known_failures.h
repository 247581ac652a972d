// scenarios/known_failures.json: cases known to fail, with the reason, for each side of the comparison.
// side "ours" (the default): Parity's own failures; a listed failure becomes "xfail" (not a failure of the
// run), a listed case that passes becomes "xpass" (the list can shrink). side "official": failures of the
// official exporter (torch.onnx.export(dynamo=True)) in the peers columns; the reason is attached to the
// case's peers.official entry, never changes Parity's status. side "capture": torch.export itself cannot
// capture the case; the reason is attached to the capture_failed entry.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace parity::verify {

struct KnownFailure {
  std::string case_name;
  std::string mode;  // strict | nonstrict | decomposed | *
  std::string reason;
  std::string side = "ours";  // ours | official | capture
};

// [{"case": "...", "mode": "strict|nonstrict|decomposed|*", "reason": "...", "side": "ours|official|capture"}].
// A missing file is an empty list; a malformed one is a parity::Error naming the file and entry.
std::vector<KnownFailure> load_known_failures(const std::string& path);

// Rewrites the status of cases listed for our side: a failure (fail, error, crashed, timeout) becomes
// "xfail", a pass "xpass"; the original status is kept in "result" and the list entry in
// "expected_failure". Entries of the other sides annotate peers.official.known_failure / the capture
// failure's "expected_failure".
void apply_known_failures(nlohmann::json& cases, const std::vector<KnownFailure>& known);

// Regressions of `cases` against an older report: a case that passed (pass or xpass) and no longer
// does, or whose max_abs_error grew more than 10x (against max(old, 1e-9): a zero error has no ratio).
// Each entry: {"case", "mode", "kind": "status"|"error_growth", "before", "after", "what"}.
nlohmann::json find_regressions(const nlohmann::json& baseline_report, const nlohmann::json& cases);

}  // namespace parity::verify
