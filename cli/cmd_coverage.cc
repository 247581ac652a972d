// parity coverage: which core ATen overloads of the installed torch the exporter translates and tests.
// The core list (torch.Tag.core) and the tested list (the rows of tests/python/aten_cases.py) come from
// the venv's Python at run time, so both always match the installed torch and the real test table.
#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <memory>
#include <set>

#include <nlohmann/json.hpp>

#include "command.h"
#include "parity/error.h"
#include "parity/exporter/export.h"

namespace parity::cli {
namespace {

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

nlohmann::json case_table_listing(const std::string& python, const std::string& script) {
  const std::string command = shell_quote(python) + " " + shell_quote(script) + " --list";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) throw Error({"coverage"}, "cannot start " + command);
  std::string text;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe.get())) text.append(buffer, n);
  const int status = pclose(pipe.release());
  if (status != 0) throw Error({"coverage", script}, "listing the ATen case table failed (exit status " + std::to_string(status) + ")");
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error({"coverage", script}, std::string("the case table listing is not JSON: ") + e.what());
  }
}

int cmd_coverage(const std::vector<std::string>& argv) {
  Args args(argv, {}, {"--missing", "--all"});
  if (!args.positional().empty()) throw Error({"cli"}, "coverage takes no positional arguments", ErrorKind::kUsage);
  const std::string python = env_or("PARITY_PYTHON", PARITY_PYTHON);
  const std::string script = std::string(PARITY_SOURCE_DIR) + "/tests/python/aten_cases.py";
  const nlohmann::json listing = case_table_listing(python, script);
  const auto core = listing.at("core").get<std::vector<std::string>>();
  const auto tested_list = listing.at("tested").get<std::vector<std::string>>();
  const std::set<std::string> tested(tested_list.begin(), tested_list.end());
  const auto keys = exporter::registered_translations();
  const std::set<std::string> translated(keys.begin(), keys.end());
  const std::set<std::string> core_set(core.begin(), core.end());

  auto row = [](const std::string& op, bool t, bool s) {
    std::cout << std::left << std::setw(56) << op << std::setw(12) << (t ? "yes" : "no") << (s ? "yes" : "no") << "\n";
  };
  std::cout << std::left << std::setw(56) << "ATen overload" << std::setw(12) << "translated" << "tested\n";
  size_t n_translated = 0, n_tested = 0;
  for (const auto& op : core) {
    const bool t = translated.count(op) != 0, s = tested.count(op) != 0;
    n_translated += t;
    n_tested += t && s;
    if (!args.has("--missing") || !t || !s) row(op, t, s);
  }
  if (args.has("--all")) {
    std::cout << "\nother translations (non-core overloads, symbolic scalars, guards)\n";
    for (const auto& op : keys)
      if (!core_set.count(op)) row(op, true, tested.count(op) != 0);
  }
  std::cout << "\ntorch " << listing.value("torch", "?") << ": " << keys.size() << " translations registered, "
            << n_tested << " core overloads translated and tested\n";
  std::cout << n_translated << "/" << core.size() << " core ATen overloads translated\n";
  return kExitOk;
}

}  // namespace

PARITY_COMMAND("coverage", 60, "coverage [--missing] [--all]",
               "core ATen overloads of the installed torch: translated by the exporter? tested (tests/python/aten_cases.py)?",
               cmd_coverage);

}  // namespace parity::cli
