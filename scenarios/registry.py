"""The case registry: a case is a module factory, several input sets and the dynamic shapes to export with."""
from __future__ import annotations

import dataclasses
import inspect
import zlib
from typing import Any, Callable, Optional

import torch

_CASES: dict[str, "Case"] = {}


@dataclasses.dataclass
class Case:
    name: str
    make_module: Callable[[], torch.nn.Module]
    # Each entry is the tuple of positional args. Set 0 is the example given to torch.export; every other
    # set uses different sizes (>= 2) for each dynamic dim, so a program specialised to set 0 is caught.
    input_sets: Callable[[], list[tuple]]
    # The object given to torch.export.export (or a callable returning it), built from torch.export.Dim.
    dynamic_shapes: Any = None
    description: str = ""
    # Optional keyword args, one dict per input set.
    kwargs_sets: Optional[Callable[[], list[dict]]] = None
    # Shared libraries a case with custom ops needs, as absolute paths (recorded in case.json): TORCH_LIBRARY
    # libraries the libtorch reference must load, and exporter translation plugins (`parity export --plugin`).
    torch_libraries: Optional[Callable[[], list[str]]] = None
    export_plugins: Optional[Callable[[], list[str]]] = None

    @property
    def seed(self) -> int:
        return zlib.crc32(self.name.encode())

    def module(self) -> torch.nn.Module:
        """A fresh module whose random weights depend only on the case name."""
        torch.manual_seed(self.seed)
        return self.make_module().eval()

    def examples(self) -> list[tuple[tuple, dict]]:
        """(args, kwargs) per input set, deterministic. Args and kwargs come from one seeded stream, so a
        kwarg tensor never repeats an arg tensor's values."""
        torch.manual_seed(self.seed)
        args_sets = [tuple(a) for a in self.input_sets()]
        kwargs_sets = self.kwargs_sets() if self.kwargs_sets else [{} for _ in args_sets]
        if len(kwargs_sets) != len(args_sets):
            raise ValueError(f"{self.name}: {len(args_sets)} input sets but {len(kwargs_sets)} kwargs sets")
        return list(zip(args_sets, kwargs_sets))

    def shapes(self) -> Any:
        return self.dynamic_shapes() if callable(self.dynamic_shapes) else self.dynamic_shapes

    def source_file(self) -> str:
        try:
            return inspect.getsourcefile(self.make_module) or ""
        except TypeError:  # a builtin or C-implemented factory has no source file
            return ""


def register(case):
    """Registers a Case; as a decorator, registers the Case returned by the decorated zero-arg function."""
    if not isinstance(case, Case):
        case = case()
    if case.name in _CASES:
        raise ValueError(f"duplicate scenario name {case.name!r}")
    _CASES[case.name] = case
    return case


def all_cases() -> list[Case]:
    from . import cases  # noqa: F401  (importing registers every case)

    return [_CASES[n] for n in sorted(_CASES)]


def get_case(name: str) -> Case:
    all_cases()
    try:
        return _CASES[name]
    except KeyError:
        raise KeyError(f"no scenario named {name!r} (known: {', '.join(sorted(_CASES))})") from None
