"""Where the `parity` binary and the scenario library are, seen from this package.

Two layouts:
- installed (`pip install <checkout>`, pyproject.toml): the binary and its libraries in parity/_native/,
  the scenario library inside this package as `parity.scenarios` (never a top-level `scenarios`, which a
  user's own folder of that name would shadow);
- a checkout (scripts/setup.sh puts <repo>/python on sys.path): the package at <repo>/python/parity, the
  scenarios at <repo>/scenarios, the binary at <repo>/$PARITY_BUILD_DIR/parity (build/ by default).
SOURCE_DIR is the folder that holds scenarios/: the installed package's own folder, or the repository.
PARITY_BIN, PARITY_SOURCE_DIR and PARITY_BUILD_DIR (which the binary reads too) override either."""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
NATIVE_DIR = _PACKAGE / "_native"
INSTALLED = (NATIVE_DIR / "parity").is_file()
_DEFAULT_ROOT = _PACKAGE if INSTALLED else _PACKAGE.parents[1]
SOURCE_DIR = Path(os.environ.get("PARITY_SOURCE_DIR") or _DEFAULT_ROOT).resolve()


class ParityError(RuntimeError):
    """Parity itself could not run (binary missing, unreadable case, bad option): not a verdict on the model."""


def parity_bin() -> Path:
    """PARITY_BIN when set, else the installed binary, else <repo>/$PARITY_BUILD_DIR/parity (build/ by default)."""
    explicit = os.environ.get("PARITY_BIN")
    if explicit:
        path = Path(explicit)
    elif INSTALLED and "PARITY_BUILD_DIR" not in os.environ:
        path = NATIVE_DIR / "parity"
    else:
        path = SOURCE_DIR / os.environ.get("PARITY_BUILD_DIR", "build") / "parity"
    if not path.is_file() or not os.access(path, os.X_OK):
        how = "PARITY_BIN" if explicit else "scripts/setup.sh (or set PARITY_BIN)"
        raise ParityError(f"the parity binary {path} is missing or not executable: build it with {how}")
    return path


def binary_env() -> dict[str, str]:
    """The environment the binary runs in. A checkout's binary knows its tree and venv (compiled in); an
    installed one is told: this interpreter, the folder holding scenarios/, itself, and where the venv's
    libtorch is (its RPATH covers torch in the same site-packages only). Variables already set win."""
    env = dict(os.environ)
    if not INSTALLED:
        return env
    binary = str(parity_bin())
    for name, value in (("PARITY_PYTHON", sys.executable), ("PARITY_SOURCE_DIR", str(SOURCE_DIR)),
                        ("PARITY_BIN", binary), ("PARITY_BUILD_DIR", str(Path(binary).parent))):
        env.setdefault(name, value)
    torch = importlib.util.find_spec("torch")
    if torch and torch.submodule_search_locations:
        torch_lib = str(Path(list(torch.submodule_search_locations)[0]) / "lib")
        env["LD_LIBRARY_PATH"] = os.pathsep.join(p for p in (torch_lib, env.get("LD_LIBRARY_PATH")) if p)
    return env


def scenarios_package(source_dir: Path = SOURCE_DIR) -> tuple[str, Path]:
    """The scenario library's module name and the sys.path entry it is imported from. A source_dir that is
    itself a package (the installed `parity`) holds it as a subpackage (`parity.scenarios`); a repository
    as the top-level `scenarios`. The binary applies the same rule (verify/src/capture.cc)."""
    if (source_dir / "__init__.py").is_file():
        return f"{source_dir.name}.scenarios", source_dir.parent
    return "scenarios", source_dir


def scenarios_module(name: str):
    """Imports `<scenarios package>.<name>` (capture shares its code with the matrix) from SOURCE_DIR."""
    if not (SOURCE_DIR / "scenarios" / "capture.py").is_file():
        raise ParityError(f"{SOURCE_DIR} has no scenarios/capture.py: the parity package is neither installed with "
                          "its scenarios nor inside its repository (or PARITY_SOURCE_DIR is wrong)")
    package, path_entry = scenarios_package()
    if str(path_entry) not in sys.path:
        sys.path.append(str(path_entry))
    module = importlib.import_module(f"{package}.{name}")
    if not Path(module.__file__).resolve().is_relative_to(SOURCE_DIR / "scenarios"):
        raise ParityError(f"'{package}' resolves to {module.__file__}, not to {SOURCE_DIR / 'scenarios'}")
    return module
