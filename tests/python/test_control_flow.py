"""Control flow end to end: torch.cond / while_loop / scan / map scenarios captured, exported (If, Loop,
Scan), checked by onnx.checker (full_check) and run in onnxruntime and on refrt against the eager
outputs stored at capture; `parity verify` runs the libtorch reference, which interprets the
higher-order ops itself, against the same eager outputs."""
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from conftest import load_pb, run_capture

ROOT = Path(__file__).resolve().parents[2]
PARITY = ROOT / os.environ.get("PARITY_BUILD_DIR", "build") / "parity"
CASES = ("cond_simple", "cond_multiple_outputs", "cond_nested", "cond_submodules", "while_count_up",
         "while_count_down", "scan_cumsum", "scan_two_carries_reverse", "map_rows")
MODES = ("strict", "nonstrict")
ONNX_OP = {"cond": "If", "while": "Loop", "scan": "Scan", "map": "Scan"}


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    root = tmp_path_factory.mktemp("control_flow")
    proc = run_capture("--out", root, "--modes", ",".join(MODES), "--filter", "^(" + "|".join(CASES) + ")$")
    assert proc.returncode == 0, proc.stderr
    return root


def parity(*args):
    proc = subprocess.run([str(PARITY), *map(str, args)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"parity {' '.join(map(str, args))}: {proc.stdout}\n{proc.stderr}"


def data_sets(case_dir):
    return sorted(p for p in case_dir.iterdir() if p.name.startswith("test_data_set_"))


def files(folder, prefix):
    return sorted(folder.glob(f"{prefix}_*.pb"), key=lambda p: int(p.stem.split("_")[1]))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", CASES)
def test_control_flow_matches_eager(cases, tmp_path, name, mode):
    case_dir = cases / name / mode
    model = tmp_path / "model.onnx"
    parity("export", case_dir / "model.pt2", "-o", model)
    proto = onnx.load(str(model))
    onnx.checker.check_model(proto, full_check=True)
    assert ONNX_OP[name.split("_")[0]] in {n.op_type for n in proto.graph.node}
    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    sets = data_sets(case_dir)
    assert len(sets) >= 2
    for k, data in enumerate(sets):
        inputs = [load_pb(p) for p in files(data, "input")]
        expected = [load_pb(p) for p in files(data, "output")]
        got_ort = session.run(None, {i.name: v for i, v in zip(session.get_inputs(), inputs)})
        out = tmp_path / f"refrt_{k}"
        out.mkdir()
        parity("run", model, "--inputs", data, "--outputs", out)
        got_refrt = [load_pb(p) for p in files(out, "output")]
        for runtime, got in (("onnxruntime", got_ort), ("refrt", got_refrt)):
            assert len(got) == len(expected), runtime
            for g, e in zip(got, expected):
                assert g.shape == e.shape and g.dtype == e.dtype, (runtime, g.shape, e.shape, g.dtype, e.dtype)
                np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6, err_msg=f"{runtime}, set {k}")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", CASES)
def test_libtorch_reference_interprets_higher_order_ops(cases, tmp_path, name, mode):
    parity("verify", cases / name / mode, "--out", tmp_path, "--quiet")
    entry = json.loads((tmp_path / "report.json").read_text())["cases"][0]
    assert entry["status"] == "pass", entry.get("error")
    for s in entry["input_sets"]:
        for o in s["outputs"]:
            assert o["libtorch_vs_eager"]["passed"] and o["refrt_vs_libtorch"]["passed"], (s["name"], o)
