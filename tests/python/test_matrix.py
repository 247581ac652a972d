"""parity matrix: --list, -j with progress (TTY and plain), known failures, capture_failed, a crashing
child, --baseline regressions, and reports that survive an interrupted run.

One output folder is shared by the runs of this module so that capture is cached after the first.
"""
import json
import os
import pty
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from test_end_to_end import PARITY, ROOT

EXTRA = Path(__file__).with_name("matrix_extra_scenarios.py")


def run_matrix(out, *args, env=None, tty=False, timeout=900, peers=False):
    argv = [str(PARITY), "matrix", "--out", str(out), *([] if peers else ["--no-peers"]), *map(str, args)]
    full_env = dict(os.environ, **(env or {}))
    if not tty:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=full_env)
    master, slave = pty.openpty()
    proc = subprocess.Popen(argv, stdout=slave, stderr=subprocess.PIPE, env=full_env)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=timeout)
    os.close(master)
    return subprocess.CompletedProcess(argv, proc.returncode, b"".join(chunks).decode(), proc.stderr.read().decode())


def report(out):
    return json.loads((Path(out) / "report.json").read_text())


def by_key(rep):
    return {(c["case"], c["mode"]): c for c in rep["cases"]}


@pytest.fixture(scope="module")
def shared_out(tmp_path_factory):
    return tmp_path_factory.mktemp("matrix")


def test_list_prints_the_scenarios():
    expected = subprocess.run([sys.executable, "-m", "scenarios", "list"], cwd=ROOT, capture_output=True, text=True,
                              env=dict(os.environ, PYTHONPATH=str(ROOT)), check=True).stdout.split()
    proc = subprocess.run([str(PARITY), "matrix", "--list"], capture_output=True, text=True, check=True)
    assert proc.stdout.split() == expected and len(expected) >= 3
    proc = subprocess.run([str(PARITY), "matrix", "--list", "--filter", "^mlp_"], capture_output=True, text=True,
                          check=True)
    assert proc.stdout.split() == [n for n in expected if n.startswith("mlp_")]


