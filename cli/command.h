// The command table: each `parity <command>` lives in its own cmd_<name>.cc and registers itself
// with one PARITY_COMMAND line, so adding a command never touches main.cc.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "args.h"

namespace parity::cli {

using CommandFn = std::function<int(const std::vector<std::string>& argv)>;

struct Command {
  std::string name;
  std::string usage;    // one or more lines after "parity ", e.g. "run MODEL.onnx --inputs DIR"
  std::string summary;  // one line, for --help
  int order;            // position in --help
  CommandFn fn;
};

std::vector<Command>& command_table();

struct CommandRegistrar {
  CommandRegistrar(const char* name, int order, const char* usage, const char* summary, CommandFn fn);
};

#define PARITY_COMMAND_CONCAT_INNER(a, b) a##b
#define PARITY_COMMAND_CONCAT(a, b) PARITY_COMMAND_CONCAT_INNER(a, b)
// PARITY_COMMAND("run", 20, "run MODEL.onnx --inputs DIR", "execute an ONNX model on refrt", cmd_run);
#define PARITY_COMMAND(name, order, usage, summary, fn)                                                \
  static const ::parity::cli::CommandRegistrar PARITY_COMMAND_CONCAT(parity_command_, __LINE__)( \
      name, order, usage, summary, fn)

// Shared option helpers.
std::string env_or(const char* name, const std::string& fallback);
int opset_option(const Args& args);  // --opset within the exporter's range
void need_positional(const Args& args, size_t n, const std::string& what);

}  // namespace parity::cli
