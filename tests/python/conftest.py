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
PARITY = ROOT / os.environ.get("PARITY_BUILD_DIR", "build") / "parity"


def parity(*args, expect=0):
    """Runs the parity binary; its exit code must be `expect` (the output is shown when it is not)."""
    proc = subprocess.run([str(PARITY), *map(str, args)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == expect, (
        f"parity {' '.join(map(str, args))} -> {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    )
    return proc


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


def data_sets(case_dir):
    return sorted(p for p in Path(case_dir).iterdir() if p.name.startswith("test_data_set_"))


def files(folder, prefix):
    return sorted(Path(folder).glob(f"{prefix}_*.pb"), key=lambda p: int(p.stem.split("_")[1]))


def assert_runtimes_match_eager(model, case_dir, tmp_path, rtol=1e-5, atol=1e-6):
    """onnxruntime and refrt (`parity run`) on every input set of the case, against its stored eager outputs."""
    import numpy as np
    import onnxruntime as ort
    parity = ROOT / os.environ.get("PARITY_BUILD_DIR", "build") / "parity"
    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    sets = data_sets(case_dir)
    assert len(sets) >= 2
    for k, data in enumerate(sets):
        inputs = [load_pb(p) for p in files(data, "input")]
        expected = [load_pb(p) for p in files(data, "output")]
        got_ort = session.run(None, {i.name: v for i, v in zip(session.get_inputs(), inputs)})
        out = Path(tmp_path) / f"refrt_{k}"
        out.mkdir()
        proc = subprocess.run([str(parity), "run", str(model), "--inputs", str(data), "--outputs", str(out)],
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr
        got_refrt = [load_pb(p) for p in files(out, "output")]
        for runtime, got in (("onnxruntime", got_ort), ("refrt", got_refrt)):
            assert len(got) == len(expected), runtime
            for g, e in zip(got, expected):
                assert g.shape == e.shape and g.dtype == e.dtype, (runtime, g.shape, e.shape, g.dtype, e.dtype)
                np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, err_msg=f"{runtime}, set {k}")
