// The `parity` command line: one CLI11 app with a subcommand per registered command (cmd_*.cc).
// Errors become one line on stderr and an exit code.
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "command.h"
#include "parity/error.h"
#include "parity/exporter/export.h"

namespace parity::cli {

std::vector<Command>& command_table() {
  static std::vector<Command> table;
  return table;
}

CommandRegistrar::CommandRegistrar(int order, CommandSetup setup) {
  command_table().push_back({order, std::move(setup)});
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

CLI::Option* add_opset_option(CLI::App* cmd, int& opset) {
  opset = exporter::kAutoOpset;
  return cmd
      ->add_option("--opset", opset,
                   "ONNX opset to export to (default: " + std::to_string(exporter::kDefaultOpset) +
                       ", 20 for programs that call gelu, 21 for programs quantized with torchao's quantize_)")
      ->check(CLI::Range(exporter::kMinOpset, exporter::kMaxOpset));
}

CLI::Option* add_modes_option(CLI::App* cmd, std::vector<std::string>& modes) {
  return cmd->add_option("--modes", modes, "capture modes")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->check(CLI::IsMember({"strict", "nonstrict", "decomposed"}))
      ->option_text("strict,nonstrict,decomposed");
}

void need_argument(const std::string& value, const std::string& what) {
  if (value.empty()) throw Error({"cli"}, "expected " + what, ErrorKind::kUsage);
}

namespace {

int exit_code_for(const Error& e) {
  switch (e.kind()) {
    case ErrorKind::kUsage:
      return kExitUsage;
    case ErrorKind::kUnsupported:
      return kExitUnsupported;
    default:
      return kExitInputError;
  }
}

// Subcommands in --help order, and what runs each.
std::vector<std::pair<CLI::App*, std::function<int()>>> build_app(CLI::App& app) {
  auto commands = command_table();
  std::stable_sort(commands.begin(), commands.end(),
                   [](const Command& a, const Command& b) { return a.order < b.order; });
  std::vector<std::pair<CLI::App*, std::function<int()>>> out;
  for (const auto& c : commands) {
    auto run = c.setup(app);
    out.emplace_back(app.get_subcommands({}).back(), std::move(run));
  }
  app.require_subcommand(1);
  app.footer(
      "exit codes: 0 ok, 1 verification failed, 2 usage, 3 bad input, 4 unsupported\n"
      "`parity <command> --help` lists a command's options.");
  return out;
}

bool is_command(CLI::App& app, const std::string& name) {
  for (const CLI::App* sub : app.get_subcommands({}))
    if (sub->get_name() == name) return true;
  return false;
}

int usage_error(CLI::App& app, const std::string& message) {
  std::cerr << "parity: error: " << message << "\n\n" << app.help();
  return kExitUsage;
}

int run(int argc, char** argv) {
  CLI::App app{"parity — export PyTorch programs to ONNX and prove that both compute the same numbers", "parity"};
  const auto commands = build_app(app);
  const std::string first = argc > 1 ? argv[1] : "";
  if (first == "--version") {
    std::cout << "parity 0.1.0\n";
    return kExitOk;
  }
  if (first == "help") return std::cout << app.help(), kExitOk;
  if (first.empty()) return usage_error(app, "no command given");
  if (first[0] != '-' && !is_command(app, first)) return usage_error(app, "unknown command '" + first + "'");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "parity: error: " << e.what() << "\nrun 'parity " << (is_command(app, first) ? first + " " : "")
              << "--help' for usage\n";
    return kExitUsage;
  }
  for (const auto& [cmd, fn] : commands)
    if (cmd->parsed()) return fn();
  return usage_error(app, "no command given");
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const Error& e) {
    std::cerr << "parity: error: " << e.what() << "\n";
    if (e.kind() == ErrorKind::kUsage) std::cerr << "run 'parity --help' for usage\n";
    return exit_code_for(e);
  } catch (const std::exception& e) {
    std::cerr << "parity: error: " << e.what() << "\n";
    return kExitInputError;
  }
}

}  // namespace parity::cli

int main(int argc, char** argv) { return parity::cli::main(argc, argv); }
