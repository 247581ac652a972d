#include "parity/tensor_io.h"

#include <algorithm>
#include <filesystem>

#include "parity/error.h"
#include "parity/fs.h"
#include "parity/internal/onnx_tensor.h"

namespace parity {

NamedTensor parse_tensor_proto(const std::string& bytes, const std::string& origin) {
  onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes)) throw Error({"tensor", origin}, "not a serialized ONNX TensorProto");
  return {proto.name(), tensor_from_proto(proto, origin)};
}

NamedTensor read_tensor_file(const std::string& path) { return parse_tensor_proto(read_file(path, "tensor"), path); }

std::string serialize_tensor_proto(const Tensor& t, const std::string& name) {
  onnx::TensorProto proto;
  tensor_to_proto(t, name, &proto);
  return proto.SerializeAsString();
}

void write_tensor_file(const std::string& path, const Tensor& t, const std::string& name) {
  write_file_atomic(path, serialize_tensor_proto(t, name), "tensor");
}

std::vector<NamedTensor> read_tensor_dir(const std::string& dir, const std::string& prefix) {
  std::vector<NamedTensor> out;
  for (size_t i = 0;; ++i) {
    const auto path = std::filesystem::path(dir) / (prefix + "_" + std::to_string(i) + ".pb");
    if (!std::filesystem::exists(path)) break;
    out.push_back(read_tensor_file(path.string()));
  }
  return out;
}

std::vector<std::string> list_test_data_sets(const std::string& case_dir) {
  std::vector<std::pair<int, std::string>> sets;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(case_dir, ec)) {
    const std::string name = entry.path().filename().string();
    const std::string prefix = "test_data_set_";
    if (!entry.is_directory() || name.rfind(prefix, 0) != 0) continue;
    try {
      sets.emplace_back(std::stoi(name.substr(prefix.size())), entry.path().string());
    } catch (const std::exception&) {}
  }
  if (ec) throw Error({"io", case_dir}, "cannot list directory: " + ec.message());
  std::sort(sets.begin(), sets.end());
  std::vector<std::string> out;
  for (auto& s : sets) out.push_back(s.second);
  return out;
}

}  // namespace parity
