// parity profile: per-op CPU profile of refrt on a model, optionally beside onnxruntime's.
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "command.h"
#include "parity/error.h"
#include "parity/fs.h"
#include "parity/refrt/profile.h"
#include "parity/refrt/random_inputs.h"
#include "parity/tensor_io.h"

namespace fs = std::filesystem;

namespace parity::cli {
namespace {

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

nlohmann::json profile_with_ort(const std::string& model, const std::string& inputs_dir, int runs, int warmup,
                                int threads, const std::string& out_dir) {
  const std::string summary = (fs::path(out_dir) / "ort_summary.json").string();
  const std::string cmd = "cd " + shell_quote(env_or("PARITY_SOURCE_DIR", PARITY_SOURCE_DIR)) + " && " +
                          shell_quote(env_or("PARITY_PYTHON", PARITY_PYTHON)) + " -m scenarios.ort_profile " +
                          shell_quote(fs::absolute(model).string()) + " --inputs " +
                          shell_quote(fs::absolute(inputs_dir).string()) + " --runs " + std::to_string(runs) +
                          " --warmup " + std::to_string(warmup) + " --threads " + std::to_string(threads) + " --out " +
                          shell_quote(fs::absolute(summary).string());
  if (std::system(cmd.c_str()) != 0)
    throw Error({"profile", model}, "onnxruntime could not profile the model (see its message above)");
  return nlohmann::json::parse(read_file(summary));
}

int cmd_profile(const std::vector<std::string>& argv) {
  Args args(argv, {"--inputs", "--dim", "--runs", "--warmup", "--threads", "--trace", "--out", "--seed"},
            {"--random", "--compare-ort", "--no-optimize"});
  need_positional(args, 1, "one MODEL.onnx argument");
  const std::string model = args.positional()[0];
  if (args.has("--inputs") == args.has("--random"))
    throw Error({"cli"}, "give exactly one of --inputs DIR or --random", ErrorKind::kUsage);
  const int runs = args.get_int("--runs", 10), warmup = args.get_int("--warmup", 2), threads = args.get_int("--threads", 1);
  if (runs < 1 || warmup < 0 || threads < 1)
    throw Error({"cli"}, "--runs and --threads must be >= 1 and --warmup >= 0", ErrorKind::kUsage);
  const std::string out_dir = args.get("--out", fs::path(model).stem().string() + "_profile");
  const std::string trace_path = args.get("--trace", (fs::path(out_dir) / "trace.json").string());

  using Clock = std::chrono::steady_clock;
  refrt::SessionOptions session_options;
  session_options.threads = threads;
  session_options.optimize = !args.has("--no-optimize");
  const Clock::time_point load_start = Clock::now();
  auto session = refrt::Session::load_file(model, session_options);
  const double load_ms = std::chrono::duration<double, std::milli>(Clock::now() - load_start).count();

  std::vector<Tensor> inputs;
  if (args.has("--random")) {
    inputs = refrt::random_inputs(session->inputs(), refrt::parse_dim_overrides(args.get_list("--dim")),
                                  static_cast<uint64_t>(args.get_int("--seed", 0)));
  } else {
    for (auto& named : read_tensor_dir(args.get("--inputs"), "input")) inputs.push_back(std::move(named.tensor));
  }
  std::cerr << "profiling " << model << ": " << warmup << " warm-up + " << runs << " runs\n";
  const refrt::Profile profile = refrt::profile_session(*session, inputs, {runs, warmup}, model, load_ms);
  nlohmann::json summary = refrt::summarize_profile(profile);

  fs::create_directories(out_dir);
  if (args.has("--compare-ort")) {
    std::string inputs_dir = args.get("--inputs");
    if (inputs_dir.empty()) {  // the same random tensors, handed over as files
      inputs_dir = (fs::path(out_dir) / "inputs").string();
      fs::create_directories(inputs_dir);
      for (size_t i = 0; i < inputs.size(); ++i)
        write_tensor_file((fs::path(inputs_dir) / ("input_" + std::to_string(i) + ".pb")).string(), inputs[i],
                          session->inputs()[i].name);
    }
    refrt::add_ort_comparison(summary, profile_with_ort(model, inputs_dir, runs, warmup, threads, out_dir));
  }
  if (!fs::path(trace_path).parent_path().empty()) fs::create_directories(fs::path(trace_path).parent_path());
  write_file_atomic(trace_path, refrt::chrome_trace(profile).dump());
  write_file_atomic((fs::path(out_dir) / "summary.json").string(), summary.dump(1));
  write_file_atomic((fs::path(out_dir) / "summary.md").string(), refrt::profile_markdown(summary));
  std::cout << refrt::profile_text(summary);
  std::cout << "trace: " << trace_path << "\nsummary: " << (fs::path(out_dir) / "summary.md").string() << "\n";
  return kExitOk;
}

}  // namespace

PARITY_COMMAND("profile", 25,
               "profile MODEL.onnx (--inputs DIR | --random [--dim name=value,...] [--seed S]) [--runs N] [--warmup N]\n"
               "        [--threads T] [--trace out.json] [--out DIR] [--compare-ort] [--no-optimize]",
               "per-op CPU profile of refrt (ORT-schema trace, summary by op type and node)", cmd_profile);

}  // namespace parity::cli
