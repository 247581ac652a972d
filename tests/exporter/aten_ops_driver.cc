// Test driver for tests/python/test_aten_ops.py: exports and runs many tiny programs in one process.
// It calls the same library entry points as `parity export` and `parity run`, without the CLI's libtorch
// start-up cost per call (about a second), which would make the ~200-case table take many minutes.
//
//   parity_aten_driver MANIFEST.json RESULTS.json
// MANIFEST: [{"pt2": ..., "onnx": ..., "inputs": DIR, "outputs": DIR, "opset": N?}, ...]
// RESULTS:  [{"export_error": "..."?, "run_error": "..."?}, ...] in the same order.
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "parity/error.h"
#include "parity/exporter/export.h"
#include "parity/refrt/session.h"
#include "parity/tensor_io.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json run_case(const json& c) {
  json result = json::object();
  try {
    parity::exporter::ExportOptions options;
    options.opset = c.value("opset", options.opset);
    parity::exporter::export_file(c.at("pt2").get<std::string>(), c.at("onnx").get<std::string>(), options);
  } catch (const std::exception& e) {
    result["export_error"] = e.what();
    return result;
  }
  try {
    auto session = parity::refrt::Session::load_file(c.at("onnx").get<std::string>());
    std::vector<parity::Tensor> inputs;
    for (auto& named : parity::read_tensor_dir(c.at("inputs").get<std::string>(), "input"))
      inputs.push_back(named.tensor);
    const auto out = session->run(inputs);
    const fs::path dir = c.at("outputs").get<std::string>();
    fs::create_directories(dir);
    for (size_t i = 0; i < out.outputs.size(); ++i)
      parity::write_tensor_file((dir / ("output_" + std::to_string(i) + ".pb")).string(), out.outputs[i],
                                session->outputs()[i].name);
  } catch (const std::exception& e) {
    result["run_error"] = e.what();
  }
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: parity_aten_driver MANIFEST.json RESULTS.json\n";
    return 2;
  }
  std::ifstream in(argv[1]);
  const json manifest = json::parse(in);
  json results = json::array();
  for (const auto& c : manifest) results.push_back(run_case(c));
  std::ofstream(argv[2]) << results.dump(1);
  return 0;
}
