"""PARITY_REFRT_ISA from the outside: `parity ops` names the level in use, a misspelt cap is a usage error
(exit 2) naming the levels, and a cap above the CPU's level makes `parity conformance` report "not tested"
(exit 5) instead of passing on the lower path. The CPU's own level is read from /proc/cpuinfo here, an
oracle independent of refrt's CPUID reading."""
import os
import re
import subprocess

import pytest
from conftest import PARITY

LEVELS = ["scalar", "avx2", "avx512", "avx512_vnni", "avx512_bf16", "amx"]


def _cpuinfo_level():
    flags = set()
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
    need = [{"avx2", "fma"}, {"avx512f", "avx512bw", "avx512vl", "avx512dq"}, {"avx512_vnni"}, {"avx512_bf16"},
            {"amx_tile", "amx_int8", "amx_bf16"}]
    level = 0
    while level < len(need) and need[level] <= flags:
        level += 1
    return LEVELS[level]


def _run(*args, cap=None):
    env = dict(os.environ)
    env.pop("PARITY_REFRT_ISA", None)
    if cap is not None:
        env["PARITY_REFRT_ISA"] = cap
    return subprocess.run([str(PARITY), *args], capture_output=True, text=True, env=env, timeout=300)


def test_ops_reports_the_cpus_level_by_default():
    cpu = _cpuinfo_level()
    if cpu == "amx":
        pytest.skip("AMX also needs the kernel's tile-state grant, which /proc/cpuinfo does not show")
    proc = _run("ops")
    assert proc.returncode == 0, proc.stderr
    assert f"ISA level: {cpu} (CPU: {cpu})" in proc.stdout


@pytest.mark.parametrize("cap", ["scalar", "avx2"])
def test_a_cap_at_or_below_the_cpu_is_the_level_in_use(cap):
    cpu = _cpuinfo_level()
    if LEVELS.index(cap) > LEVELS.index(cpu):
        pytest.skip(f"this CPU's level is {cpu}")
    proc = _run("ops", cap=cap)
    assert proc.returncode == 0, proc.stderr
    assert re.search(rf"^ISA level: {cap} \(CPU: ", proc.stdout, re.M), proc.stdout


def test_a_misspelt_cap_is_a_usage_error():
    proc = _run("ops", cap="avx3")
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "PARITY_REFRT_ISA='avx3' is not an ISA level" in proc.stderr and "avx512_vnni" in proc.stderr


def test_a_cap_above_the_cpu_is_not_tested_not_passed():
    cpu = _cpuinfo_level()
    if cpu == "amx":
        pytest.skip("no level above amx")
    above = LEVELS[LEVELS.index(cpu) + 1]
    proc = _run("conformance", "--filter", "test_relu$", cap=above)
    assert proc.returncode == 5, (proc.stdout, proc.stderr)
    assert "NOT TESTED" in proc.stdout and f"above this CPU's level ({cpu})" in proc.stdout
    ops = _run("ops", cap=above)
    assert ops.returncode == 0 and f"ISA level: {cpu}" in ops.stdout and "note: " in ops.stdout
