"""Which cases a capture run takes: the built-in scenarios, a user's own suite files, or both; and the
shard of a run spread over several machines (`parity matrix --shard K/N`).

A suite file is plain Python. Its cases are the `Case` objects it registers (`register(Case(...))`, or
`@register` on a function returning a Case) or leaves at module level; `FILE.py:NAME` picks one of them by
case name or variable name, or calls a function NAME that returns `(model, input_sets, dynamic_shapes)`
(model: an nn.Module or a zero-argument factory; input_sets: a list of argument tuples, the first one
given to torch.export). A folder stands for its *.py files (not those starting with "_"), sorted.
"""
from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path
from typing import Iterable, Optional

from . import registry
from .registry import Case


class SuiteError(Exception):
    """A suite file that cannot be loaded, or a name it does not define: the message names the file."""


def suite_files(path) -> list[Path]:
    p = Path(path)
    if p.is_dir():
        files = sorted(f for f in p.glob("*.py") if not f.name.startswith("_"))
        if not files:
            raise SuiteError(f"{p}: no *.py suite files in this folder")
        return files
    if not p.is_file():
        raise SuiteError(f"{p}: no such suite file or folder")
    return [p]


_LOADED: dict[Path, tuple[object, dict[str, Case]]] = {}


def _import(file: Path):
    """Executes a suite file once as its own module (its folder importable while it loads, for sibling
    helpers); returns the module and the cases it registered. Those leave the global registry again: they
    belong to this suite, not to the built-in matrix."""
    key = file.resolve()
    if key in _LOADED:
        return _LOADED[key]
    name = f"parity_suite_{file.stem}_{hashlib.sha1(str(key).encode()).hexdigest()[:8]}"
    spec = importlib.util.spec_from_file_location(name, file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    saved = dict(registry._CASES)
    registry._CASES.clear()  # a suite may reuse a built-in case's name; it runs instead of it
    sys.path.insert(0, str(key.parent))
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        del sys.modules[name]
        raise SuiteError(f"{file}: {type(e).__name__}: {e}") from e
    finally:
        sys.path.remove(str(key.parent))
        registered = dict(registry._CASES)
        registry._CASES.clear()
        registry._CASES.update(saved)
        # Built-in cases are imported only when asked for (the model zoo is slow to import); a suite that
        # imports them itself hands them back to the built-in registry.
        builtin_dir = Path(registry.__file__).resolve().parent / "cases"
        for n, c in list(registered.items()):
            if Path(c.source_file() or file).resolve().is_relative_to(builtin_dir):
                registry._CASES[n] = registered.pop(n)
    _LOADED[key] = module, registered
    return _LOADED[key]


def _with_source(case: Case, file: Path) -> Case:
    """Capture caches by the hash of the case's source file; a suite case's source is its suite file."""
    if not case.source_file() or Path(case.source_file()).resolve() == Path(registry.__file__).resolve():
        case.source = str(file)
    return case


def load_file(file: Path, pick: Optional[str] = None) -> list[Case]:
    """The cases `file` defines (registered while it loads, or left at module level), or the one `pick` names."""
    module, registered = _import(file)
    cases = dict(registered)
    for value in vars(module).values():
        if isinstance(value, Case) and value.name not in cases:
            cases[value.name] = value
    if pick is None:
        if not cases:
            raise SuiteError(f"{file}: defines no Case (register(Case(...)) or a module-level Case), "
                             f"and no FILE.py:NAME picks a function")
        return [_with_source(c, file) for c in cases.values()]
    if pick in cases:
        return [_with_source(cases[pick], file)]
    value = getattr(module, pick, None)
    if isinstance(value, Case):
        return [_with_source(value, file)]
    if callable(value):
        return [registry.case_from_function(value, pick, str(file))]
    known = sorted(set(cases) | {k for k, v in vars(module).items() if callable(v) and not k.startswith("_")
                                 and getattr(v, "__module__", None) == module.__name__})
    raise SuiteError(f"{file}: no case or function named {pick!r} (there are: {', '.join(known) or 'none'})")


def split_pick(spec: str) -> tuple[str, Optional[str]]:
    """"suite.py:NAME" -> ("suite.py", "NAME"); a plain path has no pick."""
    head, sep, tail = spec.rpartition(":")
    if sep and head and tail and "/" not in tail and not Path(spec).exists():
        return head, tail
    return spec, None


def select_cases(suites: Iterable[str], builtin: bool) -> list[Case]:
    """The built-in scenarios (when `builtin`) and every case of the given suites, sorted by name."""
    chosen: dict[str, tuple[Case, str]] = {}
    if builtin:
        try:
            builtin_cases = registry.all_cases()
        except ModuleNotFoundError as e:
            # The model zoo and other families build transformers (or torchao) models: an installed parity has
            # them only with its `matrix` extra. User suites (--scenarios) and parity.verify need neither.
            raise SuiteError(f"the built-in scenarios need the Python package {e.name!r}, which is not installed "
                             "(pip install 'parity[matrix]', or requirements.txt in a checkout); "
                             "--scenarios runs suites of your own without them") from e
        for c in builtin_cases:
            chosen[c.name] = (c, "the built-in scenarios")
    for spec in suites:
        path, pick = split_pick(spec)
        for file in suite_files(path):
            for c in load_file(file, pick):
                if c.name in chosen and chosen[c.name][0] is not c:
                    raise SuiteError(f"{file}: case name {c.name!r} is also defined by {chosen[c.name][1]}")
                chosen[c.name] = (c, str(file))
    return [chosen[n][0] for n in sorted(chosen)]


def parse_shard(text: Optional[str]) -> Optional[tuple[int, int]]:
    if not text:
        return None
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise SuiteError(f"--shard takes K/N with 1 <= K <= N, got {text!r}") from None
    if not 1 <= k <= n:
        raise SuiteError(f"--shard takes K/N with 1 <= K <= N, got {text!r}")
    return k, n


def pairs(cases: list[Case], modes: list[str], shard: Optional[tuple[int, int]] = None) -> list[tuple[Case, str]]:
    """(case, mode) in run order; with a shard K/N, the pairs i with i % N == K - 1 (round robin)."""
    every = [(c, m) for c in cases for m in modes]
    if shard is None:
        return every
    k, n = shard
    return [p for i, p in enumerate(every) if i % n == k - 1]
