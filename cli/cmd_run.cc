// parity run: execute an ONNX model on refrt.
#include <filesystem>
#include <iostream>

#include "command.h"
#include "parity/error.h"
#include "parity/refrt/random_inputs.h"
#include "parity/refrt/session.h"
#include "parity/tensor_io.h"
#include "parity/verify/compare.h"

namespace fs = std::filesystem;

namespace parity::cli {
namespace {

void print_tensor_summary(const std::string& name, const Tensor& t) {
  std::cout << name << ": " << dtype_name(t.dtype()) << " " << shape_str(t.shape());
  const int64_t n = std::min<int64_t>(t.numel(), 6);
  if (n > 0) {
    std::cout << " [";
    for (int64_t i = 0; i < n; ++i) std::cout << (i ? ", " : "") << verify::element_as_double(t, i);
    std::cout << (t.numel() > n ? ", ...]" : "]");
  }
  std::cout << "\n";
}

int cmd_run(const std::vector<std::string>& argv) {
  Args args(argv, {"--inputs", "--outputs", "--dim", "--seed", "--threads"}, {"--random", "--no-optimize"});
  need_positional(args, 1, "one MODEL.onnx argument");
  if (args.has("--inputs") == args.has("--random"))
    throw Error({"cli"}, "give exactly one of --inputs DIR (a folder of input_<i>.pb files) or --random", ErrorKind::kUsage);
  refrt::SessionOptions options;
  options.threads = args.get_int("--threads", 0);
  options.optimize = !args.has("--no-optimize");
  auto session = refrt::Session::load_file(args.positional()[0], options);
  std::vector<Tensor> inputs;
  if (args.has("--random")) {
    inputs = refrt::random_inputs(session->inputs(), refrt::parse_dim_overrides(args.get_list("--dim")),
                                  static_cast<uint64_t>(args.get_int("--seed", 0)));
  } else {
    const std::string in_dir = args.get("--inputs");
    if (!fs::is_directory(in_dir)) throw Error({"io", in_dir}, "is not a directory (expected a folder of input_<i>.pb files)");
    for (auto& named : read_tensor_dir(in_dir, "input")) inputs.push_back(named.tensor);
  }
  const auto result = session->run(inputs);
  for (size_t i = 0; i < result.outputs.size(); ++i) print_tensor_summary(session->outputs()[i].name, result.outputs[i]);
  if (args.has("--outputs")) {
    for (size_t i = 0; i < result.outputs.size(); ++i)
      write_tensor_file((fs::path(args.get("--outputs")) / ("output_" + std::to_string(i) + ".pb")).string(),
                        result.outputs[i], session->outputs()[i].name);
    std::cout << "wrote " << result.outputs.size() << " outputs to " << args.get("--outputs") << "\n";
  }
  return kExitOk;
}

}  // namespace

PARITY_COMMAND("run", 20,
               "run MODEL.onnx (--inputs DIR | --random [--dim name=value,...] [--seed S]) [--outputs DIR] [--threads T]\n"
               "    [--no-optimize]", "execute an ONNX model on refrt", cmd_run);

}  // namespace parity::cli
