"""What parity.capture / verify / profile return: plain data read from the files the binary wrote."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Optional


@dataclasses.dataclass
class CapturedCase:
    case: str
    mode: str
    status: str  # captured | capture_failed
    dir: Path    # the case folder (case.json, model.pt2, test_data_set_<k>/)
    error: Optional[str] = None
    # ATen ops Parity cannot translate yet, re-decomposed with torch's own decompositions at capture.
    decomposed_ops: list = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class OutputCheck:
    """One output of one input set: refrt and libtorch, each against the eager output."""
    input_set: str
    index: int
    name: str
    dtype: str
    shape: list
    passed: bool
    refrt_max_abs_error: Optional[float]
    libtorch_max_abs_error: Optional[float]
    ties: int = 0  # index outputs whose differing indices select equal values (counted as passing)


def _number(v):
    if isinstance(v, str):  # report.json spells non-finite errors "Infinity" / "NaN"
        return float("inf") if v == "Infinity" else float("nan")
    return v


def _outputs(entry: dict) -> list[OutputCheck]:
    checks = []
    for s in entry.get("input_sets", []):
        for o in s.get("outputs", []):
            refrt = o.get("refrt_vs_eager") or o.get("refrt_vs_libtorch") or {}
            torch_side = o.get("libtorch_vs_eager") or {}
            passed = bool(refrt.get("passed")) and torch_side.get("passed", True)
            checks.append(OutputCheck(s.get("name", ""), o.get("index", 0), o.get("name", ""), o.get("dtype", ""),
                                      o.get("shape", []), passed, _number(refrt.get("max_abs_error")),
                                      _number(torch_side.get("max_abs_error")), refrt.get("ties", 0)))
    return checks


@dataclasses.dataclass
class VerifyResult:
    case: str
    mode: str
    status: str  # pass | fail | error | capture_failed (report.json's statuses), or crashed (no report)
    stage: Optional[str]
    error: Optional[str]
    max_abs_error: Optional[float]
    max_rel_error: Optional[float]
    outputs: list  # OutputCheck per input set and output
    first_divergence: Optional[dict]  # {fx_node, op, onnx_node, onnx_op, source, max_abs_error, ...}
    report_json: Path
    report_md: Path
    report_html: Optional[Path]  # None when the report was written without it
    onnx: Optional[Path]
    case_dir: Path
    entry: dict  # the full report.json case entry
    # ATen ops without a Parity translation, re-decomposed with torch's decompositions before export.
    decomposed_ops: list = dataclasses.field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    def __bool__(self) -> bool:
        return self.passed

    @classmethod
    def from_entry(cls, entry: dict, report_dir: Path, case_dir: Path) -> "VerifyResult":
        html = report_dir / "report.html"
        return cls(case=entry.get("case", ""), mode=entry.get("mode", ""), status=entry.get("status", "error"),
                   stage=entry.get("stage"), error=entry.get("error"),
                   max_abs_error=_number(entry.get("max_abs_error")), max_rel_error=_number(entry.get("max_rel_error")),
                   outputs=_outputs(entry), first_divergence=entry.get("first_divergence"),
                   report_json=report_dir / "report.json", report_md=report_dir / "report.md",
                   report_html=html if html.is_file() else None,
                   onnx=Path(entry["onnx"]) if entry.get("onnx") else None, case_dir=Path(case_dir), entry=entry)

    def __repr__(self) -> str:
        lines = [f"parity.verify {self.case}/{self.mode}: {self.status.upper()}"
                 + (f" ({self.stage}: {self.error})" if self.error else "")]
        if self.outputs:
            rows = [("input set", "output", "dtype", "shape", "refrt max abs", "libtorch max abs", "ok")]
            for o in self.outputs:
                ok = ("yes" if o.passed else "NO") + (f" ({o.ties} ties)" if o.ties else "")
                rows.append((o.input_set, f"{o.index} {o.name}", o.dtype, "x".join(map(str, o.shape)) or "scalar",
                             _fmt(o.refrt_max_abs_error), _fmt(o.libtorch_max_abs_error), ok))
            widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
            lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
        d = self.first_divergence
        if d:
            lines.append(f"  first divergence: {d.get('fx_node')} ({d.get('op')} -> ONNX {d.get('onnx_op')}) "
                         f"at {d.get('source')}")
        if self.decomposed_ops:
            lines.append(f"  re-decomposed by torch (no Parity translation yet): {', '.join(self.decomposed_ops)}")
        for s in self.entry.get("input_sets", []):  # what the libtorch reference ran past (report.md's notes)
            lines += [f"  reference note, {s.get('name')}: {note}" for note in s.get("reference_notes", [])]
        lines.append(f"  report: {self.report_md}")
        return "\n".join(lines)


def _fmt(v) -> str:
    return "" if v is None else f"{v:.3g}"


@dataclasses.dataclass
class ProfileResult:
    summary: dict  # summary.json of `parity profile`
    mean_run_ms: float
    by_op_type: list  # rows {op_type, count, ms_per_run, share, ...}, slowest first
    summary_json: Path
    summary_md: Path
    trace: Path  # Chrome trace (ONNX Runtime's profiler schema)
    onnx: Path

    @classmethod
    def from_dir(cls, profile_dir: Path, onnx_path: Path) -> "ProfileResult":
        summary = json.loads((profile_dir / "summary.json").read_text())
        return cls(
            summary=summary,
            mean_run_ms=summary.get("mean_run_ms", 0.0),
            by_op_type=summary.get("by_op_type", []),
            summary_json=profile_dir / "summary.json",
            summary_md=profile_dir / "summary.md",
            trace=profile_dir / "trace.json",
            onnx=Path(onnx_path),
        )

    def __repr__(self) -> str:
        lines = [f"parity.profile {self.onnx}: {self.mean_run_ms:.3f} ms/run over {self.summary.get('runs')} runs"]
        for row in self.by_op_type[:10]:
            fields = {k: v for k, v in row.items() if k != "op_type"}
            lines.append(f"  {row.get('op_type', ''):<24} " + "  ".join(
                f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}" for k, v in fields.items()))
        lines.append(f"  summary: {self.summary_md}, trace: {self.trace}")
        return "\n".join(lines)
