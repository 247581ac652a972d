// parity run: execute an ONNX model on refrt.
#include <filesystem>
#include <iostream>

#include "command.h"
#include "parity/element.h"
#include "parity/error.h"
#include "parity/refrt/random_inputs.h"
#include "parity/refrt/session.h"
#include "parity/tensor_io.h"

namespace fs = std::filesystem;

namespace parity::cli {
namespace {

struct RunArgs {
  std::string model, outputs;
  InputChoice inputs;
  int threads = 0;
  bool no_optimize = false;
};

void print_tensor_summary(const std::string& name, const Tensor& t) {
  std::cout << name << ": " << dtype_name(t.dtype()) << " " << shape_str(t.shape());
  const int64_t n = std::min<int64_t>(t.numel(), 6);
  if (n > 0) {
    std::cout << " [";
    for (int64_t i = 0; i < n; ++i) std::cout << (i ? ", " : "") << element_as_double(t, i);
    std::cout << (t.numel() > n ? ", ...]" : "]");
  }
  std::cout << "\n";
}

int run_run(const RunArgs& a) {
  need_argument(a.model, "one MODEL.onnx argument");
  refrt::SessionOptions options;
  options.threads = a.threads;
  options.optimize = !a.no_optimize;
  auto session = refrt::Session::load_file(a.model, options);
  const std::vector<Tensor> inputs = load_inputs(*session, a.inputs);
  const auto result = session->run(inputs);
  for (size_t i = 0; i < result.outputs.size(); ++i)
    print_tensor_summary(session->outputs()[i].name, result.outputs[i]);
  if (!a.outputs.empty()) {
    for (size_t i = 0; i < result.outputs.size(); ++i)
      write_tensor_file((fs::path(a.outputs) / ("output_" + std::to_string(i) + ".pb")).string(), result.outputs[i],
                        session->outputs()[i].name);
    std::cout << "wrote " << result.outputs.size() << " outputs to " << a.outputs << "\n";
  }
  return kExitOk;
}

std::function<int()> setup_run(CLI::App& app) {
  auto a = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand("run", "execute an ONNX model on refrt");
  cmd->add_option("MODEL.onnx", a->model, "the model");
  add_input_options(cmd, a->inputs);
  cmd->add_option("--outputs", a->outputs, "write output_<i>.pb files into this folder")->option_text("DIR");
  cmd->add_option("--threads", a->threads, "intra-op pool threads (0: no pool, OpenBLAS as configured)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  cmd->add_flag("--no-optimize", a->no_optimize, "skip refrt's load-time graph optimisation");
  return [a] { return run_run(*a); };
}

}  // namespace

PARITY_SUBCOMMAND(20, setup_run);

}  // namespace parity::cli
