"""The matrix's capture cache and the official exporter's record kept beside it (issue 47 item 4).

A case folder is captured again when the case's source, torch's version or torchao's version changes, and
reused otherwise; the official exporter's record (written by the capture worker, read by the peers phase) is
reused when the program and the official exporter's packages are the same, and refused otherwise. The
official record's verdicts are the peers phase's own: the same record as scenarios.peers computes from the
case folder in a fresh call."""
import json
import shutil
from pathlib import Path

import pytest

from scenarios import capture, peers, suite

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "examples" / "suite" / "gated_mlp.py"


def the_case(file: Path):
    (case,) = suite.load_file(file)
    return case


@pytest.fixture
def suite_copy(tmp_path):
    """A temporary copy of a suite file: its source can change without touching the repository."""
    file = tmp_path / "suite" / "gated_mlp_copy.py"
    file.parent.mkdir()
    shutil.copy(SUITE, file)
    return file


def capture_status(case, out) -> str:
    return capture.capture_case(case, "nonstrict", out)["status"]


def test_cache_keys_on_source_torch_and_torchao(tmp_path, suite_copy, monkeypatch):
    out = tmp_path / "cases"
    case = the_case(suite_copy)
    assert capture_status(case, out) == "captured"
    assert capture_status(case, out) == "cached"
    key = capture.cache_key(case)
    assert set(key) == {"source", "torch", "torchao"} and key["torchao"], key

    # The case's source changes (a comment is enough: the file is the key): captured again, then cached.
    suite_copy.write_text(suite_copy.read_text() + "\n# changed\n")
    suite._LOADED.clear()
    case = the_case(suite_copy)
    assert capture.cache_key(case)["source"] != key["source"]
    assert capture_status(case, out) == "captured"
    assert capture_status(case, out) == "cached"

    # Another torchao: captured again (its quantize_ / PT2E code writes the quantized programs).
    real_version = capture._version
    monkeypatch.setattr(capture, "_version", lambda name: "0.0.1" if name == "torchao" else real_version(name))
    assert capture_status(case, out) == "captured"
    assert capture_status(case, out) == "cached"

    # Another torch: captured again.
    monkeypatch.setattr(capture.torch, "__version__", "9.9.9")
    assert capture_status(case, out) == "captured"
    info = json.loads((out / case.name / "nonstrict" / "case.json").read_text())
    assert info["source_hash"] == capture.source_hash(case)


def official_line(case_dir: Path) -> dict:
    return peers.peers_of(case_dir, case_dir / "none.onnx", case_dir.parent / "peers_out", official=True)["official"]


def test_official_record_cached_with_the_case(tmp_path, suite_copy, monkeypatch):
    case = the_case(suite_copy)
    line = capture.capture_case(case, "nonstrict", tmp_path / "cases")
    case_dir = Path(line["dir"])
    how, record = peers.official_into_case(case_dir)
    assert how == "ran" and record["export"] == "ok" and record["ort"]["status"] == "pass", record
    assert Path(record["onnx"]) == case_dir / "official" / "official.onnx"
    assert peers.official_into_case(case_dir)[0] == "cached"

    # The peers phase takes the record from the case folder; the same verdicts as a fresh official run.
    fresh = peers.run_official(case_dir, tmp_path / "fresh.onnx")
    from_case = official_line(case_dir)
    assert from_case["onnx"] == str(case_dir / "official" / "official.onnx")
    for key in ("export", "error", "nodes"):
        assert from_case[key] == fresh[key]
    assert from_case["ort"]["status"] == fresh["ort"]["status"]

    # Another onnxscript (the official exporter's code): the record is refused and run again.
    real_key = peers.official_key
    monkeypatch.setattr(peers, "official_key", lambda d: {**real_key(d), "onnxscript": "0.0.1"})
    assert peers.cached_official(case_dir) is None
    assert peers.official_into_case(case_dir)[0] == "ran"
    monkeypatch.setattr(peers, "official_key", real_key)
    assert peers.cached_official(case_dir) is None  # the record now holds the other key

    # A capture again (its program changed) removes the record with the rest of the case folder.
    assert peers.official_into_case(case_dir)[0] == "ran"
    capture.capture_case(case, "nonstrict", tmp_path / "cases", force=True)
    assert not (case_dir / "official").exists()


def test_official_modes_follow_the_matrix_rule():
    def line(mode, status="captured"):
        return {"mode": mode, "status": status}
    lines = [line("strict"), line("nonstrict"), line("decomposed")]
    assert [r["mode"] for r in capture.official_modes(lines, "one")] == ["nonstrict"]
    assert [r["mode"] for r in capture.official_modes(lines, "all")] == ["strict", "nonstrict", "decomposed"]
    assert capture.official_modes(lines, "none") == []
    failed = [line("strict"), line("nonstrict", "capture_failed"), line("decomposed", "cached")]
    assert [r["mode"] for r in capture.official_modes(failed, "one")] == ["strict"]
    assert [r["mode"] for r in capture.official_modes([line("decomposed", "cached")], "one")] == ["decomposed"]
    assert capture.official_modes([line("strict", "capture_failed")], "one") == []


def _verify_lines(out: Path, *extra: str, env=None) -> dict:
    """Runs the matrix on one case in one mode; returns {pair: its result line}."""
    import os
    import subprocess
    cmd = [str(ROOT / "build" / "parity"), "matrix", "--filter", "^op_gather$", "--modes", "nonstrict",
           "--no-peers", "--out", str(out), *extra]
    run = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    return {line.split()[1]: line for line in run.stdout.splitlines() if line.startswith("[1/1]")}


def test_verify_result_is_reused_until_an_input_changes(tmp_path):
    """The second run reuses the stored verify result; a changed case file, a steering environment variable or
    --reverify verify again, and the verdict is the child's own each time."""
    out = tmp_path / "m"
    first = _verify_lines(out)["op_gather/nonstrict"]
    assert "pass" in first and "cached" not in first, first
    assert "cached" in _verify_lines(out)["op_gather/nonstrict"]
    assert "cached" not in _verify_lines(out, "--reverify")["op_gather/nonstrict"]
    assert "cached" in _verify_lines(out)["op_gather/nonstrict"]
    assert "cached" not in _verify_lines(out, env={"PARITY_REFRT_THREADS": "1"})["op_gather/nonstrict"]
    case_json = out / "cases" / "op_gather" / "nonstrict" / "case.json"
    case_json.write_text(case_json.read_text() + " ")  # same content, new stamp: the key is the file's size
    again = _verify_lines(out)["op_gather/nonstrict"]
    assert "cached" not in again and "pass" in again, again
