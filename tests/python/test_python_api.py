"""The `parity` Python package on models that are not scenarios: parity.verify / capture / profile.

Oracles: the eager model run here, ONNX Runtime on the exported model, the files the binary wrote.
"""
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from conftest import load_pb
from torch import nn
from torch.export import Dim

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))  # this tree's package, whichever tree the venv's install points to

import parity  # noqa: E402


class ResidualGelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(6, 12), nn.Linear(12, 6)

    def forward(self, x):
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(x)))


class TopSlots(nn.Module):
    """Fails on purpose: topk's indices of tied scores differ between eager PyTorch and ONNX (lower index
    first), and the output is computed from them, so the difference is no longer a tie."""

    def forward(self, x):
        return torch.topk(x, 3, dim=-1).indices * 10 + 1


class DataDependentBranch(nn.Module):
    def forward(self, x):
        return x + 1 if x.sum() > 0 else x - 1


def ort_outputs(model_path, inputs):
    session = ort.InferenceSession(str(model_path), providers=["CPUExecutionProvider"])
    return session.run(None, {i.name: t.numpy() for i, t in zip(session.get_inputs(), inputs)})


def test_verify_passes_a_users_model_and_writes_the_reports(tmp_path):
    torch.manual_seed(1)
    model = ResidualGelu()
    sets = [(torch.randn(3, 6),), (torch.randn(5, 6),)]
    result = parity.verify(model, sets[0], dynamic_shapes=({0: Dim("batch")},), input_sets=sets[1:], out=tmp_path,
                           fresh=2)
    assert result.status == "pass" and result.passed, result
    assert result.mode == "nonstrict" and result.case == "ResidualGelu"
    fresh = result.entry["fresh_sets"]  # new batch sizes, refrt against libtorch
    assert len(fresh) == 2 and {f["dims"]["batch"] for f in fresh}.isdisjoint({3, 5}), fresh
    assert all(o["refrt_vs_libtorch"]["passed"] for f in fresh for o in f["outputs"])
    assert result.report_json.is_file() and result.report_md.is_file()
    assert result.report_html is not None and result.report_html.read_text().startswith("<!DOCTYPE html>")
    report = json.loads(result.report_json.read_text())
    assert report["schema_version"] == 2 and report["cases"][0]["status"] == "pass"
    assert [(o.input_set, o.index, o.passed) for o in result.outputs] == [
        ("test_data_set_0", 0, True), ("test_data_set_1", 0, True)]
    assert 0 <= result.max_abs_error < 1e-5
    # Independent oracles: the eager model run here, and ONNX Runtime on the ONNX Parity exported.
    assert onnx.load(str(result.onnx)).graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    with torch.no_grad():
        for k, inputs in enumerate(sets):
            want = model(*inputs).numpy()
            np.testing.assert_array_equal(load_pb(result.case_dir / f"test_data_set_{k}" / "output_0.pb"), want)
            np.testing.assert_allclose(ort_outputs(result.onnx, inputs)[0], want, rtol=1e-4, atol=1e-5)
    text = repr(result)
    assert "ResidualGelu/nonstrict: PASS" in text and "test_data_set_1" in text and str(result.report_md) in text


def test_verify_of_a_failing_model_names_the_fx_node_and_source_line(tmp_path):
    ties = torch.tensor([[1.0, 3, 3, 0, 3], [2, 2, 1, 2, 0]])
    sets = [(ties,), (torch.cat([ties, ties[:1]]),)]
    model = TopSlots()
    result = parity.verify(model, sets[0], dynamic_shapes=({0: Dim("batch")},), input_sets=sets[1:], out=tmp_path)
    assert result.status == "fail" and not result.passed and not bool(result), result
    # The failure is real: ONNX Runtime on the same ONNX disagrees with eager as refrt does.
    with torch.no_grad():
        want = model(ties).numpy()
    assert (ort_outputs(result.onnx, sets[0])[0] != want).any()
    assert not result.outputs[0].passed
    divergence = result.first_divergence
    assert divergence is not None, result.entry
    lines, first = inspect.getsourcelines(TopSlots.forward)
    line = first + next(i for i, text in enumerate(lines) if "topk" in text)
    assert f"test_python_api.py:{line} in forward" in divergence["source"], divergence
    assert divergence["op"] in ("aten::mul.Tensor", "aten::add.Tensor", "aten::topk.default"), divergence
    assert divergence["fx_node"] in (result.report_md.read_text()), divergence
    assert "first divergence: " + divergence["fx_node"] in repr(result)


def test_a_model_torch_export_refuses_is_a_result_not_an_exception(tmp_path):
    result = parity.verify(DataDependentBranch(), (torch.randn(2, 3),), out=tmp_path)
    assert result.status == "capture_failed" and result.stage == "capture"
    assert "x.sum()" in result.error or "data-dependent" in result.error.lower() or "Guard" in result.error, (
        result.error
    )


