// case.json of a case folder (the contract between capture and verify, documented in the README):
// every field checked for its type, defaults filled in, unknown fields ignored.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace parity::verify {

struct CaseDynamicDim {
  int64_t input = 0;  // index among the flattened user inputs
  int64_t axis = 0;
  std::string name;        // the user's Dim name ("batch")
  std::string input_name;  // optional: the program's placeholder name
  std::string symbol;      // optional: the program's symbol ("s27")
};

struct CaseInfo {
  std::string path;  // .../case.json
  int schema_version = 1;
  std::string name;                   // default: the folder's name (its parent's when the folder is a mode)
  std::string mode;                   // default: the folder's name when it is a mode, else "custom"
  std::string status = "captured";    // captured | capture_failed
  std::string error;                  // why the capture failed ("" when it did not)
  std::optional<int64_t> input_sets;  // when given: the number of test_data_set_<k> folders
  std::vector<std::string> input_names, output_names;
  std::vector<CaseDynamicDim> dynamic_dims;
  std::vector<std::string> torch_libraries, export_plugins;  // absolute paths (custom ops)
  // Capture recorded eager's final state (test_data_set_<k>/state_<j>.pb: each tensor the call wrote, named
  // by its mutation output; a tensor not recorded kept its initial value). Without it, the mutation outputs
  // have only libtorch as their oracle.
  bool eager_state = false;
};

// Reads <case_dir>/case.json. A missing file, broken JSON or a field of the wrong type or value is a
// parity::Error (exit code 3) naming the file and the field; a captured case must also hold model.pt2
// and at least one test_data_set_<k> folder.
CaseInfo load_case_info(const std::string& case_dir);

}  // namespace parity::verify
