// The paths this build was configured with, compiled into this one file: a second build of the same
// sources with other paths (the wheel's, pip install) then recompiles only it, and ccache serves the rest.
#include "command.h"

namespace parity::cli {

std::string venv_python() { return env_or("PARITY_PYTHON", PARITY_PYTHON); }
std::string source_dir() { return env_or("PARITY_SOURCE_DIR", PARITY_SOURCE_DIR); }
std::string conformance_dir() { return env_or("PARITY_CONFORMANCE_DIR", PARITY_CONFORMANCE_DIR); }

}  // namespace parity::cli
