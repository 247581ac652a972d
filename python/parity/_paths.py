"""Where the repository and the built `parity` binary are, seen from this package.

The package lives at <repo>/python/parity and is installed editable (scripts/setup.sh), so its own path
leads back to the repository: the `scenarios` package (capture) at <repo>/scenarios, the binary at
<repo>/build/parity."""
from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

# PARITY_SOURCE_DIR (the binary reads it too) overrides, e.g. for a copy installed outside the tree.
REPO_ROOT = Path(os.environ.get("PARITY_SOURCE_DIR") or Path(__file__).resolve().parents[2]).resolve()


class ParityError(RuntimeError):
    """Parity itself could not run (binary missing, unreadable case, bad option): not a verdict on the model."""


def parity_bin() -> Path:
    """PARITY_BIN when set, else <repo>/$PARITY_BUILD_DIR/parity (build/ by default)."""
    explicit = os.environ.get("PARITY_BIN")
    path = Path(explicit) if explicit else REPO_ROOT / os.environ.get("PARITY_BUILD_DIR", "build") / "parity"
    if not path.is_file() or not os.access(path, os.X_OK):
        how = "PARITY_BIN" if explicit else "scripts/setup.sh (or set PARITY_BIN)"
        raise ParityError(f"the parity binary {path} is missing or not executable: build it with {how}")
    return path


def scenarios_module(name: str):
    """Imports `scenarios.<name>` from this repository (capture shares its code with the matrix)."""
    if not (REPO_ROOT / "scenarios" / "capture.py").is_file():
        raise ParityError(f"{REPO_ROOT} has no scenarios/capture.py: the parity package must stay inside its repository")
    if str(REPO_ROOT) not in sys.path:
        sys.path.append(str(REPO_ROOT))
    module = importlib.import_module(f"scenarios.{name}")
    if not Path(module.__file__).resolve().is_relative_to(REPO_ROOT):
        raise ParityError(f"'scenarios' resolves to {module.__file__}, not to {REPO_ROOT / 'scenarios'}")
    return module
