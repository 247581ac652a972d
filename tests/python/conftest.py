"""Shared fixtures: every scenario is captured once per session, through the real command line."""
import json
import os
import subprocess
import sys
from pathlib import Path

import onnx
import onnx.numpy_helper
import pytest

ROOT = Path(__file__).resolve().parents[2]
MODES = ("strict", "nonstrict", "decomposed")
# The cases the shared capture covers (the full matrix is `parity matrix`'s job, not the tests').
CASES = ("linear_regression", "mlp_batch", "mlp_docs")
CASES_FILTER = "^(" + "|".join(CASES) + ")$"

# Tests import the package from the source tree, like `python -m scenarios.capture` run from ROOT.
sys.path.insert(0, str(ROOT))


def run_capture(*args, timeout=900):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "scenarios.capture", *map(str, args)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def load_pb(path):
    t = onnx.TensorProto()
    t.ParseFromString(Path(path).read_bytes())
    return onnx.numpy_helper.to_array(t)


class Capture:
    def __init__(self, root, proc):
        self.root, self.proc = root, proc
        self.lines = [json.loads(line) for line in proc.stdout.splitlines()]


@pytest.fixture(scope="session")
def capture_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("cases")
    proc = run_capture("--out", root, "--modes", ",".join(MODES), "--filter", CASES_FILTER)
    assert proc.returncode == 0, proc.stderr
    return Capture(root, proc)


@pytest.fixture(scope="session")
def captured(capture_run):
    """The case root (<case>/<mode>/), every capture succeeded."""
    assert capture_run.lines and all(line["status"] == "captured" for line in capture_run.lines), capture_run.lines
    return capture_run.root
