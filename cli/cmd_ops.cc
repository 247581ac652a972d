// parity ops: what refrt implements, one line per op: op, domain, since-versions, dtypes.
#include <iomanip>
#include <iostream>
#include <map>
#include <set>

#include "command.h"
#include "parity/error.h"
#include "parity/refrt/cpu_isa.h"
#include "parity/refrt/session.h"

namespace parity::cli {
namespace {

int run_ops() {
  // The hand-written kernels' instruction set (cpu_isa.h); a misspelt PARITY_REFRT_ISA is an error here too.
  const refrt::IsaLevel level = refrt::isa_level();
  struct Row {
    std::vector<int> since;
    std::set<std::string> dtypes;  // of the newest registration: what a current model may use
  };
  std::map<std::pair<std::string, std::string>, Row> rows;  // (domain, op)
  for (const auto& k : refrt::registered_kernels()) {
    Row& row = rows[{k.domain, k.op_type}];
    row.since.push_back(k.since_version);
    if (k.since_version == *std::max_element(row.since.begin(), row.since.end())) {
      row.dtypes.clear();
      for (DType t : k.dtypes) row.dtypes.insert(dtype_name(t));
    }
  }
  std::cout << std::left << std::setw(28) << "op" << std::setw(10) << "domain" << std::setw(20) << "since"
            << "dtypes\n";
  for (const auto& [key, row] : rows) {
    std::string since, dtypes;
    for (int v : row.since) since += (since.empty() ? "" : ",") + std::to_string(v);
    for (const auto& d : row.dtypes) dtypes += (dtypes.empty() ? "" : ",") + d;
    std::cout << std::setw(28) << key.second << std::setw(10) << (key.first.empty() ? "ai.onnx" : key.first)
              << std::setw(20) << since << dtypes << "\n";
  }
  std::cout << rows.size() << " ops\n";
  std::cout << "ISA level: " << isa_name(level) << " (CPU: " << isa_name(refrt::isa_info().cpu) << ")\n";
  if (const std::string note = refrt::generic_openblas_note(); !note.empty()) std::cout << note << "\n";
  if (!refrt::isa_info().note.empty()) std::cout << "note: " << refrt::isa_info().note << "\n";
  return kExitOk;
}

std::function<int()> setup_ops(CLI::App& app) {
  app.add_subcommand("ops", "list the operators refrt implements (op, domain, since-versions, dtypes)");
  return run_ops;
}

}  // namespace

PARITY_SUBCOMMAND(50, setup_ops);

}  // namespace parity::cli
