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


def test_no_test_at_all_fails_the_run(one_passing_test, tmp_path):
    empty_dir = tmp_path / "none"
    empty_dir.mkdir()
    proc = conformance("--data", empty_dir, "--exclusions", ROOT / "refrt" / "conformance" / "exclusions.txt")
    assert proc.returncode == 1 and "no conformance test ran" in proc.stdout, proc.stdout + proc.stderr
    proc = conformance("--data", one_passing_test, "--filter", "^no_such_test$")
    assert proc.returncode == 1 and "no conformance test ran" in proc.stdout, proc.stdout + proc.stderr
