// Internal: the pieces of report.json that report.md and report.html both show, read the same way.
#pragma once
#include <cstdint>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace parity::verify {

// Every case status, in the order the summaries list them.
inline const char* const kStatuses[] = {"pass",    "fail",    "error", "capture_failed",
                                        "crashed", "timeout", "xfail", "xpass"};
// The peers columns: (side, engine).
inline const char* const kPeerColumns[][2] = {
    {"ours", "refrt"}, {"ours", "ort"}, {"official", "refrt"}, {"official", "ort"}};

// j[key] when it is a string, else "".
inline std::string text_of(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}
// A number as 1.234e-05; a string ("Infinity") as is; anything else "".
std::string scientific(const nlohmann::json& v);
// A case's peers cell ("pass", "fail", ...), "" when it has no peers.
std::string peer_cell(const nlohmann::json& c, const char* side, const char* engine);
// A case's ONNX node count on one side ("ours", "official"), "" when its peers record none.
std::string nodes_cell(const nlohmann::json& c, const char* side);
// Whether any case of the report carries peers.
bool any_peers(const nlohmann::json& report);

// The fp64 rule (report_fp64.cc): its statement for the reports; how many outputs of a peers column
// (ours/refrt: the case's own comparisons) passed by it alone; whether a passing case needed it (refrt or
// libtorch against eager); summary["fp64_rule"] = {cases, <side>_<engine>: runs that passed with it}, set
// only when some count is not 0; report.md's section listing every pair where it was tried.
extern const char* const kFp64RuleStatement;
int64_t fp64_passes(const nlohmann::json& c, const char* side, const char* engine);
bool case_passed_by_fp64(const nlohmann::json& c);
// A passing case one of whose outputs passed by the requantized rule (compare.h's RequantRule).
bool case_passed_by_requant(const nlohmann::json& c);
void count_fp64(nlohmann::json& summary, const nlohmann::json& cases);
void markdown_fp64(std::ostringstream& md, const nlohmann::json& report);
// "## The requantized rule": the rule, then every case where it was tried: the activations refrt rounded the
// other way (node and element count), the farthest of them from a tie, the verdict.
void markdown_requant(std::ostringstream& md, const nlohmann::json& report);
// "## Tolerances": the fixed rule's numbers for each floating dtype among the compared outputs, also in
// units of the dtype's epsilon (how many ulps at 1.0 they allow).
void markdown_tolerances(std::ostringstream& md, const nlohmann::json& report);

}  // namespace parity::verify
