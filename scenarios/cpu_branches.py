"""CPU predicates forced at capture, so that every host captures the same programs (docs/cpu-branches.md).

Libraries choose code by the CPU while torch.export traces them, so the program depends on the host that
captured it. torchao 0.18's int_scaled_matmul (torchao/kernel/intmm.py, _int_scaled_matmul_cpu) is one:
on a CPU with VNNI and without AMX (and torch >= 2.12) it shifts the int8 activations to uint8 (+128),
calls _int_mm(uint8, int8) and subtracts 128 * colsum(W) ("u8s8"); elsewhere (no VNNI, or AMX) it calls
_int_mm(int8, int8) ("s8s8"). A Case declares `cpu_branch=<name>` and scenarios/capture.py runs the export
and the eager reference of that case inside `forced(name)`, whatever CPU runs the capture.

What is patched: torch.cpu.get_capabilities (torch.cpu._is_vnni_supported, _is_amx_tile_supported, ... read
it; in torch 2.13 "VNNI" is avx512_vnni only, so an AVX-VNNI-only CPU counts as no VNNI), and torchao's
predicates where torchao.utils defines them and where intmm.py looks them up: intmm imported them by name
(`from torchao.utils import _cpu_is_vnni_supported, ...`), so patching torchao.utils alone would not reach it.
"""
from __future__ import annotations

import contextlib
import importlib
import types

# Name -> the capabilities of one CPU class (keys of torch.cpu.get_capabilities(); the host's other keys stay).
# Programs: torchao_amx and torchao_no_vnni capture s8s8 (tests/python/test_cpu_branches.py proves the two
# programs equal), torchao_vnni captures u8s8.
_NO_AMX = {"amx_tile": False, "amx_int8": False, "amx_bf16": False, "amx_fp16": False}
BRANCHES: dict[str, dict[str, bool]] = {
    # Sapphire / Emerald / Granite Rapids Xeons: s8s8
    "torchao_amx": {"avx512_vnni": True, "amx_tile": True, "amx_int8": True, "amx_bf16": True},
    # Zen 4/5, Ice Lake and Cascade Lake servers: u8s8
    "torchao_vnni": {"avx512_vnni": True, **_NO_AMX},
    # AVX2 (Zen 3, Haswell) or AVX-512 without VNNI (Skylake-X): s8s8
    "torchao_no_vnni": {"avx512_vnni": False, "avx_vnni": False, **_NO_AMX},
}

# torchao's own predicates, (module, attribute) -> the capability each answers from. A module that no longer
# has the attribute fails loudly: a torchao that renamed its predicate would otherwise capture the host's
# branch in silence.
_TORCHAO = {("torchao.kernel.intmm", "_cpu_is_vnni_supported"): "avx512_vnni",
            ("torchao.kernel.intmm", "_cpu_is_amx_tile_supported"): "amx_tile",
            ("torchao.utils", "_cpu_is_vnni_supported"): "avx512_vnni",
            ("torchao.utils", "_cpu_is_amx_tile_supported"): "amx_tile"}


@contextlib.contextmanager
def capabilities(values: dict[str, bool]):
    """Inside: torch.cpu.get_capabilities() is the host's with `values` over it, and torchao's predicates
    answer from the same map."""
    import torch
    caps = dict(torch.cpu.get_capabilities())
    caps.update(values)
    frozen = types.MappingProxyType(caps)
    saved = []
    try:
        saved.append((torch.cpu, "get_capabilities", torch.cpu.get_capabilities))
        torch.cpu.get_capabilities = lambda: frozen
        for (module_name, attr), key in _TORCHAO.items():
            module = importlib.import_module(module_name)
            if not hasattr(module, attr):
                raise RuntimeError(f"{module_name}.{attr} is gone: scenarios/cpu_branches.py cannot force torchao's "
                                   "CPU branch (a new torchao? update _TORCHAO and docs/cpu-branches.md)")
            saved.append((module, attr, getattr(module, attr)))
            setattr(module, attr, lambda key=key: bool(frozen.get(key, False)))
        yield frozen
    finally:
        for module, attr, original in reversed(saved):
            setattr(module, attr, original)


@contextlib.contextmanager
def forced(branch: str | None):
    """Inside: the CPU predicates answer as the CPU class `branch` (a key of BRANCHES); None forces nothing."""
    if branch is None:
        yield None
        return
    if branch not in BRANCHES:
        raise KeyError(f"unknown CPU branch {branch!r} (scenarios/cpu_branches.py knows: {', '.join(BRANCHES)})")
    with capabilities(BRANCHES[branch]) as caps:
        yield caps
