"""A user's own suite on the command line: `parity matrix --scenarios`, `parity capture FILE.py[:NAME]`,
sharded runs joined by `parity report --merge` (compared with one unsharded run), and tie-aware index
outputs (examples/suite/ranking.py), judged against eager outputs and ONNX Runtime."""
import json
import subprocess
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
from conftest import load_pb
from test_end_to_end import PARITY, ROOT

EXAMPLES = ROOT / "examples" / "suite"
FAILING = Path(__file__).with_name("suite_failing.py")
MODES = "strict,nonstrict"
SUITES = ["--scenarios", str(EXAMPLES), "--scenarios", str(FAILING)]
# Every (case, mode) of the two suites, in the order one run writes them: case name, then mode.
PAIRS = [(c, m) for c in ("example_gated_mlp", "slot_ids_from_ties", "top3_items") for m in ("strict", "nonstrict")]


def parity(*args, timeout=900):
    return subprocess.run([str(PARITY), *map(str, args)], capture_output=True, text=True, timeout=timeout)


def report(folder):
    return json.loads((Path(folder) / "report.json").read_text())


def keyed(rep):
    return [(c["case"], c["mode"], c["status"]) for c in rep["cases"]]


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    """A baseline in which every pair passed: the failing case's pairs are regressions."""
    path = tmp_path_factory.mktemp("baseline") / "report.json"
    path.write_text(json.dumps({"schema_version": 2, "summary": {}, "cases": [
        {"case": c, "mode": m, "status": "pass", "max_abs_error": None} for c, m in PAIRS]}))
    return path


@pytest.fixture(scope="module")
def single(tmp_path_factory, baseline):
    out = tmp_path_factory.mktemp("single")
    proc = parity("matrix", "--out", out, "--no-peers", "--modes", MODES, "-j", "2", "--baseline", baseline, *SUITES)
    return out, proc


@pytest.fixture(scope="module")
def shards(tmp_path_factory, baseline):
    root = tmp_path_factory.mktemp("shards")
    runs = []
    for k in (1, 2, 3):
        proc = parity("matrix", "--out", root / f"s{k}", "--no-peers", "--modes", MODES, "-j", "2", "--baseline",
                      baseline, "--shard", f"{k}/3", *SUITES)
        runs.append((root / f"s{k}", proc))
    return runs


def test_list_shows_the_suites_cases_alone_or_with_the_built_in_ones():
    proc = parity("matrix", "--list", "--scenarios", EXAMPLES)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["example_gated_mlp", "top3_items"]
    proc = parity("matrix", "--list", "--scenarios", EXAMPLES, "--with-builtin")
    names = proc.stdout.split()
    assert {"example_gated_mlp", "top3_items", "mlp_docs", "linear_regression"} <= set(names) and names == sorted(names)


def test_matrix_runs_a_users_suite_with_baseline_regressions(single):
    out, proc = single
    rep = report(out)
    assert keyed(rep) == [(c, m, "fail" if c == "slot_ids_from_ties" else "pass") for c, m in PAIRS], proc.stdout
    assert proc.returncode == 1  # the failing case fails the run
    assert rep["modes"] == ["strict", "nonstrict"] and "shard" not in rep
    assert sorted((r["case"], r["mode"], r["kind"]) for r in rep["regressions"]) == [
        ("slot_ids_from_ties", "nonstrict", "status"), ("slot_ids_from_ties", "strict", "status")]
    assert "REGRESSION slot_ids_from_ties/strict" in proc.stdout


def test_ties_in_index_outputs_pass_and_are_counted(single):
    """top3_items: eager's topk/argmax indices of tied scores differ from ONNX's (lower index first); the
    values they select are equal, so the outputs pass with "ties" in report.json and report.md."""
    out, _ = single
    entry = next(c for c in report(out)["cases"] if (c["case"], c["mode"]) == ("top3_items", "nonstrict"))
    assert entry["status"] == "pass"
    ties = [o["refrt_vs_eager"].get("ties", 0) for s in entry["input_sets"] for o in s["outputs"]]
    assert sum(ties) > 0, ties
    assert "## Ties" in (out / "report.md").read_text()
    # Independently: ONNX Runtime on the same ONNX picks other indices than eager, of equal scores.
    case_dir = out / "cases" / "top3_items" / "nonstrict"
    session = ort.InferenceSession(entry["onnx"], providers=["CPUExecutionProvider"])
    differing = 0
    for data in sorted(case_dir.glob("test_data_set_*")):
        scores = load_pb(data / "input_0.pb")
        got = session.run(None, {session.get_inputs()[0].name: scores})
        eager_idx, ort_idx = load_pb(data / "output_1.pb"), got[1]
        differing += int((eager_idx != ort_idx).sum())
        np.testing.assert_array_equal(
            np.take_along_axis(scores, eager_idx, -1), np.take_along_axis(scores, ort_idx, -1)
        )
    assert differing > 0


