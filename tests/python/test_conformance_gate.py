"""`parity conformance` cannot end green while hiding a regression: a test listed in the exclusion list
that passes now fails the run (the list must shrink), and so does a run in which no test ran at all."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / os.environ.get("PARITY_BUILD_DIR", "build")
NODE_TESTS = BUILD / "conformance" / "node"


def conformance(*args):
    return subprocess.run([str(BUILD / "parity"), "conformance", *map(str, args)], capture_output=True, text=True,
                          timeout=600)


@pytest.fixture
def one_passing_test(tmp_path):
    if not (NODE_TESTS / "test_abs").is_dir():
        pytest.skip("the generated node tests are not built (target refrt_conformance_data)")
    data = tmp_path / "node"
    shutil.copytree(NODE_TESTS / "test_abs", data / "test_abs")
    return data


def test_a_passing_run_exits_0(one_passing_test, tmp_path):
    empty = tmp_path / "exclusions.txt"
    empty.write_text("# nothing excluded\n")
    proc = conformance("--data", one_passing_test, "--exclusions", empty)
    assert proc.returncode == 0 and "1 passed, 0 failed, 0 skipped" in proc.stdout, proc.stdout + proc.stderr


def test_an_excluded_test_that_passes_fails_the_run(one_passing_test, tmp_path):
    listed = tmp_path / "exclusions.txt"
    listed.write_text("test_abs  pretend it is broken\n")
    proc = conformance("--data", one_passing_test, "--exclusions", listed)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "XPASS test_abs" in proc.stdout and "pass now: remove them" in proc.stdout


def test_a_random_output_test_is_skipped_not_run(one_passing_test, tmp_path):
    """A test marked [random] (its expected output is a draw of numpy's generator) is not run: a chance
    match must not count as a pass, nor as a listed test that passes now. test_abs would pass if run."""
    listed = tmp_path / "exclusions.txt"
    listed.write_text("test_abs  [random] pretend its output is a random draw\n")
    proc = conformance("--data", one_passing_test, "--exclusions", listed, "--verbose")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 passed, 0 failed, 1 skipped" in proc.stdout and "XPASS" not in proc.stdout, proc.stdout
    assert "random output, not comparable: pretend its output" in proc.stdout, proc.stdout


def test_no_test_at_all_fails_the_run(one_passing_test, tmp_path):
    empty_dir = tmp_path / "none"
    empty_dir.mkdir()
    proc = conformance("--data", empty_dir, "--exclusions", ROOT / "refrt" / "conformance" / "exclusions.txt")
    assert proc.returncode == 1 and "no conformance test ran" in proc.stdout, proc.stdout + proc.stderr
    proc = conformance("--data", one_passing_test, "--filter", "^no_such_test$")
    assert proc.returncode == 1 and "no conformance test ran" in proc.stdout, proc.stdout + proc.stderr


def registered_ops():
    """The ops `parity ops` lists, as "domain::Op" ("" for ai.onnx), the oracle of the coverage gate."""
    proc = subprocess.run([str(BUILD / "parity"), "ops"], capture_output=True, text=True, timeout=60)
    rows = [line.split() for line in proc.stdout.splitlines()[1:-1]]
    return {("" if r[1] == "ai.onnx" else r[1]) + "::" + r[0] for r in rows}


def gate_files(tmp_path, floor, untested):
    (tmp_path / "exclusions.txt").write_text("# nothing excluded\n")
    (tmp_path / "passed_floor.txt").write_text(f"# floor\n{floor}\n")
    (tmp_path / "untested_ops.txt").write_text("".join(f"{op}  test reason\n" for op in sorted(untested)))
    return tmp_path / "exclusions.txt"


def test_a_passed_count_below_the_floor_fails_the_run(one_passing_test, tmp_path):
    untested = registered_ops() - {"::Abs"}
    proc = conformance("--data", one_passing_test, "--exclusions", gate_files(tmp_path, 1, untested))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = conformance("--data", one_passing_test, "--exclusions", gate_files(tmp_path, 2, untested))
    assert proc.returncode == 1 and "below the recorded floor 2" in proc.stdout, proc.stdout + proc.stderr


def test_an_implemented_op_without_a_passing_test_fails_the_run(one_passing_test, tmp_path):
    ops = registered_ops()
    assert {"::Abs", "::Relu"} <= ops
    proc = conformance("--data", one_passing_test, "--exclusions", gate_files(tmp_path, 1, ops - {"::Abs", "::Relu"}))
    assert proc.returncode == 1 and "FAILED: ::Relu is implemented" in proc.stdout, proc.stdout
    assert "::Abs is" not in proc.stdout  # test_abs passes: Abs is covered
    # Listing an op whose test passes is stale, and fails too (the list must shrink).
    proc = conformance("--data", one_passing_test, "--exclusions", gate_files(tmp_path, 1, ops))
    assert proc.returncode == 1 and "::Abs passes a backend test now" in proc.stdout, proc.stdout


def test_the_recorded_gate_files_exist():
    floor = ROOT / "refrt" / "conformance" / "passed_floor.txt"
    assert int([line for line in floor.read_text().splitlines() if line and not line.startswith("#")][0]) >= 1000
    assert (ROOT / "refrt" / "conformance" / "untested_ops.txt").is_file()