def test_parallel_run_with_progress_bar_on_a_terminal(shared_out):
    proc = run_matrix(shared_out, "--filter", "^linear_regression$", "--modes", "strict,nonstrict", "-j", "2",
                      "--known-failures", "/nonexistent/none.json", tty=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "\r\x1b[K" in proc.stdout and "ETA" in proc.stdout and "/2 " in proc.stdout  # the redrawn bar
    assert "[2/2]" in proc.stdout
    rep = report(shared_out)
    assert rep["schema_version"] == 2
    assert [(c["case"], c["mode"], c["status"]) for c in rep["cases"]] == [
        ("linear_regression", "strict", "pass"), ("linear_regression", "nonstrict", "pass")]
    (shared_out / "baseline.json").write_text(json.dumps(rep))


def test_crash_capture_failure_known_failures_and_baseline(shared_out):
    known = shared_out / "known.json"
    known.write_text(
        json.dumps([{"case": "linear_regression", "mode": "nonstrict", "reason": "test: listed but passes"}])
    )
    env = {"PARITY_EXTRA_SCENARIOS": str(EXTRA), "PARITY_TEST_ABORT": "linear_regression/strict"}
    proc = run_matrix(shared_out, "--filter", "^(linear_regression|refused_branch)$", "--modes", "strict,nonstrict",
                      "-j", "2", "--known-failures", known, "--baseline", shared_out / "baseline.json", env=env)
    # Off a terminal: plain lines, no escape codes, an ETA on each.
    assert "\x1b[" not in proc.stdout and "ETA" in proc.stdout
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the crash is unexpected
    rep = report(shared_out)
    cases = by_key(rep)
    crashed = cases[("linear_regression", "strict")]
    assert crashed["status"] == "crashed" and "Abort" in crashed["error"], crashed
    assert cases[("linear_regression", "nonstrict")]["status"] == "xpass"  # the run went on after the crash
    for mode in ("strict", "nonstrict"):
        refused = cases[("refused_branch", mode)]
        assert refused["status"] == "capture_failed" and refused["stage"] == "capture"
        assert "data-dependent" in refused["error"].lower(), refused  # torch's own message
    s = rep["summary"]
    assert (s["total"], s["crashed"], s["xpass"], s["capture_failed"], s["regressions"]) == (4, 1, 1, 2, 1)
    assert [(r["case"], r["mode"], r["kind"]) for r in rep["regressions"]] == [
        ("linear_regression", "strict", "status")
    ]
    assert "REGRESSION linear_regression/strict" in proc.stdout
    assert "remove it from the known failures" in proc.stdout

    # Listing the crash as known turns it into xfail; capture failures and xpass never fail the run.
    known.write_text(json.dumps([{"case": "linear_regression", "mode": "*", "reason": "test: crashes on purpose"}]))
    proc = run_matrix(shared_out, "--filter", "^(linear_regression|refused_branch)$", "--modes", "strict,nonstrict",
                      "--known-failures", known, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    cases = by_key(report(shared_out))
    assert cases[("linear_regression", "strict")]["status"] == "xfail"
    assert cases[("linear_regression", "strict")]["result"] == "crashed"
    assert cases[("linear_regression", "strict")]["expected_failure"]["reason"] == "test: crashes on purpose"
    assert cases[("linear_regression", "nonstrict")]["status"] == "xpass"


def test_error_growth_against_baseline_fails_the_run(shared_out):
    # Growth needs an error to grow from: a case with erf and rsqrt, whose refrt results differ from
    # eager's by a few ulps (linear_regression now matches eager exactly, and 0 never grows).
    only = ("--filter", "^op_pow_rsqrt_erf$", "--modes", "strict")
    proc = run_matrix(shared_out, *only)
    assert proc.returncode == 0, proc.stdout
    baseline = report(shared_out)
    assert baseline["cases"][0]["max_abs_error"] > 1e-9, baseline["cases"][0]
    (shared_out / "erf_baseline.json").write_text(json.dumps(baseline))
    for c in baseline["cases"]:
        c["max_abs_error"] = 1e-12  # pretend the old run was 10x+ better
    path = shared_out / "tight_baseline.json"
    path.write_text(json.dumps(baseline))
    proc = run_matrix(shared_out, *only, "--baseline", path)
    assert proc.returncode == 1, proc.stdout
    regressions = report(shared_out)["regressions"]
    assert [(r["case"], r["mode"], r["kind"]) for r in regressions] == [("op_pow_rsqrt_erf", "strict", "error_growth")]
    proc = run_matrix(shared_out, *only, "--baseline", shared_out / "erf_baseline.json")
    assert proc.returncode == 0, proc.stdout
    assert report(shared_out)["regressions"] == []


def test_peers_columns_in_the_matrix(shared_out):
    proc = run_matrix(shared_out, "--filter", "^(linear_regression|refused_branch)$", "--modes", "strict", "-j", "2",
                      peers=True, env={"PARITY_EXTRA_SCENARIOS": str(EXTRA)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rep = report(shared_out)
    cases = by_key(rep)
    peers = cases[("linear_regression", "strict")]["peers"]
    assert (peers["ours"]["refrt"], peers["ours"]["ort"]) == ("pass", "pass"), peers
    assert (peers["official"]["export"], peers["official"]["refrt"], peers["official"]["ort"]) == ("ok", "pass", "pass")
    assert "peers" not in cases[("refused_branch", "strict")]  # nothing captured, nothing to compare
    assert rep["summary"]["peers"]["ours_ort"] == {"pass": 1, "fail": 0, "error": 0, "skipped": 0}
    assert "peers [1/1] linear_regression/strict" in proc.stdout
    html = (shared_out / "report.html").read_text()
    assert "official/ORT" in html


def test_official_exporter_on_one_mode_unless_asked_for_all(shared_out):
    """By default the official exporter runs on the non-strict capture only (the mode torch.onnx.export
    captures itself); ONNX Runtime still runs our model in every mode. --official all runs it on each."""
    only = ("--filter", "^linear_regression$", "--modes", "strict,nonstrict,decomposed")
    proc = run_matrix(shared_out, *only, peers=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rep = report(shared_out)
    cases = by_key(rep)
    official = {mode: cases[("linear_regression", mode)]["peers"]["official"] for mode in ("strict", "nonstrict",
                                                                                           "decomposed")}
    assert {m: (o["export"], o["refrt"], o["ort"]) for m, o in official.items()} == {
        "strict": ("not_run", "not_run", "not_run"), "nonstrict": ("ok", "pass", "pass"),
        "decomposed": ("not_run", "not_run", "not_run")}
    assert all(cases[("linear_regression", m)]["peers"]["ours"]["ort"] == "pass" for m in official)
    assert rep["summary"]["peers"]["official_ort"] == {"pass": 1, "fail": 0, "error": 0, "skipped": 0, "not_run": 2}
    assert "official not run on this mode" in proc.stdout
    md = (shared_out / "report.md").read_text()
    assert "| official/ort | 1 | 0 | 0 | 0 | 0 | 2 |" in md
    assert "The official exporter ran on one capture per case" in md

    proc = run_matrix(shared_out, *only, "--official", "all", peers=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rep = report(shared_out)
    assert [c["peers"]["official"]["export"] for c in rep["cases"]] == ["ok"] * 3
    assert rep["summary"]["peers"]["official_ort"]["pass"] == 3
    assert "The official exporter ran on one capture per case" not in (shared_out / "report.md").read_text()


def test_interrupted_run_leaves_the_previous_report(shared_out):
    before = {name: (shared_out / name).read_bytes() for name in ("report.json", "report.md", "report.html")}
    argv = [str(PARITY), "matrix", "--out", str(shared_out), "--no-peers", "--filter", "^linear_regression$",
            "--modes", "strict,nonstrict,decomposed"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, start_new_session=True)
    for line in proc.stdout:
        if line.startswith("[1/3]"):  # one child done, the report not yet written
            os.killpg(proc.pid, signal.SIGKILL)
            break
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    for name, data in before.items():
        assert (shared_out / name).read_bytes() == data, name
    assert not [p.name for p in shared_out.iterdir() if ".tmp" in p.name]


def test_bad_known_failures_or_baseline_stop_before_work(shared_out, tmp_path):
    bad = tmp_path / "known.json"
    bad.write_text('[{"case": "x", "mode": "sometimes", "reason": "r"}]')
    proc = run_matrix(tmp_path / "out", "--known-failures", bad)
    assert proc.returncode == 3 and "sometimes" in proc.stderr
    proc = run_matrix(tmp_path / "out", "--baseline", tmp_path / "missing.json")
    assert proc.returncode == 3 and "missing.json" in proc.stderr
    assert not (tmp_path / "out" / "cases").exists()