def test_shards_split_the_pairs_and_merge_into_the_single_run(single, shards, tmp_path):
    single_out, _ = single
    seen = []
    for k, (out, proc) in enumerate(shards, start=1):
        rep = report(out)
        assert rep["shard"] == {"index": k, "count": 3}, proc.stdout + proc.stderr
        mine = [(c["case"], c["mode"]) for c in rep["cases"]]
        assert mine == [p for i, p in enumerate(PAIRS) if i % 3 == k - 1]
        seen += mine
    assert sorted(seen) == sorted(PAIRS)
    merged_dir = tmp_path / "merged"
    proc = parity("report", "--merge", *[out / "report.json" for out, _ in reversed(shards)], "--out", merged_dir)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the run had failures and regressions
    merged, one = report(merged_dir), report(single_out)
    assert keyed(merged) == keyed(one)
    assert merged["summary"] == one["summary"]
    assert [(r["case"], r["mode"], r["kind"]) for r in merged["regressions"]] == [
        (r["case"], r["mode"], r["kind"]) for r in one["regressions"]]
    assert merged["schema_version"] == 2 and merged["modes"] == ["strict", "nonstrict"]
    assert (merged_dir / "report.md").is_file() and (merged_dir / "report.html").is_file()


def test_merge_refuses_missing_or_repeated_shards(shards, tmp_path):
    (a, _), (b, _), _ = shards
    proc = parity("report", "--merge", a / "report.json", b / "report.json", "--out", tmp_path)
    assert proc.returncode == 3 and "shard 3/3 is missing" in proc.stderr, proc.stderr
    proc = parity("report", "--merge", a / "report.json", a / "report.json", b / "report.json", "--out", tmp_path)
    assert proc.returncode == 3 and "shard 1 given twice" in proc.stderr, proc.stderr
    proc = parity("report", "--merge", a / "report.json")
    assert proc.returncode == 2 and "--out" in proc.stderr


@pytest.mark.parametrize("shard", ["0/3", "4/3", "2", "a/b", "1/0"])
def test_a_bad_shard_is_a_usage_error(shard, tmp_path):
    proc = parity("matrix", "--out", tmp_path, "--shard", shard, "--scenarios", EXAMPLES)
    assert proc.returncode == 2 and "--shard takes K/N" in proc.stderr, proc.stderr


def test_capture_a_function_of_a_file_then_verify_it(tmp_path):
    proc = parity("capture", f"{EXAMPLES / 'ranking.py'}:top3_items", "--modes", "nonstrict", "--out", tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    case_dir = tmp_path / "top3_items" / "nonstrict"
    assert json.loads((case_dir / "case.json").read_text())["input_sets"] == 3
    proc = parity("verify", case_dir, "--out", tmp_path / "v", "--no-html")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert report(tmp_path / "v")["cases"][0]["status"] == "pass"


def test_capture_errors_name_the_file(tmp_path):
    proc = parity("capture", f"{EXAMPLES / 'ranking.py'}:no_such_case", "--out", tmp_path)
    assert proc.returncode == 3 and "ranking.py: no case or function named 'no_such_case'" in proc.stderr, proc.stderr
    assert "top3_items" in proc.stderr
    proc = parity("capture", tmp_path / "missing.py", "--out", tmp_path)
    assert proc.returncode == 3 and "missing.py" in proc.stderr
    broken = tmp_path / "broken.py"
    broken.write_text("import torch\nraise RuntimeError('my suite is broken')\n")
    proc = parity("capture", broken, "--out", tmp_path)
    assert proc.returncode == 3 and f"{broken}: RuntimeError: my suite is broken" in proc.stderr, proc.stderr


def test_the_matrix_localises_a_failing_case_by_itself(single):
    """slot_ids_from_ties: topk's tied indices are settled as ties; the arithmetic on them is not, so the
    first divergence is the multiplication after topk, named with its source line without any flag."""
    out, proc = single
    for entry in (c for c in report(out)["cases"] if c["case"] == "slot_ids_from_ties"):
        d = entry["first_divergence"]
        assert d is not None and d["op"] == "aten::mul.Tensor", entry
        assert "suite_failing.py" in d["source"] and "topk" in d["source"], d
        assert "first divergence: " + d["fx_node"] in entry["error"]
    assert "first divergence: mul" in proc.stdout
