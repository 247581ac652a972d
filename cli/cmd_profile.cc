// parity profile: per-op CPU profile of refrt on a model, optionally beside onnxruntime's.
#include <chrono>
#include <filesystem>
#include <iostream>

#include "command.h"
#include "parity/error.h"
#include "parity/fs.h"
#include "parity/process.h"
#include "parity/refrt/cpu_isa.h"
#include "parity/refrt/profile.h"
#include "parity/refrt/session.h"
#include "parity/tensor_io.h"
#include "parity/verify/capture.h"

namespace fs = std::filesystem;

namespace parity::cli {
namespace {

struct ProfileArgs {
  std::string model, trace, out;
  InputChoice inputs;
  int runs = 10, warmup = 2, threads = 1;
  bool compare_ort = false, no_optimize = false;
};

// onnxruntime's profile of the same model and inputs (scenarios/ort_profile.py in the venv); its
// output goes to ours.
nlohmann::json profile_with_ort(const ProfileArgs& a, const std::string& inputs_dir, const std::string& out_dir) {
  const std::string summary = fs::absolute(fs::path(out_dir) / "ort_summary.json").string();
  const verify::ScenariosPackage scenarios = verify::scenarios_package(source_dir());
  const ProcessResult r =
      run_process({venv_python(), "-m", scenarios.module + ".ort_profile", fs::absolute(a.model).string(), "--inputs",
                   fs::absolute(inputs_dir).string(), "--runs", std::to_string(a.runs), "--warmup",
                   std::to_string(a.warmup), "--threads", std::to_string(a.threads), "--out", summary},
                  3600, [](const std::string& line) { std::cout << line << "\n"; }, /*echo_stderr=*/true,
                  {{"PYTHONPATH", scenarios.python_path}});
  if (!r.ok()) throw Error({"profile", a.model}, "onnxruntime could not profile the model (see its message above)");
  return nlohmann::json::parse(read_file(summary));
}

// The inputs as files for onnxruntime: the given folder, or the random tensors written out.
std::string inputs_folder(const ProfileArgs& a, const refrt::Session& session, const std::vector<Tensor>& inputs,
                          const std::string& out_dir) {
  if (!a.inputs.random) return a.inputs.inputs_dir;
  const std::string dir = (fs::path(out_dir) / "inputs").string();
  fs::create_directories(dir);
  for (size_t i = 0; i < inputs.size(); ++i)
    write_tensor_file((fs::path(dir) / ("input_" + std::to_string(i) + ".pb")).string(), inputs[i],
                      session.inputs()[i].name);
  return dir;
}

int run_profile(const ProfileArgs& a) {
  need_argument(a.model, "one MODEL.onnx argument");
  const std::string out_dir = a.out.empty() ? fs::path(a.model).stem().string() + "_profile" : a.out;
  const std::string trace_path = a.trace.empty() ? (fs::path(out_dir) / "trace.json").string() : a.trace;
  using Clock = std::chrono::steady_clock;
  refrt::SessionOptions session_options;
  session_options.threads = a.threads;
  session_options.optimize = !a.no_optimize;
  const Clock::time_point load_start = Clock::now();
  auto session = refrt::Session::load_file(a.model, session_options);
  const double load_ms = std::chrono::duration<double, std::milli>(Clock::now() - load_start).count();
  const std::vector<Tensor> inputs = load_inputs(*session, a.inputs);
  std::cerr << "profiling " << a.model << ": " << a.warmup << " warm-up + " << a.runs << " runs\n";
  const refrt::Profile profile = refrt::profile_session(*session, inputs, {a.runs, a.warmup}, a.model, load_ms);
  nlohmann::json summary = refrt::summarize_profile(profile);
  summary["isa_level"] = refrt::isa_name(refrt::isa_level());
  summary["cpu_isa_level"] = refrt::isa_name(refrt::isa_info().cpu);
  fs::create_directories(out_dir);
  if (a.compare_ort)
    refrt::add_ort_comparison(summary, profile_with_ort(a, inputs_folder(a, *session, inputs, out_dir), out_dir));
  if (!fs::path(trace_path).parent_path().empty()) fs::create_directories(fs::path(trace_path).parent_path());
  write_file_atomic(trace_path, refrt::chrome_trace(profile).dump());
  write_file_atomic((fs::path(out_dir) / "summary.json").string(), summary.dump(1));
  write_file_atomic((fs::path(out_dir) / "summary.md").string(), refrt::profile_markdown(summary));
  std::cout << refrt::profile_text(summary);
  std::cout << "ISA level: " << refrt::isa_summary() << "\n";
  if (const std::string note = refrt::generic_openblas_note(); !note.empty()) std::cout << note << "\n";
  if (!refrt::isa_info().note.empty()) std::cout << "note: " << refrt::isa_info().note << "\n";
  std::cout << "trace: " << trace_path << "\nsummary: " << (fs::path(out_dir) / "summary.md").string() << "\n";
  return kExitOk;
}

std::function<int()> setup_profile(CLI::App& app) {
  auto a = std::make_shared<ProfileArgs>();
  CLI::App* cmd =
      app.add_subcommand("profile", "per-op CPU profile of refrt (ORT-schema trace, summary by op type and node)");
  cmd->add_option("MODEL.onnx", a->model, "the model");
  add_input_options(cmd, a->inputs);
  cmd->add_option("--runs", a->runs, "profiled runs")->check(CLI::Range(1, 1000000))->capture_default_str();
  cmd->add_option("--warmup", a->warmup, "unmeasured runs first")->check(CLI::Range(0, 1000000))->capture_default_str();
  cmd->add_option("--threads", a->threads, "intra-op pool threads")->check(CLI::Range(1, 1024))->capture_default_str();
  cmd->add_option("--trace", a->trace, "Chrome trace file (default OUT/trace.json)")->option_text("out.json");
  cmd->add_option("--out", a->out, "folder for trace.json, summary.json, summary.md (default <model stem>_profile)")
      ->option_text("DIR");
  cmd->add_flag("--compare-ort", a->compare_ort, "profile the same model and inputs in onnxruntime too");
  cmd->add_flag("--no-optimize", a->no_optimize, "skip refrt's load-time graph optimisation");
  return [a] { return run_profile(*a); };
}

}  // namespace

PARITY_SUBCOMMAND(25, setup_profile);

}  // namespace parity::cli
