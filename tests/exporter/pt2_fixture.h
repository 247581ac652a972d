// Test helper: a tiny hand-written torch.export program (schema 8) — y = relu(x @ W^T + b) with a
// dynamic batch — whose JSON pieces tests can break one at a time.
#pragma once
#include <stdlib.h>  // mkdtemp

#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "parity/fs.h"
#include "zip_writer.h"

namespace parity::testing {

using json = nlohmann::json;

// A fresh directory under the system temp dir (mkdtemp: unique per call, so parallel test processes and
// leftovers of an earlier run never collide), removed with everything in it when the object dies.
class UniqueTempDir {
 public:
  explicit UniqueTempDir(const std::string& prefix = "parity_tests_") {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + pattern);
    path_ = pattern;
  }
  ~UniqueTempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  UniqueTempDir(const UniqueTempDir&) = delete;
  UniqueTempDir& operator=(const UniqueTempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// The directory the fixture writes archives into: one per test process, removed at exit (an archive may
// still be memory-mapped by a program object that outlives the fixture that wrote it).
inline const std::filesystem::path& fixture_temp_dir() {
  static const UniqueTempDir dir("parity_pt2_fixture_");
  return dir.path();
}

inline json tensor_meta(std::vector<json> sizes, std::vector<int64_t> strides) {
  json s = json::array();
  for (auto st : strides) s.push_back({{"as_int", st}});
  return {{"dtype", 7},
          {"sizes", sizes},
          {"strides", s},
          {"storage_offset", {{"as_int", 0}}},
          {"requires_grad", false},
          {"device", {{"type", "cpu"}, {"index", nullptr}}},
          {"layout", 7}};
}

inline json batch_dim() {
  return {{"as_expr", {{"expr_str", "Symbol('s77', positive=True, integer=True)"}, {"hint", {{"as_int", 2}}}}}};
}

struct Pt2Fixture {
  json model;
  json weights_config;
  std::string weight_bytes, bias_bytes;
  std::string archive_format = "pt2";
  std::string dims = R"({"s77": "batch"})";

  Pt2Fixture() {
    auto node = [](const std::string& target, json inputs, const std::string& out) {
      return json{{"target", target},
                  {"inputs", inputs},
                  {"outputs", {{{"as_tensor", {{"name", out}}}}}},
                  {"metadata",
                   {{"stack_trace", "File \"/home/u/model.py\", line 3, in forward\n    y = f(x)"},
                    {"nn_module_stack", "L__self__,,__main__.M;L__self__fc,fc,torch.nn.modules.linear.Linear"}}},
                  {"name", out}};
    };
    auto arg = [](const std::string& name, const std::string& tensor) {
      return json{{"name", name}, {"arg", {{"as_tensor", {{"name", tensor}}}}}, {"kind", 1}};
    };
    json graph = {{"inputs",
                   {{{"as_tensor", {{"name", "p_fc_weight"}}}},
                    {{"as_tensor", {{"name", "p_fc_bias"}}}},
                    {{"as_tensor", {{"name", "x"}}}}}},
                  {"outputs", {{{"as_tensor", {{"name", "relu"}}}}}},
                  {"nodes",
                   {node("torch.ops.aten.linear.default",
                         {arg("input", "x"), arg("weight", "p_fc_weight"), arg("bias", "p_fc_bias")}, "linear"),
                    node("torch.ops.aten.relu.default", {arg("self", "linear")}, "relu")}},
                  {"tensor_values",
                   {{"p_fc_weight", tensor_meta({{{"as_int", 2}}, {{"as_int", 3}}}, {3, 1})},
                    {"p_fc_bias", tensor_meta({{{"as_int", 2}}}, {1})},
                    {"x", tensor_meta({batch_dim(), {{"as_int", 3}}}, {3, 1})},
                    {"linear", tensor_meta({batch_dim(), {{"as_int", 2}}}, {2, 1})},
                    {"relu", tensor_meta({batch_dim(), {{"as_int", 2}}}, {2, 1})}}},
                  {"sym_int_values", json::object()},
                  {"sym_bool_values", json::object()}};
    json signature = {{"input_specs",
                       {{{"parameter", {{"arg", {{"name", "p_fc_weight"}}}, {"parameter_name", "fc.weight"}}}},
                        {{"parameter", {{"arg", {{"name", "p_fc_bias"}}}, {"parameter_name", "fc.bias"}}}},
                        {{"user_input", {{"arg", {{"as_tensor", {{"name", "x"}}}}}}}}}},
                      {"output_specs", {{{"user_output", {{"arg", {{"as_tensor", {{"name", "relu"}}}}}}}}}}};
    model = {{"graph_module", {{"graph", graph}, {"signature", signature}, {"module_call_graph", json::array()}}},
             {"schema_version", {{"major", 8}, {"minor", 20}}},
             {"opset_version", {{"aten", 10}}},
             {"range_constraints", {{"s77", {{"min_val", 2}, {"max_val", nullptr}}}}},
             {"torch_version", "2.13.0+cpu"}};
    const float w[6] = {1, -2, 3, -4, 5, -6}, b[2] = {0.5f, -0.5f};
    weight_bytes.assign(reinterpret_cast<const char*>(w), sizeof w);
    bias_bytes.assign(reinterpret_cast<const char*>(b), sizeof b);
    weights_config = {{"config",
                       {{"fc.weight",
                         {{"path_name", "weight_0"},
                          {"is_param", true},
                          {"use_pickle", false},
                          {"tensor_meta", tensor_meta({{{"as_int", 2}}, {{"as_int", 3}}}, {3, 1})}}},
                        {"fc.bias",
                         {{"path_name", "weight_1"},
                          {"is_param", true},
                          {"use_pickle", false},
                          {"tensor_meta", tensor_meta({{{"as_int", 2}}}, {1})}}}}}};
  }

  std::string bytes(const std::string& model_json_override = "") const {
    return make_zip({{"m/archive_format", archive_format},
                     {"m/models/model.json", model_json_override.empty() ? model.dump() : model_json_override},
                     {"m/data/weights/model_weights_config.json", weights_config.dump()},
                     {"m/data/weights/weight_0", weight_bytes},
                     {"m/data/weights/weight_1", bias_bytes},
                     {"m/extra/parity_dims.json", dims}});
  }

  std::string write(const std::string& file_name, const std::string& content) const {
    const auto path = fixture_temp_dir() / file_name;
    write_file_atomic(path.string(), content);
    return path.string();
  }
  std::string write(const std::string& file_name) const { return write(file_name, bytes()); }
};

}  // namespace parity::testing
