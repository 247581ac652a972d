// parity coverage: which ATen overloads the exporter translates and tests: the core ATen set of the installed
// torch, the official exporter's torch_lib registry (--torchlib), the CompositeImplicitAutograd ops
// torch.export keeps (--composite), or the ops of one program (--program).
// The core list (torch.Tag.core) and the tested list (the rows of tests/python/aten_cases.py) come from
// the venv's Python at run time, so both always match the installed torch and the real test table.
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>
#include <set>

#include <nlohmann/json.hpp>

#include "command.h"
#include "parity/error.h"
#include "parity/exporter/export.h"
#include "parity/exporter/program.h"
#include "parity/process.h"

namespace parity::cli {
namespace {

// Runs `python script args...` (no shell) and parses its stdout as JSON (the case table, the torch_lib registry).
nlohmann::json python_listing(const std::vector<std::string>& argv, const std::string& what) {
  const ProcessResult r = run_process(argv, 600.0, nullptr, /*echo_stderr=*/false, {}, /*keep_stdout=*/true);
  if (!r.ok())
    throw Error({"coverage", argv.at(1)}, "listing " + what + " failed (" +
                                              (r.timed_out ? std::string("timed out")
                                               : r.signal  ? "signal " + std::to_string(r.signal)
                                                           : "exit status " + std::to_string(r.exit_code)) +
                                              "): " + r.stderr_tail);
  try {
    return nlohmann::json::parse(r.stdout_text);
  } catch (const nlohmann::json::exception& e) {
    throw Error({"coverage", argv.at(1)}, "the " + what + " listing is not JSON: " + std::string(e.what()));
  }
}

nlohmann::json aten_case_listing() {
  return python_listing({venv_python(), source_dir() + "/tests/python/aten_cases.py", "--list"}, "the ATen case table");
}

std::set<std::string> tested_keys(const nlohmann::json& listing) {
  const auto tested = listing.at("tested").get<std::vector<std::string>>();
  return {tested.begin(), tested.end()};
}

void row(const std::string& op, bool translated, bool tested) {
  std::cout << std::left << std::setw(56) << op << std::setw(12) << (translated ? "yes" : "no")
            << (tested ? "yes" : "no") << "\n";
}

// torch_lib keys are "aten::op.overload", or "aten::op" for a function that serves the op's default overload
// and every overload without a registration of its own: Parity covers "aten::op" when it translates the
// default overload or, for an op without one, any overload of it.
bool covers_torchlib_key(const std::string& key, const std::set<std::string>& translated) {
  const auto colons = key.find("::");
  if (key.find('.', colons) != std::string::npos) return exporter::has_translation(key);
  if (exporter::has_translation(key + ".default")) return true;
  auto it = translated.lower_bound(key + ".");
  return it != translated.end() && it->rfind(key + ".", 0) == 0;
}

struct CoverageArgs {
  std::string program;
  bool missing = false, all = false, torchlib = false, composite = false;
};

int torchlib_coverage(const CoverageArgs& args) {
  const nlohmann::json registry =
      python_listing({venv_python(), source_dir() + "/scenarios/torchlib_keys.py"}, "the torch_lib registry");
  const auto tested = tested_keys(aten_case_listing());
  const auto keys = exporter::registered_translations();
  const std::set<std::string> translated(keys.begin(), keys.end());
  const auto torchlib = registry.at("keys").get<std::vector<std::string>>();
  auto is_tested = [&](const std::string& key) {
    if (tested.count(key)) return true;
    auto it = tested.lower_bound(key + ".");  // "aten::op" is tested through any of its overloads
    return key.find('.', key.find("::")) == std::string::npos && it != tested.end() && it->rfind(key + ".", 0) == 0;
  };
  size_t covered = 0, covered_tested = 0;
  std::cout << std::left << std::setw(56) << "torch_lib ATen key" << std::setw(12) << "translated"
            << "tested\n";
  for (const auto& key : torchlib) {
    const bool t = covers_torchlib_key(key, translated), s = is_tested(key);
    covered += t;
    covered_tested += t && s;
    if (!args.missing || !t || !s) row(key, t, s);
  }
  std::cout << "\nonnxscript " << registry.value("onnxscript", "?") << ", torch " << registry.value("torch", "?")
            << ": " << covered_tested << " of the covered keys have an oracle row in tests/python/aten_cases.py\n";
  std::cout << covered << "/" << torchlib.size() << " torchlib ATen overloads translated (" << std::fixed
            << std::setprecision(1) << (torchlib.empty() ? 0.0 : 100.0 * covered / torchlib.size()) << " %)\n";
  return kExitOk;
}

// The ATen ops of one program (subgraphs included) and whether each has a translation; with --missing only
// the keys without one, one per line (what `python -m scenarios.decompose` reads).
int program_coverage(const CoverageArgs& args) {
  const pt2::Program program = pt2::read_pt2(args.program);
  std::map<std::string, int> counts;
  std::vector<pt2::Graph> pending{program.graph};
  while (!pending.empty()) {
    const pt2::Graph graph = std::move(pending.back());
    pending.pop_back();
    for (const auto& node : graph.nodes) {
      ++counts[exporter::registry_key(node.target)];
      for (const auto& in : node.inputs)
        if (in.arg.is(pt2::ArgKind::as_graph)) pending.push_back(in.arg.subgraph());
    }
  }
  for (const auto& [key, count] : counts) {
    const bool aten = key.rfind("aten::", 0) == 0 || key.rfind("prims::", 0) == 0;
    // Custom-op namespaces get the custom-domain fallback; torch's own Python functions ("torch::...",
    // e.g. vmap's torch::_functorch.predispatch markers) have none, so they are missing unless translated.
    const bool python_function = key.rfind("torch::", 0) == 0;
    const bool translated = exporter::has_translation(key) || (!aten && !python_function);
    if (args.missing) {
      if (!translated) std::cout << key << "\n";
    } else {
      std::cout << std::left << std::setw(56) << key << std::setw(8) << count << (translated ? "yes" : "no") << "\n";
    }
  }
  return kExitOk;
}

// The CompositeImplicitAutograd denominator: every composite ATen overload of the installed torch that
// torch.export can leave in a (non-strict or strict, not decomposed) program, listed by
// scenarios/composite_ops.py from torch's dispatcher; the classes it leaves out are counted by reason.
int composite_coverage(const CoverageArgs& args) {
  const nlohmann::json listing = python_listing({venv_python(), source_dir() + "/scenarios/composite_ops.py"},
                                                "the CompositeImplicitAutograd ops");
  const auto tested = tested_keys(aten_case_listing());
  const auto ops = listing.at("ops").get<std::vector<std::string>>();
  size_t translated = 0, translated_tested = 0;
  std::cout << std::left << std::setw(56) << "CompositeImplicitAutograd overload" << std::setw(12) << "translated"
            << "tested\n";
  for (const auto& op : ops) {
    const bool t = exporter::has_translation(op), s = tested.count(op) != 0;
    translated += t;
    translated_tested += t && s;
    if (!args.missing || !t || !s) row(op, t, s);
  }
  std::cout << "\nnot counted (torch " << listing.value("torch", "?") << "):\n";
  for (const auto& [reason, keys] : listing.at("excluded").items())
    std::cout << "  " << keys.size() << "  " << reason << "\n";
  std::cout << "\n"
            << translated_tested << " of the translated overloads have an oracle row in tests/python/aten_cases.py\n";
  std::cout << translated << "/" << ops.size() << " CompositeImplicitAutograd ATen overloads translated (" << std::fixed
            << std::setprecision(1) << (ops.empty() ? 0.0 : 100.0 * translated / ops.size())
            << " %); the rest are re-decomposed by torch when the Python entry points capture\n";
  return kExitOk;
}

int core_coverage(const CoverageArgs& args) {
  const nlohmann::json listing = aten_case_listing();
  const auto core = listing.at("core").get<std::vector<std::string>>();
  const std::set<std::string> tested = tested_keys(listing);
  const auto keys = exporter::registered_translations();
  const std::set<std::string> core_set(core.begin(), core.end());

  std::cout << std::left << std::setw(56) << "ATen overload" << std::setw(12) << "translated"
            << "tested\n";
  size_t n_translated = 0, n_tested = 0;
  for (const auto& op : core) {
    const bool t = exporter::has_translation(op), s = tested.count(op) != 0;
    n_translated += t;
    n_tested += t && s;
    if (!args.missing || !t || !s) row(op, t, s);
  }
  if (args.all) {
    std::cout << "\nother translations (non-core overloads, symbolic scalars, guards)\n";
    for (const auto& op : keys)
      if (!core_set.count(op)) row(op, true, tested.count(op) != 0);
  }
  std::cout << "\ntorch " << listing.value("torch", "?") << ": " << keys.size() << " translations registered, "
            << n_tested << " core overloads translated and tested\n";
  std::cout << n_translated << "/" << core.size() << " core ATen overloads translated\n";
  return kExitOk;
}

std::function<int()> setup_coverage(CLI::App& app) {
  auto a = std::make_shared<CoverageArgs>();
  CLI::App* cmd =
      app.add_subcommand("coverage",
                         "ATen overloads translated and tested: core ATen of the installed torch, the official "
                         "exporter's torch_lib registry (--torchlib), the composite ops torch.export keeps "
                         "(--composite), or the ops of one program (--program)");
  cmd->add_flag("--missing", a->missing, "only what lacks a translation or an oracle row");
  cmd->add_flag("--all", a->all, "also the translations outside core ATen");
  auto* torchlib = cmd->add_flag("--torchlib", a->torchlib, "against the installed onnxscript's torch_lib registry");
  auto* composite = cmd->add_flag("--composite", a->composite,
                                  "against the CompositeImplicitAutograd ops torch.export can leave in a program")
                        ->excludes(torchlib);
  cmd->add_option("--program", a->program, "the ATen ops of one saved program instead")
      ->option_text("MODEL.pt2")
      ->excludes(torchlib)
      ->excludes(composite);
  return [a]() -> int {
    if (!a->program.empty()) return program_coverage(*a);
    if (a->composite) return composite_coverage(*a);
    return a->torchlib ? torchlib_coverage(*a) : core_coverage(*a);
  };
}

}  // namespace

PARITY_SUBCOMMAND(60, setup_coverage);

}  // namespace parity::cli
