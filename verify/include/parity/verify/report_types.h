// report.json (schema 2) as types: what `parity verify` writes for one case and what every reader
// (markdown, HTML, merge, known failures, the Python package) finds there. The JSON keys are the field
// names; README "report.json" documents them.
//
// Two kinds of optional field, because schema 2 has both: Absent<T> is left out of the JSON when
// empty (e.g. "peers" without --peers), Nullable<T> is written as null (e.g. "error" of a passing case).
// Reading a report and writing it again gives the same JSON (tests/verify/report_test.cc).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "parity/verify/compare.h"

namespace parity::verify {

template <typename T>
struct Absent : std::optional<T> {
  using std::optional<T>::optional;
};
template <typename T>
struct Nullable : std::optional<T> {
  using std::optional<T>::optional;
};

}  // namespace parity::verify

namespace nlohmann {
// Absent<T>: an empty one becomes a discarded value, which the owning struct's to_json removes.
template <typename T>
struct adl_serializer<parity::verify::Absent<T>> {
  static void to_json(json& j, const parity::verify::Absent<T>& v) {
    if (v)
      j = *v;
    else
      j = json(json::value_t::discarded);
  }
  static void from_json(const json& j, parity::verify::Absent<T>& v) { v = j.get<T>(); }  // key present: a value
};
template <typename T>
struct adl_serializer<parity::verify::Nullable<T>> {
  static void to_json(json& j, const parity::verify::Nullable<T>& v) {
    if (v)
      j = *v;
    else
      j = nullptr;
  }
  static void from_json(const json& j, parity::verify::Nullable<T>& v) {
    if (j.is_null())
      v.reset();
    else
      v = j.get<T>();
  }
};
}  // namespace nlohmann

