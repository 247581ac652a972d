#include "parity/verify/report_types.h"

namespace parity::verify {

using json = nlohmann::json;

CaseEntry failed_entry(const std::string& case_name, const std::string& mode, const std::string& status,
                       const std::string& stage, const std::string& error) {
  CaseEntry e;
  e.case_name = case_name, e.mode = mode;
  fail(e, status, stage, error);
  return e;
}

void fail(CaseEntry& entry, const std::string& status, const std::string& stage, const std::string& error) {
  entry.status = status, entry.stage = stage, entry.error = error;
}

void drop_absent(json& j) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end();) {
      if (it->is_discarded()) {
        it = j.erase(it);
      } else {
        drop_absent(*it);
        ++it;
      }
    }
  } else if (j.is_array()) {
    for (auto& v : j) drop_absent(v);
  }
}

void to_json(json& j, const OfficialPeers& v) {
  j = {{"export", v.export_status},
       {"refrt", v.refrt},
       {"ort", v.ort},
       {"export_error", v.export_error},
       {"ort_detail", v.ort_detail},
       {"refrt_detail", v.refrt_detail},
       {"onnx", v.onnx},
       {"known_failure", v.known_failure},
       {"nodes", v.nodes}};
}

void from_json(const json& j, OfficialPeers& v) {
  const OfficialPeers d;
  v.export_status = j.value("export", d.export_status);
  v.refrt = j.value("refrt", d.refrt);
  v.ort = j.value("ort", d.ort);
  v.export_error = j.value("export_error", d.export_error);
  v.ort_detail = j.value("ort_detail", d.ort_detail);
  v.refrt_detail = j.value("refrt_detail", d.refrt_detail);
  v.onnx = j.value("onnx", d.onnx);
  v.known_failure = j.value("known_failure", d.known_failure);
  v.nodes = j.value("nodes", d.nodes);
}

void to_json(json& j, const CaseEntry& v) {
  j = {{"case", v.case_name},
       {"mode", v.mode},
       {"status", v.status},
       {"stage", v.stage},
       {"error", v.error},
       {"export", v.export_status},
       {"run", v.run},
       {"verify", v.verify},
       {"max_abs_error", v.max_abs_error},
       {"max_rel_error", v.max_rel_error},
       {"onnx", v.onnx},
       {"onnx_given", v.onnx_given},
       {"first_divergence", v.first_divergence},
       {"input_sets", v.input_sets},
       {"seconds", v.seconds},
       {"profile", v.profile},
       {"fresh_sets", v.fresh_sets},
       {"peers", v.peers},
       {"wall_seconds", v.wall_seconds},
       {"result", v.result},
       {"expected_failure", v.expected_failure},
       {"fp64_rule", v.fp64_rule}};
  drop_absent(j);
}

void from_json(const json& j, CaseEntry& v) {
  const CaseEntry d;
  v.case_name = j.at("case").get<std::string>();
  v.mode = j.at("mode").get<std::string>();
  v.status = j.value("status", d.status);
  v.stage = j.value("stage", d.stage);
  v.error = j.value("error", d.error);
  v.export_status = j.value("export", d.export_status);
  v.run = j.value("run", d.run);
  v.verify = j.value("verify", d.verify);
  v.max_abs_error = j.value("max_abs_error", d.max_abs_error);
  v.max_rel_error = j.value("max_rel_error", d.max_rel_error);
  v.onnx = j.value("onnx", d.onnx);
  v.onnx_given = j.value("onnx_given", d.onnx_given);
  v.first_divergence = j.value("first_divergence", d.first_divergence);
  v.input_sets = j.value("input_sets", d.input_sets);
  v.seconds = j.value("seconds", d.seconds);
  v.profile = j.value("profile", d.profile);
  v.fresh_sets = j.value("fresh_sets", d.fresh_sets);
  v.peers = j.value("peers", d.peers);
  v.wall_seconds = j.value("wall_seconds", d.wall_seconds);
  v.result = j.value("result", d.result);
  v.expected_failure = j.value("expected_failure", d.expected_failure);
  v.fp64_rule = j.value("fp64_rule", d.fp64_rule);
}

}  // namespace parity::verify
