// The ONNX backend node tests on refrt: `parity conformance`.
//
// The tests are generated into the build tree from the installed onnx package's own generators
// (refrt/conformance/gen_node_tests.py). A test is skipped when its model uses an op refrt does not
// implement at all, inputs/outputs that are maps, sparse or string tensors, or an opset newer than
// refrt's; otherwise it passes or fails (sequence and optional inputs/outputs are read from their
// SequenceProto / OptionalProto files and compared element by element) (the model is refused, a run error, or a value
// mismatch at the backend tests' own tolerance: rtol 1e-3, atol 1e-7). Failures named in the exclusion list
// (refrt/conformance/exclusions.txt, every entry with its reason) do not fail the command.
#pragma once
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace parity::refrt {

struct ConformanceResult {
  enum class Status { kPass, kFail, kSkip };
  std::string name;
  Status status = Status::kSkip;
  std::string detail;           // why it failed or was skipped
  double max_abs_error = 0;     // for value mismatches
  std::string excluded_reason;  // non-empty when the exclusion list names this test
  std::set<std::string> ops;    // "domain::OpType" of every node, subgraphs included ("" domain = ai.onnx)
};

struct ConformanceOptions {
  std::string data_dir;         // folder of <test_name>/ folders
  std::string filter;           // ECMAScript regex searched in the test name ("" = all)
  std::string exclusions_file;  // "" = none
};

// Exclusion patterns: test name, or a prefix ending in '*', mapped to the reason.
std::map<std::string, std::string> read_exclusions(const std::string& path);

// Runs every selected test in name order, calling `on_result` after each. Throws parity::Error
// when the data folder or the exclusion list is unusable; a broken test is a failure, not a throw.
std::vector<ConformanceResult> run_conformance(const ConformanceOptions& options,
                                               const std::function<void(const ConformanceResult&)>& on_result = {});

}  // namespace parity::refrt
