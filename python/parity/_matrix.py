"""parity.matrix: the scenario matrix (`parity matrix`) from Python, on this machine or on a Ray cluster.

    report = parity.matrix(cases=["op_topk", "model_bert"], modes=("strict", "nonstrict"), executor="ray",
                           out="out/matrix")
    report.summary            # {"total": ..., "pass": ..., "fail": ...}
    report.failed             # the (case, mode) entries that failed unexpectedly

The run is the `parity` binary's (captures, verify units, peers, report.json/md/html), so a report from Python
and one from the command line are the same file. Nothing here imports torch.
"""
from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Iterable, Optional

from ._paths import ParityError, binary_env, parity_bin

MODES = ("strict", "nonstrict", "decomposed")
EXECUTORS = ("local", "ray")
# Statuses that make a run fail (report.json "status"; xfail/xpass are judged by the known failures).
_UNEXPECTED = {"fail", "error", "capture_failed", "crashed", "timeout", "xpass"}


@dataclasses.dataclass
class MatrixReport:
    """A matrix run: its report.json (`report`), where it was written and how the command ended."""
    report: dict
    out: Path
    exit_code: int  # 0: no unexpected failure and no regression; 1 otherwise
    output: str = ""  # the command's progress lines and its phase times

    @property
    def cases(self) -> list[dict]:
        return self.report.get("cases", [])

    @property
    def summary(self) -> dict:
        return self.report.get("summary", {})

    @property
    def passed(self) -> bool:
        return self.exit_code == 0

    @property
    def failed(self) -> list[dict]:
        return [c for c in self.cases if c.get("status") in _UNEXPECTED]

    @property
    def phases(self) -> list[str]:
        """The "phase NAME SECONDS s DETAIL" lines the run printed (capture, verify, peers, report)."""
        return [line.strip() for line in self.output.splitlines() if line.strip().startswith("phase ")]

    def verdicts(self) -> dict[tuple[str, str], str]:
        """(case, mode) -> status, the verdicts to compare between two runs."""
        return {(c["case"], c["mode"]): c["status"] for c in self.cases}

    def __str__(self) -> str:
        s = self.summary
        head = f"{s.get('pass', 0)}/{s.get('total', 0)} passed"
        rest = [f"{s[k]} {k}" for k in ("fail", "error", "capture_failed", "crashed", "timeout", "xfail", "xpass")
                if s.get(k)]
        return ", ".join([head, *rest]) + f" ({self.out / 'report.md'})"


def _filter(cases: None | str | Iterable[str]) -> Optional[str]:
    """--filter from `cases`: a regular expression as it is, a list of names as an exact alternation."""
    if cases is None:
        return None
    if isinstance(cases, str):
        return cases
    names = list(cases)
    if not names or not all(isinstance(n, str) and n for n in names):
        raise ValueError("cases must be a regular expression or a non-empty list of case names")
    return "^(" + "|".join(re.escape(n) for n in names) + ")$"


def matrix(cases: None | str | Iterable[str] = None, modes: Iterable[str] = MODES, executor: str = "local",
           out: str | os.PathLike = "out/matrix", *, scenarios: Iterable[str | os.PathLike] = (),
           with_builtin: bool = False, jobs: Optional[int] = None, ray_address: Optional[str] = None,
           artifacts: Optional[str] = None, peers: bool = True, official: str = "one", shard: Optional[str] = None,
           baseline: Optional[str | os.PathLike] = None, junit: Optional[str | os.PathLike] = None,
           force_capture: bool = False, timeout: Optional[float] = None, echo: bool = False) -> MatrixReport:
    """Runs the scenario matrix and returns its report (also written to `out`: report.json, .md, .html).

    `cases`: None for every case, a regular expression on case names, or a list of names. `modes`: of strict,
    nonstrict, decomposed. `executor`: "local" (child processes on this machine, `jobs` at once, default the CPU
    count) or "ray" (Ray tasks; `ray_address` a cluster, else a Ray started here; needs `pip install
    'parity[ray]'`). `scenarios`: suite files or folders of your own instead of the built-in cases (plus them with
    `with_builtin`). `artifacts`: where case folders and results go (a folder, or an fsspec URL with --ray: see
    docs/cluster.md). The rest are `parity matrix`'s options of the same names. A case that fails is a result in
    the report, not an exception; ParityError when the run cannot start (a bad filter, Ray missing, ...).
    `echo` prints the command's progress lines as they come."""
    if executor not in EXECUTORS:
        raise ValueError(f"executor must be one of {', '.join(EXECUTORS)}, got {executor!r}")
    modes = (modes,) if isinstance(modes, str) else tuple(modes)
    bad = [m for m in modes if m not in MODES]
    if bad or not modes:
        raise ValueError(f"mode(s) {bad or '(none)'} not known: use {', '.join(MODES)}")
    if official not in ("one", "all"):
        raise ValueError(f"official must be 'one' or 'all', got {official!r}")
    out = Path(out)
    argv = [str(parity_bin()), "matrix", "--out", str(out), "--modes", ",".join(modes),
            "-j", str(jobs or os.cpu_count() or 1), "--official", official]
    pattern = _filter(cases)
    if pattern is not None:
        argv += ["--filter", pattern]
    for suite in scenarios:
        argv += ["--scenarios", str(suite)]
    if with_builtin:
        argv.append("--with-builtin")
    if executor == "ray":
        argv += ["--ray", *([ray_address] if ray_address else [])]
    for flag, value in (("--artifacts", artifacts), ("--shard", shard), ("--baseline", baseline),
                        ("--junit", junit), ("--timeout", timeout)):
        if value is not None:
            argv += [flag, str(value)]
    if not peers:
        argv.append("--no-peers")
    if force_capture:
        argv.append("--force-capture")
    (out / "report.json").unlink(missing_ok=True)
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=binary_env())
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if echo:
            sys.stdout.write(line)
            sys.stdout.flush()
    stderr = proc.stderr.read()
    code = proc.wait()
    report_json = out / "report.json"
    if code not in (0, 1) or not report_json.is_file():
        raise ParityError(f"{' '.join(argv)} exited {code}: {stderr.strip() or ''.join(lines[-5:]).strip()}")
    return MatrixReport(report=json.loads(report_json.read_text()), out=out, exit_code=code, output="".join(lines))


__all__ = ["matrix", "MatrixReport", "EXECUTORS"]
