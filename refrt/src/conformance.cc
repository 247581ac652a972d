#include "parity/refrt/conformance.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "kernel.h"
#include "model_def.h"
#include "onnx/onnx-ml.pb.h"
#include "parity/compare.h"
#include "parity/error.h"
#include "parity/fs.h"
#include "parity/refrt/session.h"
#include "parity/refrt/value.h"
#include "parity/tensor_io.h"

namespace fs = std::filesystem;

namespace parity::refrt {
namespace {

using Status = ConformanceResult::Status;

// "" when `got` matches `want` at the backend tests' tolerance (numpy.testing.assert_allclose with
// rtol 1e-3, atol 1e-7: NaN equals NaN, infinities must match; integers and bools exactly), else what
// differs. The rule itself is common's (parity/compare.h), the one verify uses.
std::string mismatch(const Tensor& got, const Tensor& want, double& max_abs) {
  const TensorComparison c = compare_elementwise(want, got, Tolerance{1e-7, 1e-3});
  if (!c.problem.empty()) return c.problem;
  if (std::isfinite(c.max_abs_error)) max_abs = std::max(max_abs, c.max_abs_error);
  if (c.passed) return "";
  std::ostringstream s;
  s << c.mismatches << " of " << want.numel() << " elements differ (first at " << c.first_mismatch << ": got "
    << element_text(got, c.first_mismatch) << ", expected " << element_text(want, c.first_mismatch) << ")";
  return s.str();
}

// A tensor, or a sequence / optional of tensors (or an optional sequence of tensors): what refrt runs.
// "" when `got` (a sequence/optional output, or a tensor where the model returns one in its place)
// holds the tensors of `want`, element by element at the tolerance of mismatch().
std::string value_mismatch(const Value* got, const Tensor& got_tensor, const Value& want, double& max_abs) {
  if (!got)
    return "got " + (got_tensor.defined() ? "a tensor" : std::string("nothing")) + ", expected " + want.describe();
  if (got->kind != want.kind) return "got " + got->describe() + ", expected " + want.describe();
  if (want.is_optional() && got->has_element != want.has_element)
    return "got " + got->describe() + ", expected " + want.describe();
  if (got->tensors.size() != want.tensors.size()) return "got " + got->describe() + ", expected " + want.describe();
  for (size_t k = 0; k < want.tensors.size(); ++k)
    if (std::string diff = mismatch(got->tensors[k], want.tensors[k], max_abs); !diff.empty())
      return "element #" + std::to_string(k) + ": " + diff;
  return "";
}

bool is_tensor_based_type(const onnx::TypeProto& t) {
  if (t.has_tensor_type()) return true;
  if (t.has_sequence_type()) return t.sequence_type().elem_type().has_tensor_type();
  if (t.has_optional_type()) {
    const auto& elem = t.optional_type().elem_type();
    return elem.has_tensor_type() || (elem.has_sequence_type() && elem.sequence_type().elem_type().has_tensor_type());
  }
  return false;
}
bool is_string_tensor(const onnx::TypeProto& t) {
  const onnx::TypeProto* inner = &t;
  while (inner->has_sequence_type() || inner->has_optional_type())
    inner = inner->has_sequence_type() ? &inner->sequence_type().elem_type() : &inner->optional_type().elem_type();
  return inner->has_tensor_type() && inner->tensor_type().elem_type() == onnx::TensorProto::STRING;
}

void collect_ops(const onnx::GraphProto& g, std::set<std::string>& ops) {
  for (const auto& n : g.node()) {
    ops.insert((n.domain() == "ai.onnx" ? "" : n.domain()) + "::" + n.op_type());
    for (const auto& a : n.attribute()) {
      if (a.has_g()) collect_ops(a.g(), ops);
      for (const auto& sub : a.graphs()) collect_ops(sub, ops);
    }
  }
}

// Why the test is out of refrt's scope, or "" when it is in scope.
std::string skip_reason(const onnx::ModelProto& model, const std::set<std::string>& implemented) {
  for (const auto& op : model.opset_import())
    if ((op.domain().empty() || op.domain() == "ai.onnx") && op.version() > kMaxOpset)
      return "opset " + std::to_string(op.version()) + " is newer than refrt's " + std::to_string(kMaxOpset);
  for (const auto& v : model.graph().input())
    if (!is_tensor_based_type(v.type())) return "map or sparse input '" + v.name() + "'";
  for (const auto& v : model.graph().output())
    if (!is_tensor_based_type(v.type())) return "map or sparse output '" + v.name() + "'";
  for (const auto* values : {&model.graph().input(), &model.graph().output()})
    for (const auto& v : *values)
      if (is_string_tensor(v.type())) return "string tensor '" + v.name() + "' (refrt computes numbers only)";
  std::set<std::string> missing;
  std::function<void(const onnx::GraphProto&)> visit = [&](const onnx::GraphProto& g) {
    for (const auto& n : g.node()) {
      const std::string domain = n.domain() == "ai.onnx" ? "" : n.domain();
      if (!implemented.count(domain + "::" + n.op_type()))
        missing.insert((domain.empty() ? "" : domain + ".") + n.op_type());
      for (const auto& a : n.attribute()) {
        if (a.has_g()) visit(a.g());
        for (const auto& sub : a.graphs()) visit(sub);
      }
    }
  };
  visit(model.graph());
  if (missing.empty()) return "";
  std::string s = "op not implemented:";
  for (const auto& m : missing) s += " " + m;
  return s;
}

ConformanceResult run_one(const fs::path& dir, const std::set<std::string>& implemented) {
  ConformanceResult r;
  r.name = dir.filename().string();
  const std::string model_path = (dir / "model.onnx").string();
  try {
    const std::string bytes = read_file(model_path);
    onnx::ModelProto model;
    if (!model.ParseFromString(bytes)) throw Error({"conformance", model_path}, "not a valid ModelProto");
    collect_ops(model.graph(), r.ops);
    if (std::string why = skip_reason(model, implemented); !why.empty()) {
      r.detail = why;
      return r;
    }
    auto session = Session::load_bytes(bytes, model_path);
    const auto sets = list_test_data_sets(dir.string());
    if (sets.empty()) throw Error({"conformance", dir.string()}, "no test_data_set_* folder");
    for (const auto& set : sets) {
      std::vector<Tensor> inputs;
      ValueList values;
      for (auto& named : read_value_dir(set, "input", session->inputs())) {
        inputs.push_back(std::move(named.tensor));
        values.push_back(std::move(named.value));
      }
      const auto expected = read_value_dir(set, "output", session->outputs());
      const auto result = session->run_values(inputs, values);
      if (result.outputs.size() != expected.size())
        throw Error({"conformance", set},
                    std::to_string(result.outputs.size()) + " outputs, expected " + std::to_string(expected.size()));
      for (size_t i = 0; i < expected.size(); ++i) {
        const Value* got_value = i < result.values.size() ? result.values[i].get() : nullptr;
        std::string diff = expected[i].value
                               ? value_mismatch(got_value, result.outputs[i], *expected[i].value, r.max_abs_error)
                           : got_value ? "got " + got_value->describe() + ", expected a tensor"
                                       : mismatch(result.outputs[i], expected[i].tensor, r.max_abs_error);
        if (!diff.empty()) {
          r.status = Status::kFail;
          r.detail = fs::path(set).filename().string() + " output " + std::to_string(i) + " '" + expected[i].name +
                     "': " + diff;
          return r;
        }
      }
    }
    r.status = Status::kPass;
  } catch (const std::exception& e) {
    r.status = Status::kFail;
    r.detail = e.what();
  }
  return r;
}

// An exclusion whose reason starts with this: the test's expected output is a random draw (see below).
const std::string kRandomOutputMark = "[random] ";

std::string excluded_reason(const std::map<std::string, std::string>& exclusions, const std::string& name) {
  for (const auto& [pattern, reason] : exclusions) {
    if (!pattern.empty() && pattern.back() == '*') {
      if (name.compare(0, pattern.size() - 1, pattern, 0, pattern.size() - 1) == 0) return reason;
    } else if (pattern == name) {
      return reason;
    }
  }
  return "";
}

}  // namespace

std::map<std::string, std::string> read_exclusions(const std::string& path) {
  std::map<std::string, std::string> out;
  std::ifstream in(path);
  if (!in) throw Error({"conformance", path}, "cannot read the exclusion list");
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const auto start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    const auto end = line.find_first_of(" \t", start);
    const std::string pattern = line.substr(start, end == std::string::npos ? std::string::npos : end - start);
    const auto reason_start = end == std::string::npos ? std::string::npos : line.find_first_not_of(" \t", end);
    if (reason_start == std::string::npos)
      throw Error({"conformance", path + ":" + std::to_string(number)}, "exclusion '" + pattern + "' has no reason");
    out[pattern] = line.substr(reason_start);
  }
  return out;
}

