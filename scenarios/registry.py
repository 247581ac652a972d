"""The case registry: a case is a module factory, several input sets and the dynamic shapes to export with."""
from __future__ import annotations

import dataclasses
import inspect
import zlib
from typing import Any, Callable

import torch

_CASES: dict[str, "Case"] = {}


@dataclasses.dataclass
class Case:
    name: str
    make_module: Callable[[], torch.nn.Module]
    # Each entry is the tuple of positional args. Set 0 is the example given to torch.export; the
    # others use different sizes for every dynamic dim, so that the exported program proves them.
    input_sets: Callable[[], list[tuple]]
    dynamic_shapes: Callable[[], Any]
    description: str = ""

    @property
    def seed(self) -> int:
        return zlib.crc32(self.name.encode())

    def module(self) -> torch.nn.Module:
        torch.manual_seed(self.seed)
        return self.make_module().eval()

    def inputs(self) -> list[tuple]:
        torch.manual_seed(self.seed + 1)
        return self.input_sets()

    def source_file(self) -> str:
        return inspect.getsourcefile(self.make_module) or ""


def register(case: Case) -> Case:
    if case.name in _CASES:
        raise ValueError(f"duplicate scenario name {case.name!r}")
    _CASES[case.name] = case
    return case


def all_cases() -> list[Case]:
    from . import cases  # noqa: F401  (importing registers every case)

    return [_CASES[n] for n in sorted(_CASES)]


def get_case(name: str) -> Case:
    all_cases()
    return _CASES[name]
