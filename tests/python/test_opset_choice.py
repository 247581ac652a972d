"""A translation is chosen by the export opset: GELU and RMSNorm export as ONNX's Gelu / RMSNormalization
where the opset has them (20 / 23) and as formulas below; both forms compute what eager PyTorch computes.

Oracles: eager PyTorch; onnxruntime and refrt (`parity run`) execute each export; the op types are read
from the ONNX file.
"""
import os
import subprocess
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[2]
PARITY = ROOT / os.environ.get("PARITY_BUILD_DIR", "build") / "parity"


class GeluRms(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.RMSNorm(8, eps=1e-6)

    def forward(self, x):
        return self.norm(torch.nn.functional.gelu(x) + torch.nn.functional.gelu(x, approximate="tanh"))


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    torch.manual_seed(0)
    module = GeluRms().eval()
    with torch.no_grad():
        module.norm.weight.uniform_(0.5, 1.5)
    x = torch.randn(3, 5, 8)
    pt2 = tmp_path_factory.mktemp("opset") / "m.pt2"
    torch.export.save(torch.export.export(module, (x,), strict=False), pt2)
    with torch.no_grad():
        return pt2, x.numpy(), module(x).numpy()


def export(pt2, opset, out):
    proc = subprocess.run([str(PARITY), "export", str(pt2), "-o", str(out), "--opset", str(opset)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return onnx.load(str(out))


def run_refrt(model_path, x, tmp_path):
    ins = tmp_path / "in"
    ins.mkdir(exist_ok=True)
    (ins / "input_0.pb").write_bytes(onnx.numpy_helper.from_array(x).SerializeToString())
    proc = subprocess.run(
        [str(PARITY), "run", str(model_path), "--inputs", str(ins), "--outputs", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    t = onnx.TensorProto()
    t.ParseFromString((tmp_path / "out" / "output_0.pb").read_bytes())
    return onnx.numpy_helper.to_array(t)


@pytest.mark.parametrize("opset, fused, absent", [
    (18, set(), {"Gelu", "RMSNormalization"}),
    (20, {"Gelu"}, {"RMSNormalization"}),
    (23, {"Gelu", "RMSNormalization"}, set()),
])
def test_opset_picks_the_translation_and_numbers_agree(captured, tmp_path, opset, fused, absent):
    pt2, x, want = captured
    path = tmp_path / f"m{opset}.onnx"
    model = export(pt2, opset, path)
    assert {o.version for o in model.opset_import if o.domain in ("", "ai.onnx")} == {opset}
    ops = {n.op_type for n in model.graph.node}
    assert fused <= ops, ops
    assert not (absent & ops), ops
    onnx.checker.check_model(model, full_check=True)
    got = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {model.graph.input[0].name: x})[
        0
    ]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(run_refrt(path, x, tmp_path), want, rtol=1e-5, atol=1e-5)


def test_default_opset_is_20_when_the_program_calls_gelu(captured, tmp_path):
    """Without --opset the exporter picks 18, or 20 when the program calls gelu (one Gelu node, not five)."""
    pt2, x, want = captured
    proc = subprocess.run([str(PARITY), "export", str(pt2), "-o", str(tmp_path / "g.onnx")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    model = onnx.load(str(tmp_path / "g.onnx"))
    assert {o.version for o in model.opset_import if o.domain in ("", "ai.onnx")} == {20}
    assert "Gelu" in {n.op_type for n in model.graph.node} and "Erf" not in {n.op_type for n in model.graph.node}
    np.testing.assert_allclose(run_refrt(tmp_path / "g.onnx", x, tmp_path), want, rtol=1e-5, atol=1e-5)
    plain = tmp_path / "relu.pt2"
    program = torch.export.export(nn.Sequential(nn.Linear(8, 4), nn.ReLU()), (torch.from_numpy(x),), strict=False)
    torch.export.save(program, plain)
    proc = subprocess.run([str(PARITY), "export", str(plain), "-o", str(tmp_path / "r.onnx")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    model = onnx.load(str(tmp_path / "r.onnx"))
    assert {o.version for o in model.opset_import if o.domain in ("", "ai.onnx")} == {18}
