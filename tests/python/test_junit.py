"""`--junit FILE` on `parity matrix`, `parity verify` and `parity report --merge`, read back with junitparser (a
JUnit XML library CI tools use): one testcase per (case, mode), and a failure, error or skipped element exactly
where report.json has an unexpected result, an expected failure or a regression.

The run is made to hold every kind of result: examples/suite passes, suite_failing.py's case fails, one pair
crashes (PARITY_TEST_ABORT, the verify child's test hook), one is a listed known failure, and a baseline makes a
passing pair a regression (its max abs error "grew")."""
import json
import os
import subprocess
from pathlib import Path

import pytest
from junitparser import Error, Failure, JUnitXml, Properties, Skipped
from test_end_to_end import PARITY, ROOT

SUITES = ["--scenarios", ROOT / "examples" / "suite", "--scenarios", Path(__file__).with_name("suite_failing.py")]
MODES = "strict,nonstrict"
CRASH = ("top3_items", "strict")
KNOWN = ("slot_ids_from_ties", "nonstrict")
GROWN = ("example_gated_mlp", "strict")


def parity(*args, env=None, timeout=900):
    return subprocess.run([str(PARITY), *map(str, args)], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    root = tmp_path_factory.mktemp("junit_inputs")
    known = root / "known.json"
    known.write_text(json.dumps([{"case": KNOWN[0], "mode": KNOWN[1], "reason": "listed for the JUnit test"}]))
    baseline = root / "baseline.json"  # every pair passed; GROWN's error was far smaller
    baseline.write_text(json.dumps({"schema_version": 2, "summary": {}, "cases": [
        {"case": GROWN[0], "mode": GROWN[1], "status": "pass", "max_abs_error": 1e-15}]}))
    return ["--known-failures", known, "--baseline", baseline]


def matrix(out, junit, extra, *more):
    return parity("matrix", "--out", out, "--no-peers", "--modes", MODES, "-j", "2", *extra, *SUITES, *more,
                  "--junit", junit, env={"PARITY_TEST_ABORT": "/".join(CRASH)})


@pytest.fixture(scope="module")
def single(tmp_path_factory, inputs):
    out = tmp_path_factory.mktemp("junit_matrix")
    proc = matrix(out, out / "junit.xml", inputs)
    return out, proc


def expected_kind(case: dict, regressed: set) -> str:
    """What the report says of a pair, read from report.json alone."""
    if case["status"] == "fail" or (case["case"], case["mode"]) in regressed:
        return "failure"
    if case["status"] in ("error", "crashed", "timeout"):
        return "error"
    if case["status"] in ("xfail", "capture_failed"):
        return "skipped"
    assert case["status"] in ("pass", "xpass"), case["status"]
    return "passed"


def kind(testcase) -> str:
    results = testcase.result
    assert len(results) <= 1, results
    if not results:
        return "passed"
    return {Failure: "failure", Error: "error", Skipped: "skipped"}[type(results[0])]


def check_against_report(junit: Path, report_dir: Path) -> dict:
    """The JUnit file of a report: one testcase per pair, each of the kind the report says; returns them."""
    report = json.loads((report_dir / "report.json").read_text())
    regressed = {(r["case"], r["mode"]) for r in report.get("regressions", [])}
    xml = JUnitXml.fromfile(str(junit))
    cases = {}
    for suite in xml:
        for tc in suite:
            key = (tc.classname, tc.name)
            assert key not in cases, f"{key} twice"
            cases[key] = tc
    assert list(cases) == [(c["case"], c["mode"]) for c in report["cases"]]
    html = str((report_dir / "report.html").resolve()) if (report_dir / "report.html").is_file() else None
    for c in report["cases"]:
        tc = cases[(c["case"], c["mode"])]
        assert kind(tc) == expected_kind(c, regressed), (c["case"], c["mode"], c["status"])
        if kind(tc) in ("failure", "error") and c.get("error"):
            assert c["error"] in tc.result[0].message, (tc.result[0].message, c["error"])
        if c["status"] == "xfail":
            assert c["expected_failure"]["reason"] in tc.result[0].message
        props = {p.name: p.value for p in tc.child(Properties)}
        assert Path(props["attachment"]).is_file() and props["status"] == c["status"]
        if html:
            assert props["attachment"] == html
        assert tc.time == pytest.approx(c.get("wall_seconds", c.get("seconds", 0)), abs=1e-3)
    counts = {k: sum(kind(tc) == k for tc in cases.values()) for k in ("failure", "error", "skipped")}
    assert (xml.failures, xml.errors, xml.skipped, xml.tests) == (
        counts["failure"], counts["error"], counts["skipped"], len(cases))
    # What a CI concludes from the file is what the exit code says.
    return {key: kind(tc) for key, tc in cases.items()}


def test_matrix_junit_has_every_kind_of_result_where_the_report_has_it(single):
    out, proc = single
    assert proc.returncode == 1, proc.stdout + proc.stderr
    kinds = check_against_report(out / "junit.xml", out)
    # The run holds what the fixture arranged, so that each kind is really checked.
    assert kinds == {
        ("example_gated_mlp", "strict"): "failure",  # passed, but a regression against the baseline
        ("example_gated_mlp", "nonstrict"): "passed",
        ("slot_ids_from_ties", "strict"): "failure",
        ("slot_ids_from_ties", "nonstrict"): "skipped",  # the listed known failure
        ("top3_items", "strict"): "error",  # crashed
        ("top3_items", "nonstrict"): "passed",
    }


def test_verify_junit_of_a_folder_of_cases(single, tmp_path):
    out, _ = single
    proc = parity("verify", out / "cases" / "slot_ids_from_ties", "--out", tmp_path / "v", "--junit",
                  tmp_path / "v.xml", "--quiet")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    kinds = check_against_report(tmp_path / "v.xml", tmp_path / "v")
    assert kinds == {("slot_ids_from_ties", "strict"): "failure", ("slot_ids_from_ties", "nonstrict"): "failure"}
    # Without report.html the attachment is report.md.
    proc = parity("verify", out / "cases" / "top3_items" / "nonstrict", "--out", tmp_path / "w", "--no-html",
                  "--quiet", "--junit", tmp_path / "w.xml")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert check_against_report(tmp_path / "w.xml", tmp_path / "w") == {("top3_items", "nonstrict"): "passed"}
    (tc,) = [tc for suite in JUnitXml.fromfile(str(tmp_path / "w.xml")) for tc in suite]
    assert {p.name: p.value for p in tc.child(Properties)}["attachment"] == str(tmp_path / "w" / "report.md")


def test_merged_shards_junit_matches_the_single_run(single, inputs, tmp_path):
    single_out, _ = single
    for k in (1, 2):
        proc = matrix(tmp_path / f"s{k}", tmp_path / f"s{k}.xml", inputs, "--shard", f"{k}/2")
        assert proc.returncode in (0, 1), proc.stdout + proc.stderr
        check_against_report(tmp_path / f"s{k}.xml", tmp_path / f"s{k}")
    proc = parity("report", "--merge", tmp_path / "s1" / "report.json", tmp_path / "s2" / "report.json",
                  "--out", tmp_path / "merged", "--junit", tmp_path / "merged.xml")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    merged = check_against_report(tmp_path / "merged.xml", tmp_path / "merged")
    assert merged == check_against_report(single_out / "junit.xml", single_out)
