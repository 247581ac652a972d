// The `parity` command line: dispatches to the registered commands (cmd_*.cc). Errors become one
// line on stderr and an exit code.
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

CommandRegistrar::CommandRegistrar(const char* name, int order, const char* usage, const char* summary, CommandFn fn) {
  command_table().push_back({name, usage, summary, order, std::move(fn)});
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

int opset_option(const Args& args) {
  const int opset = args.get_int("--opset", exporter::kDefaultOpset);
  if (opset < exporter::kMinOpset || opset > exporter::kMaxOpset)
    throw Error({"cli"}, "--opset must be between " + std::to_string(exporter::kMinOpset) + " and " +
                             std::to_string(exporter::kMaxOpset), ErrorKind::kUsage);
  return opset;
}

void need_positional(const Args& args, size_t n, const std::string& what) {
  if (args.positional().size() != n) throw Error({"cli"}, "expected " + what, ErrorKind::kUsage);
}

namespace {

std::vector<Command> sorted_commands() {
  auto commands = command_table();
  std::stable_sort(commands.begin(), commands.end(), [](const Command& a, const Command& b) { return a.order < b.order; });
  return commands;
}

std::string usage_text() {
  std::ostringstream s;
  s << "parity — export PyTorch programs to ONNX and prove that both compute the same numbers\n\ncommands:\n";
  for (const auto& c : sorted_commands()) s << "  " << c.name << std::string(c.name.size() < 12 ? 12 - c.name.size() : 1, ' ') << c.summary << "\n";
  s << "\nusage:\n";
  for (const auto& c : sorted_commands()) {
    std::istringstream lines(c.usage);
    for (std::string line; std::getline(lines, line);) s << "  parity " << line << "\n";
  }
  s << "\nexit codes: 0 ok, 1 verification failed, 2 usage, 3 bad input, 4 unsupported\n";
  return s.str();
}

int exit_code_for(const Error& e) {
  switch (e.kind()) {
    case ErrorKind::kUsage: return kExitUsage;
    case ErrorKind::kUnsupported: return kExitUnsupported;
    default: return kExitInputError;
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> rest(argv + std::min(argc, 2), argv + argc);
  const std::string command = argc > 1 ? argv[1] : "";
  try {
    for (const auto& c : command_table()) {
      if (c.name != command) continue;
      if (std::find(rest.begin(), rest.end(), "--help") != rest.end() || std::find(rest.begin(), rest.end(), "-h") != rest.end()) {
        std::istringstream lines(c.usage);
        std::cout << c.summary << "\n\nusage:\n";
        for (std::string line; std::getline(lines, line);) std::cout << "  parity " << line << "\n";
        return kExitOk;
      }
      return c.fn(rest);
    }
    if (command == "--version") {
      std::cout << "parity 0.1.0\n";
      return kExitOk;
    }
    if (command == "-h" || command == "--help" || command == "help") {
      std::cout << usage_text();
      return kExitOk;
    }
    std::cerr << "parity: error: " << (command.empty() ? "no command given" : "unknown command '" + command + "'")
              << "\n\n" << usage_text();
    return kExitUsage;
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
