"""The case registry: a case is a module factory, several input sets and the dynamic shapes to export with."""
from __future__ import annotations

import copy
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
    # The file whose text decides capture's cache (default: make_module's file); set for suite-file cases.
    source: Optional[str] = None
    # Also run eager in float64 at capture and keep its floating outputs (test_data_set_<k>/fp64/): the
    # oracle of the fp64 rule (scenarios/fp64.py) for outputs that miss the fixed rule by float32 noise.
    # Cheap (4 s per mode over the 125 built-in cases, whose capture takes minutes); False turns it off.
    fp64_reference: bool = True
    # The CPU class whose predicates capture forces for this case (a key of scenarios/cpu_branches.BRANCHES):
    # the export and the eager reference then take that class's library branch on every host.
    cpu_branch: Optional[str] = None

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
        if self.source:
            return self.source
        try:
            return inspect.getsourcefile(self.make_module) or ""
        except TypeError:  # a builtin or C-implemented factory has no source file
            return ""


def _source_of(fn) -> Optional[str]:
    try:
        return inspect.getsourcefile(fn) or None
    except TypeError:  # a builtin or C-implemented callable has no source file
        return None


def case_from_function(fn: Callable[[], tuple], name: Optional[str] = None, source: Optional[str] = None) -> Case:
    """A Case from a zero-argument function returning (model, input_sets, dynamic_shapes): model an
    nn.Module (copied for each use) or a factory, input_sets a list of argument tuples (the first is
    torch.export's example). The function runs once, on first use, seeded by the case name."""
    name = name or fn.__name__
    built = {}

    def parts():
        if not built:
            with torch.random.fork_rng():
                torch.manual_seed(zlib.crc32(name.encode()))
                result = fn()
            if not (isinstance(result, tuple) and len(result) == 3):
                raise TypeError(f"{name} must return (model, input_sets, dynamic_shapes), got {type(result).__name__}")
            built["model"], built["sets"], built["shapes"] = result
        return built

    def make_module():
        model = parts()["model"]
        return copy.deepcopy(model) if isinstance(model, torch.nn.Module) else model()

    return Case(name=name, make_module=make_module, input_sets=lambda: [tuple(a) for a in parts()["sets"]],
                dynamic_shapes=lambda: parts()["shapes"], description=(fn.__doc__ or "").strip().split("\n")[0],
                source=source or _source_of(fn))


def register(case):
    """Registers a Case. As a decorator on a zero-argument function: registers the Case it returns, or,
    when it returns (model, input_sets, dynamic_shapes), a case named after the function."""
    if not isinstance(case, Case):
        fn = case
        with torch.random.fork_rng():
            torch.manual_seed(zlib.crc32(fn.__name__.encode()))
            result = fn()
        if isinstance(result, Case):
            case = result
        elif isinstance(result, tuple) and len(result) == 3:
            case = case_from_function(lambda: result, fn.__name__, _source_of(fn))
        else:
            raise TypeError(f"@register: {fn.__name__} must return a Case or (model, input_sets, dynamic_shapes)")
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
