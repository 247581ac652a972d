// A second run of the matrix reuses a (case, mode) unit's verify result when nothing it depends on changed:
// the case folder (capture rewrites it when the case source, torch or torchao change), the binaries and
// libraries `parity verify` runs with, its arguments and the environment variables that steer refrt, oneDNN,
// OpenBLAS and the thread pools. `parity matrix --reverify` verifies every unit again.
#pragma once
#include <string>

#include "executor.h"

namespace parity::verify {

// What every unit of this run shares: this executable, the shared libraries under its build folder (the
// custom-op libraries too), the libraries this process has mapped (libtorch, oneDNN, OpenBLAS), by path,
// size and modification time; the verify arguments' options and the steering environment variables.
std::string shared_verify_key(const MatrixOptions& o);

// The unit's key: the shared key and its case folder's files (path, size, modification time).
std::string unit_verify_key(const std::string& shared_key, const Unit& u);

// True when u.out_dir holds a report.json written under this key (a deterministic verdict: not an error,
// crash or timeout, which are never stored).
bool verify_result_cached(const Unit& u, const std::string& key);

// Records that u.out_dir/report.json was made under `key`; removes an older record first.
void store_verify_key(const Unit& u, const std::string& key, const std::string& status);
void forget_verify_key(const Unit& u);

}  // namespace parity::verify
