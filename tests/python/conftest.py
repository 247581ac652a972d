"""Shared fixtures: every scenario is captured once per session, through the real command line."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import onnx
import onnx.numpy_helper
import pytest
from filelock import FileLock

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


def shared_dir(tmp_path_factory, name, make):
    """A directory made once per test run by `make(dir)` and shared by every pytest-xdist worker (each worker
    has its own basetemp; their parent is common). The first worker to ask makes it under a file lock, the
    others wait and reuse it; a failure is recorded so that they fail with the same message instead of
    repeating the work."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    root = base / name
    with FileLock(str(base / f"{name}.lock")):
        failed = base / f"{name}.failed"
        if failed.exists():
            pytest.fail(f"{name} (made by another worker) failed:\n{failed.read_text()}")
        if not (root / ".made").exists():
            shutil.rmtree(root, ignore_errors=True)
            root.mkdir(parents=True)
            try:
                make(root)
            except BaseException as e:
                failed.write_text(str(e))
                raise
            (root / ".made").touch()
    return root


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


# With pytest-xdist (`scripts/test.sh` runs `-n 2`), the scenario checks spread over the workers case by case
# (their capture is shared, see `shared_dir`; the three modes of a case are verified together); every other
# module runs whole on one worker, so that its module and session fixtures (captures, builds, a venv) are made
# once. xdist hands out the scopes with the most tests first.
SPREAD_MODULES = ("test_all_scenarios",)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    from xdist.scheduler import LoadScopeScheduling

    class ModuleScheduling(LoadScopeScheduling):
        """xdist's module scheduling (`--dist loadscope`), except that the SPREAD_MODULES' tests go by case
        (the test id's parameters up to the mode). (`--dist loadgroup` would do this with markers, but it
        does not group under pytest 9.)"""

        def _split_scope(self, nodeid):
            module = nodeid.split("::", 1)[0]
            if Path(module).stem not in SPREAD_MODULES:
                return module
            return nodeid.rsplit("-", 1)[0] if nodeid.endswith("]") else nodeid

    return ModuleScheduling(config, log)
