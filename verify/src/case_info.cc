#include "parity/verify/case_info.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "parity/error.h"
#include "parity/fs.h"
#include "parity/tensor_io.h"

namespace parity::verify {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

bool is_mode(const std::string& s) { return s == "strict" || s == "nonstrict" || s == "decomposed"; }

// Type checks that name the field, so that a hand-written case.json gets a message, not nlohmann's text.
class Fields {
 public:
  Fields(const json& j, std::string path) : j_(j), path_(std::move(path)) {}

  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw Error({"verify", path_}, "field \"" + field + "\": " + what);
  }
  static std::string type_of(const json& v) { return v.is_null() ? "null" : v.type_name(); }

  const json* get(const std::string& key) const { return j_.contains(key) ? &j_.at(key) : nullptr; }

  std::string string(const std::string& key, const std::string& fallback, bool allow_null = false) const {
    const json* v = get(key);
    if (!v || (allow_null && v->is_null())) return fallback;
    if (!v->is_string()) fail(key, "expected a string, got " + type_of(*v));
    return v->get<std::string>();
  }

  std::vector<std::string> strings(const std::string& key) const {
    std::vector<std::string> out;
    const json* v = get(key);
    if (!v) return out;
    if (!v->is_array()) fail(key, "expected a list of strings, got " + type_of(*v));
    for (size_t i = 0; i < v->size(); ++i) {
      if (!(*v)[i].is_string()) fail(key + "[" + std::to_string(i) + "]", "expected a string, got " + type_of((*v)[i]));
      out.push_back((*v)[i].get<std::string>());
    }
    return out;
  }

  static bool is_count(const json& v) { return v.is_number_integer() && v.get<int64_t>() >= 0; }

  std::optional<int64_t> count(const std::string& key) const {
    const json* v = get(key);
    if (!v) return std::nullopt;
    if (!is_count(*v)) fail(key, "expected an integer >= 0, got " + (v->is_number() ? v->dump() : type_of(*v)));
    return v->get<int64_t>();
  }

  std::vector<CaseDynamicDim> dynamic_dims() const {
    std::vector<CaseDynamicDim> out;
    const json* v = get("dynamic_dims");
    if (!v) return out;
    const std::string shape = R"(a list of {"input": int, "axis": int, "name": string} objects)";
    if (!v->is_array()) fail("dynamic_dims", "expected " + shape + ", got " + type_of(*v));
    for (size_t i = 0; i < v->size(); ++i) {
      const json& d = (*v)[i];
      const std::string field = "dynamic_dims[" + std::to_string(i) + "]";
      if (!d.is_object())
        fail(field, R"(expected an object {"input": int, "axis": int, "name": string}, got )" + type_of(d));
      CaseDynamicDim dim;
      for (const char* key : {"input", "axis"}) {
        if (!d.contains(key)) fail(field + "." + key, "missing (an integer >= 0)");
        if (!is_count(d[key])) fail(field + "." + key, "expected an integer >= 0, got " + d[key].dump());
      }
      dim.input = d["input"].get<int64_t>(), dim.axis = d["axis"].get<int64_t>();
      Fields inner(d, path_);
      for (auto [key, target] :
           {std::pair{"name", &dim.name}, {"input_name", &dim.input_name}, {"symbol", &dim.symbol}}) {
        const json* s = inner.get(key);
        if (!s) continue;
        if (!s->is_string()) fail(field + "." + key, "expected a string, got " + type_of(*s));
        *target = s->get<std::string>();
      }
      if (dim.name.empty()) fail(field + ".name", "missing (the Dim's name, e.g. \"batch\")");
      out.push_back(dim);
    }
    return out;
  }

 private:
  const json& j_;
  std::string path_;
};

}  // namespace

CaseInfo load_case_info(const std::string& case_dir) {
  CaseInfo info;
  info.path = (fs::path(case_dir) / "case.json").string();
  json j;
  try {
    j = json::parse(read_file(info.path, "verify"));
  } catch (const json::exception& e) {
    // nlohmann's text starts "[json.exception.parse_error.101] "; the rest says where and why.
    const std::string what = e.what();
    throw Error({"verify", info.path},
                "broken JSON: " + (what.rfind("[json.", 0) == 0 ? what.substr(what.find("] ") + 2) : what));
  }
  if (!j.is_object()) throw Error({"verify", info.path}, "expected a JSON object, got " + Fields::type_of(j));
  const Fields f(j, info.path);
  const fs::path dir = fs::absolute(case_dir).lexically_normal();
  const fs::path folder = dir.filename().empty() ? dir.parent_path() : dir;  // "case/" ends in an empty name
  const std::string folder_name = folder.filename().string();

  if (const json* v = f.get("schema_version")) {
    if (!v->is_number_integer() || v->get<int64_t>() != 1)
      f.fail("schema_version", "expected 1 (the case.json version this parity reads), got " + v->dump());
  }
  info.mode = f.string("mode", is_mode(folder_name) ? folder_name : "custom");
  info.name = f.string("name", is_mode(folder_name) ? folder.parent_path().filename().string() : folder_name);
  if (info.name.empty()) f.fail("name", "must not be empty");
  if (info.mode.empty()) f.fail("mode", "must not be empty");
  info.status = f.string("status", "captured");
  if (info.status != "captured" && info.status != "capture_failed")
    f.fail("status", "expected \"captured\" or \"capture_failed\", got \"" + info.status + "\"");
  info.error = f.string("error", "", true);
  for (const char* key : {"description", "torch_version", "source_hash"}) f.string(key, "", true);
  if (const json* v = f.get("capture_seconds"); v && !v->is_number())
    f.fail("capture_seconds", "expected a number, got " + Fields::type_of(*v));
  info.input_sets = f.count("input_sets");
  info.input_names = f.strings("input_names");
  info.output_names = f.strings("output_names");
  info.dynamic_dims = f.dynamic_dims();
  info.torch_libraries = f.strings("torch_libraries");
  info.export_plugins = f.strings("export_plugins");
  if (const json* v = f.get("eager_state")) {
    if (!v->is_boolean()) f.fail("eager_state", "expected true or false, got " + Fields::type_of(*v));
    info.eager_state = v->get<bool>();
  }
  f.strings("decomposed_ops");     // informative: ATen overloads capture re-decomposed (--decompose-unsupported)
  f.strings("python_op_modules");  // for scenarios.peers: the modules defining Python custom ops

  if (info.status != "captured") return info;
  if (!fs::is_regular_file(fs::path(case_dir) / "model.pt2"))
    throw Error({"verify", info.path}, "status is \"captured\" but the folder has no model.pt2 (torch.export.save)");
  const size_t sets = list_test_data_sets(case_dir).size();
  if (sets == 0)
    throw Error({"verify", info.path}, "status is \"captured\" but the folder has no test_data_set_<k> folders");
  if (info.input_sets && static_cast<size_t>(*info.input_sets) != sets)
    f.fail("input_sets", "says " + std::to_string(*info.input_sets) + " but the folder holds " + std::to_string(sets) +
                             " test_data_set_<k> folders");
  return info;
}

}  // namespace parity::verify
