"""Every scenario x capture mode: our ONNX passes onnx.checker(full_check=True) and computes eager
PyTorch's outputs in onnxruntime and on refrt, on every input set; `parity profile` writes a valid trace.

Oracles: the eager outputs stored at capture, onnx's checker and onnxruntime. A (case, mode) listed in
scenarios/known_failures.json is a strict xfail with the list's reason (it must still fail); a case
torch.export cannot capture is skipped with torch's message, as the matrix reports it.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from conftest import MODES, ROOT, load_pb, run_capture
from test_profile import check_trace

sys.path.insert(0, str(ROOT))
from scenarios.registry import all_cases  # noqa: E402
import scenarios.cases  # noqa: E402,F401  (registers the cases)

PARITY = ROOT / os.environ.get("PARITY_BUILD_DIR", "build") / "parity"
# Our side's known failures only: the list also records the official exporter's and torch.export's.
KNOWN = {(k["case"], k["mode"]): k["reason"]
         for k in json.loads((ROOT / "scenarios" / "known_failures.json").read_text()) if k.get("side", "ours") == "ours"}
# Cases whose ONNX onnxruntime cannot run (its gap, not ours): the ORT leg must still raise this, so the
# entry goes when onnxruntime gains the kernel.
ORT_LACKS = {"op_bfloat16_round_trip": "onnxruntime 1.32's CPU provider has no bfloat16 Mul kernel"}


@pytest.fixture(scope="module")
def all_captured(tmp_path_factory):
    root = tmp_path_factory.mktemp("all_cases")
    proc = run_capture("--out", root, "--modes", ",".join(MODES), "--jobs", "2", timeout=2400)
    assert proc.returncode == 0, proc.stderr
    return root


def _params():
    return [pytest.param(c.name, m, id=f"{c.name}-{m}") for c in all_cases() for m in MODES]


def _run(*args):
    proc = subprocess.run([str(PARITY), *map(str, args)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"parity {' '.join(map(str, args))}:\n{proc.stderr}"


@pytest.mark.parametrize("name,mode", _params())
def test_scenario_checker_onnxruntime_and_refrt(all_captured, name, mode, tmp_path, request):
    case_dir = all_captured / name / mode
    info = json.loads((case_dir / "case.json").read_text())
    if info["status"] == "capture_failed":
        pytest.skip(f"torch.export cannot capture it: {info['error'].splitlines()[0]}")
    if (name, mode) in KNOWN:
        request.applymarker(pytest.mark.xfail(strict=True, reason=KNOWN[(name, mode)]))
    model = tmp_path / "model.onnx"
    plugins = [a for p in info.get("export_plugins", []) for a in ("--plugin", p)]
    _run("export", case_dir / "model.pt2", "-o", model, *plugins)
    onnx.checker.check_model(onnx.load(str(model)), full_check=True)
    ort_lacks = ORT_LACKS.get(name)
    session = None
    if ort_lacks:
        with pytest.raises(Exception, match="NOT_IMPLEMENTED"):  # the gap is still there
            ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    else:
        session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    names = [i.name for i in onnx.load(str(model)).graph.input]
    sets = sorted(p for p in case_dir.iterdir() if p.name.startswith("test_data_set_"))
    assert len(sets) >= 2
    for s in sets:
        expected = [load_pb(p) for p in sorted(s.glob("output_*.pb"), key=lambda p: int(p.stem.split("_")[1]))]
        feeds = {n: load_pb(s / f"input_{i}.pb") for i, n in enumerate(names)}
        refrt_out = tmp_path / f"refrt_{s.name}"
        _run("run", model, "--inputs", s, "--outputs", refrt_out)
        runs = [("refrt", [load_pb(refrt_out / f"output_{i}.pb") for i in range(len(expected))])]
        if session is not None:
            runs.append(("onnxruntime", session.run(None, feeds)))
        if s == sets[0]:  # `parity profile` works on every scenario model: a valid trace of its nodes
            _run("profile", model, "--inputs", s, "--runs", "1", "--warmup", "0", "--out", tmp_path / "profile")
            check_trace(tmp_path / "profile" / "trace.json", model, 1)
        for runtime, values in runs:
            # Our ONNX may add outputs after the user's (mutated buffers and inputs): compare the user's.
            assert len(values) >= len(expected), runtime
            for i, e in enumerate(expected):
                np.testing.assert_allclose(values[i], e, rtol=1e-4, atol=1e-5,
                                           err_msg=f"{runtime} {name}/{mode} {s.name} output {i}")
