"""CPU predicates forced at capture, so that every host captures the same programs (docs/cpu-branches.md).

Libraries choose code by the CPU while torch.export traces them, so the program depends on the host that
captured it. torchao 0.18's int_scaled_matmul (torchao/kernel/intmm.py, _int_scaled_matmul_cpu) is one:
on a CPU with VNNI and without AMX (and torch >= 2.12) it shifts the int8 activations to uint8 (+128),
calls _int_mm(uint8, int8) and subtracts 128 * colsum(W) ("u8s8"); elsewhere (no VNNI, or AMX) it calls
_int_mm(int8, int8) ("s8s8"). A Case declares `cpu_branch=<name>` and scenarios/capture.py runs the export
and the eager reference of that case inside `forced(name)`, whatever CPU runs the capture.

intmm.py imported the predicates by name (`from torchao.utils import _cpu_is_vnni_supported, ...`), so they
are patched where it looks them up (torchao.kernel.intmm) and where torchao.utils keeps them; torch's own
(torch.cpu._is_vnni_supported, _is_amx_tile_supported) get the same values, for code that asks torch directly.
"""
from __future__ import annotations

import contextlib
import importlib

# Name -> the predicate values of one CPU class. Programs: torchao_amx and torchao_no_vnni capture s8s8
# (tests/python/test_cpu_branches.py proves the two programs equal), torchao_vnni captures u8s8.
BRANCHES: dict[str, dict[str, bool]] = {
    "torchao_amx": {"vnni": True, "amx_tile": True},        # Sapphire Rapids and later Xeons: s8s8
    "torchao_vnni": {"vnni": True, "amx_tile": False},      # Zen 4/5, Ice/Cascade Lake: u8s8
    "torchao_no_vnni": {"vnni": False, "amx_tile": False},  # AVX2 only (Zen 3, Haswell): s8s8
}

# Where each predicate is looked up: (module, attribute). A module that no longer has the attribute fails
# loudly: a torchao that renamed its predicate would otherwise capture the host's branch in silence.
# (torch 2.13's torch.cpu._is_vnni_supported reads get_capabilities()["avx512_vnni"]: AVX-VNNI alone, as on
# Alder Lake, counts as no VNNI; torch._C._cpu has no such predicate in 2.13, torchao.utils falls back to torch.cpu.)
_LOOKUPS = {
    "vnni": [("torchao.kernel.intmm", "_cpu_is_vnni_supported"), ("torchao.utils", "_cpu_is_vnni_supported"),
             ("torch.cpu", "_is_vnni_supported")],
    "amx_tile": [("torchao.kernel.intmm", "_cpu_is_amx_tile_supported"),
                 ("torchao.utils", "_cpu_is_amx_tile_supported"), ("torch.cpu", "_is_amx_tile_supported")],
}


@contextlib.contextmanager
def forced(branch: str | None):
    """Inside: the predicates answer as the CPU class `branch` (a key of BRANCHES); None forces nothing."""
    if branch is None:
        yield
        return
    if branch not in BRANCHES:
        raise KeyError(f"unknown CPU branch {branch!r} (scenarios/cpu_branches.py knows: {', '.join(BRANCHES)})")
    saved = []
    try:
        for predicate, value in BRANCHES[branch].items():
            for module_name, attr in _LOOKUPS[predicate]:
                module = importlib.import_module(module_name)
                if not hasattr(module, attr):
                    raise RuntimeError(f"{module_name}.{attr} is gone: scenarios/cpu_branches.py cannot force the "
                                       f"{branch} branch (a new torch/torchao? update _LOOKUPS)")
                saved.append((module, attr, getattr(module, attr)))
                setattr(module, attr, lambda value=value: value)
        yield
    finally:
        for module, attr, original in reversed(saved):
            setattr(module, attr, original)
