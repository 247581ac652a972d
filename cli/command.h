// The command table: each `parity <command>` lives in its own cmd_<name>.cc and registers itself with
// one PARITY_SUBCOMMAND line, so adding a command never touches main.cc. A command declares its
// options once, with CLI11 (type, range, default and help text in one place); `parity --help`,
// `parity <command> --help` and the README's command list (checked by tests/python/test_cli_help.py)
// all come from those declarations.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "parity/tensor.h"

namespace parity::refrt {
class Session;
}

namespace parity::cli {

// Adds the command's subcommand (options bound to its own state) to `app` and returns what runs it
// after a successful parse: a function returning the exit code.
using CommandSetup = std::function<std::function<int()>(CLI::App& app)>;

struct Command {
  int order;  // position in --help
  CommandSetup setup;
};

std::vector<Command>& command_table();

struct CommandRegistrar {
  CommandRegistrar(int order, CommandSetup setup);
};

#define PARITY_COMMAND_CONCAT_INNER(a, b) a##b
#define PARITY_COMMAND_CONCAT(a, b) PARITY_COMMAND_CONCAT_INNER(a, b)
// PARITY_SUBCOMMAND(20, setup_run);
#define PARITY_SUBCOMMAND(order, setup) \
  static const ::parity::cli::CommandRegistrar PARITY_COMMAND_CONCAT(parity_command_, __LINE__)(order, setup)

// Options several commands share, declared here once.
// --opset N: the export opset, range-checked against the exporter's (default: its default).
CLI::Option* add_opset_option(CLI::App* cmd, int& opset);
// --modes strict,nonstrict,decomposed (capture, matrix).
CLI::Option* add_modes_option(CLI::App* cmd, std::vector<std::string>& modes);
// --inputs DIR | --random [--dim name=value,...] [--seed S] (run, profile).
struct InputChoice {
  std::string inputs_dir;
  bool random = false;
  std::vector<std::string> dims;
  uint64_t seed = 0;
};
void add_input_options(CLI::App* cmd, InputChoice& choice);
// The inputs `choice` names for `session`'s inputs (input_options.cc).
std::vector<Tensor> load_inputs(const refrt::Session& session, const InputChoice& choice);

std::string env_or(const char* name, const std::string& fallback);
// The venv's python, the source tree and the ONNX backend test data (PARITY_PYTHON / PARITY_SOURCE_DIR /
// PARITY_CONFORMANCE_DIR, else the build's; build_paths.cc).
std::string venv_python();
std::string source_dir();
std::string conformance_dir();

// A usage error "expected <what>" when a required positional argument is missing.
void need_argument(const std::string& value, const std::string& what);

}  // namespace parity::cli