namespace parity::verify {

// The earliest FX node in topological order whose value exceeds tolerance (--intermediates).
struct FirstDivergence {
  std::string fx_node, value, onnx_node, onnx_op, op, source;
  nlohmann::json max_abs_error;  // number, or "Infinity" when shapes differ or a NaN appears
  int64_t mismatches = 0, numel = 0;
  Absent<std::string> problem;
  Absent<std::string> input_set;
  Absent<nlohmann::json> detail;  // NaN / Inf counts and worst elements of the diverging value
};

// One output of one input set, compared three ways (a mutation output only refrt vs libtorch).
struct OutputEntry {
  size_t index = 0;
  Absent<std::string> name;  // the ONNX output name (fresh sets have none)
  Absent<std::string> kind;  // "mutation" for mutated state after the user's outputs
  std::string dtype;
  std::vector<int64_t> shape;
  Absent<Comparison> refrt_vs_eager, libtorch_vs_eager;
  Comparison refrt_vs_libtorch;
};

struct InputSetEntry {
  std::string name;
  std::vector<OutputEntry> outputs;
  Absent<nlohmann::json> intermediates;              // {compared, unmatched, values} with --intermediates
  Absent<std::vector<std::string>> reference_notes;  // ReferenceResult::notes of this set's reference run
};

// An input set with fresh dynamic dims (--fresh K): refrt vs libtorch only.
struct FreshSetEntry {
  std::string name;
  nlohmann::json dims = nlohmann::json::object();  // Dim name -> value
  std::vector<OutputEntry> outputs;
};

struct ProfileOp {
  std::string op_type;
  int64_t count = 0;
  double ms = 0;
};
// Per-op-type totals of one profiled refrt run (the first input set), slowest first.
struct ProfileSummary {
  std::string input_set;
  double total_ms = 0;
  size_t nodes = 0;
  std::vector<ProfileOp> ops;
};

// A peer engine's run of a model on every input set, against eager.
struct PeerRun {
  std::string status;            // pass | fail | error
  nlohmann::json max_abs_error;  // number, "Infinity" or null
  Nullable<int64_t> mismatches;  // the fixed rule's
  Nullable<std::string> error;
  Absent<Fp64Rule> fp64_rule;    // where the fp64 rule was tried: its verdict nearest to failing
  Absent<int64_t> fp64_outputs;  // outputs that passed by the fp64 rule alone
};
struct OursPeers {
  std::string refrt, ort;             // pass | fail | error | skipped
  Absent<nlohmann::json> ort_detail;  // scenarios.peers' own record
  Absent<int64_t> nodes;              // our ONNX file's node count, subgraph bodies included
};
struct OfficialPeers {  // JSON key "export" (a C++ keyword, hence export_status)
  std::string export_status = "error", refrt = "skipped", ort = "skipped";
  Absent<nlohmann::json> export_error, ort_detail, onnx;
  Absent<PeerRun> refrt_detail;
  Absent<std::string> known_failure;  // the reason scenarios/known_failures.json gives (side "official")
  Absent<int64_t> nodes;              // the official ONNX file's node count, when it exported one
};
struct Peers {
  OursPeers ours;
  OfficialPeers official;
  Nullable<std::string> error;
};

struct ExpectedFailure {
  std::string mode, reason;
};

// One (case, mode): report.json "cases"[i]. JSON keys "export", "run", "verify" (stage results).
struct CaseEntry {
  std::string case_name, mode;         // keys "case", "mode"
  std::string status = "pass";         // pass fail error capture_failed crashed timeout xfail xpass
  Nullable<std::string> stage, error;  // where and why it did not pass
  std::string export_status = "skipped", run = "skipped", verify = "skipped";  // ok | error | pass | fail | skipped
  nlohmann::json max_abs_error, max_rel_error;  // number, "Infinity"/"NaN", or null when not compared
  // The next three are written by `parity verify`; entries the matrix makes itself (a capture that
  // failed, a child that crashed) have none.
  Absent<Nullable<std::string>> onnx;  // the model verified, null when the export failed
  Absent<bool> onnx_given;
  Absent<double> seconds;
  Nullable<FirstDivergence> first_divergence;
  std::vector<InputSetEntry> input_sets;
  Absent<ProfileSummary> profile;
  Absent<std::vector<FreshSetEntry>> fresh_sets;
  Absent<Peers> peers;
  Absent<double> wall_seconds;  // the matrix: the child process's wall time
  Absent<std::string> result;   // known failures: the status before xfail/xpass
  Absent<ExpectedFailure> expected_failure;
  Absent<Fp64Rule> fp64_rule;  // refrt vs eager where the fp64 rule was tried: the verdict nearest to failing
};

// An entry that did not get as far as comparing: status, the stage it stopped at and why.
CaseEntry failed_entry(const std::string& case_name, const std::string& mode, const std::string& status,
                       const std::string& stage, const std::string& error);
// Marks `entry` as not passed (status, stage, error).
void fail(CaseEntry& entry, const std::string& status, const std::string& stage, const std::string& error);

// Serialise through CaseEntry (its to_json drops the empty Absent fields of everything inside).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(FirstDivergence, fx_node, value, onnx_node, onnx_op, op, source,
                                                max_abs_error, mismatches, numel, problem, input_set, detail)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(OutputEntry, index, name, kind, dtype, shape, refrt_vs_eager,
                                                libtorch_vs_eager, refrt_vs_libtorch)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(InputSetEntry, name, outputs, intermediates, reference_notes)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(FreshSetEntry, name, dims, outputs)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ProfileOp, op_type, count, ms)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ProfileSummary, input_set, total_ms, nodes, ops)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(PeerRun, status, max_abs_error, mismatches, error, fp64_rule,
                                                fp64_outputs)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(OursPeers, refrt, ort, ort_detail, nodes)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ExpectedFailure, mode, reason)
// By hand: their JSON keys "case" and "export" are C++ keywords.
void to_json(nlohmann::json& j, const OfficialPeers& v);
void from_json(const nlohmann::json& j, OfficialPeers& v);
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Peers, ours, official, error)
void to_json(nlohmann::json& j, const CaseEntry& v);
void from_json(const nlohmann::json& j, CaseEntry& v);

// Removes the empty Absent fields (discarded values) from `j`, recursively.
void drop_absent(nlohmann::json& j);

}  // namespace parity::verify