def test_a_crash_of_the_binary_is_a_crashed_result(tmp_path, monkeypatch):
    monkeypatch.setenv("PARITY_TEST_ABORT", "crashing/nonstrict")  # cmd_verify's test hook: abort() on this case
    result = parity.verify(ResidualGelu(), (torch.randn(2, 6),), out=tmp_path, name="crashing")
    assert result.status == "crashed" and not result.passed
    assert "killed by signal 6" in result.error and not result.report_json.exists()


@pytest.mark.parametrize("call, exception, words", [
    (lambda: parity.verify(ResidualGelu(), torch.randn(2, 6)), TypeError, "write (x,)"),
    (lambda: parity.verify(lambda x: x, (torch.randn(2, 6),)), TypeError, "torch.nn.Module"),
    (lambda: parity.verify(ResidualGelu(), (torch.randn(2, 6),), mode="eager"), ValueError, "strict"),
    (lambda: parity.verify(ResidualGelu(), (torch.randn(2, 6),), opset=9), ValueError, "opset"),
    (lambda: parity.verify(ResidualGelu(), (torch.randn(2, 6),), fresh=-1), ValueError, "fresh"),
    (lambda: parity.verify(ResidualGelu(), (torch.randn(2, 6),), input_sets=[torch.randn(3, 6)]), TypeError,
     "input_sets[0]"),
    (lambda: parity.capture(ResidualGelu(), (torch.randn(2, 6),), out=None), TypeError, "out"),
    (lambda: parity.profile(ResidualGelu(), (torch.randn(2, 6),), runs=0), ValueError, "runs"),
])
def test_bad_arguments_raise_a_clear_exception(call, exception, words):
    with pytest.raises(exception, match=None) as info:
        call()
    assert words in str(info.value)


def test_capture_writes_the_matrix_case_folder_for_each_mode(tmp_path):
    torch.manual_seed(2)
    model = ResidualGelu()
    x = torch.randn(4, 6)
    captured = parity.capture(model, (x,), dynamic_shapes=({0: Dim("batch")},), input_sets=[(torch.randn(2, 6),)],
                              modes=("strict", "decomposed"), out=tmp_path, name="my_residual")
    assert [(c.case, c.mode, c.status) for c in captured] == [("my_residual", "strict", "captured"),
                                                               ("my_residual", "decomposed", "captured")]
    for c in captured:
        assert c.dir == tmp_path / "my_residual" / c.mode
        info = json.loads((c.dir / "case.json").read_text())
        assert info["status"] == "captured" and info["input_sets"] == 2 and info["dynamic_dims"][0]["name"] == "batch"
        np.testing.assert_array_equal(load_pb(c.dir / "test_data_set_0" / "input_0.pb"), x.numpy())
        with torch.no_grad():
            np.testing.assert_array_equal(load_pb(c.dir / "test_data_set_0" / "output_0.pb"), model(x).numpy())


def test_profile_returns_the_summary_and_a_trace(tmp_path):
    result = parity.profile(ResidualGelu(), (torch.randn(8, 6),), runs=3, warmup=1, out=tmp_path)
    assert result.mean_run_ms > 0 and result.summary["runs"] == 3
    op_types = {row["op_type"] for row in result.by_op_type}
    assert op_types & {"Gemm", "MatMul"}, op_types
    events = json.loads(result.trace.read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    assert any(e.get("cat") == "Node" for e in events)
    assert "ms/run" in repr(result)


def test_a_user_script_imports_parity_and_runs_the_example(tmp_path):
    """examples/verify_my_model.py as a user runs it: a fresh interpreter, its own working directory."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "verify_my_model.py")], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "MyModel/nonstrict: PASS" in proc.stdout
    report = json.loads((tmp_path / "out" / "my_model" / "verify" / "report.json").read_text())
    assert report["cases"][0]["status"] == "pass" and len(report["cases"][0]["input_sets"]) == 2


def test_the_package_installs_into_a_fresh_venv_as_setup_sh_does(tmp_path):
    """scripts/setup.sh's install (pyproject.toml with PARITY_PIP_DEVELOP=1) into an empty venv: `parity` then
    resolves to this tree's python/, nothing compiled. The build backend is the project venv's
    scikit-build-core (on PYTHONPATH while pip builds), as setup.sh uses it."""
    import scikit_build_core
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    env = dict(os.environ, PYTHONPATH=str(Path(scikit_build_core.__file__).parent.parent), PARITY_PIP_DEVELOP="1")
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                           "--no-build-isolation", str(ROOT)],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    env.pop("PYTHONPATH")
    origin = subprocess.run([str(python), "-c", "import importlib.util as u; print(u.find_spec('parity').origin)"],
                            capture_output=True, text=True, cwd=tmp_path, check=True, env=env).stdout.strip()
    assert origin == str(ROOT / "python" / "parity" / "__init__.py")
    # Its `parity` command runs this tree's build (nothing of the C++ went into the venv).
    assert not list(venv.rglob("_native"))
    helped = subprocess.run([str(venv / "bin" / "parity"), "--help"], capture_output=True, text=True, cwd=tmp_path,
                            env=env, timeout=60)
    assert helped.returncode == 0 and "matrix" in helped.stdout, helped.stdout + helped.stderr