std::vector<ConformanceResult> run_conformance(const ConformanceOptions& options,
                                               const std::function<void(const ConformanceResult&)>& on_result) {
  if (!fs::is_directory(options.data_dir))
    throw Error({"conformance", options.data_dir},
                "no generated node tests here (build the target refrt_conformance_data, or pass --data DIR)");
  const auto exclusions =
      options.exclusions_file.empty() ? std::map<std::string, std::string>{} : read_exclusions(options.exclusions_file);
  std::regex filter;
  try {
    filter = std::regex(options.filter.empty() ? "." : options.filter);
  } catch (const std::regex_error& e) {
    throw Error({"conformance"}, "--filter '" + options.filter + "' is not a valid regex: " + e.what(),
                ErrorKind::kUsage);
  }
  std::set<std::string> implemented;
  for (const auto& k : registered_kernels()) implemented.insert(k.domain + "::" + k.op_type);
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(options.data_dir))
    if (entry.is_directory() && std::regex_search(entry.path().filename().string(), filter))
      dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end());
  std::vector<ConformanceResult> results;
  for (const auto& dir : dirs) {
    const std::string reason = excluded_reason(exclusions, dir.filename().string());
    ConformanceResult r;
    if (reason.rfind(kRandomOutputMark, 0) == 0) {
      // The expected output is one draw of numpy's generator: never comparable, and a run that matched
      // it by chance must not look like a fixed test. Not run, reported as skipped with the reason.
      r.name = dir.filename().string();
      r.status = ConformanceResult::Status::kSkip;
      r.detail = "random output, not comparable: " + reason.substr(kRandomOutputMark.size());
    } else {
      r = run_one(dir, implemented);
      r.excluded_reason = reason;
    }
    if (on_result) on_result(r);
    results.push_back(std::move(r));
  }
  return results;
}

}  // namespace parity::refrt
