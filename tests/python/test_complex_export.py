"""Complex values the exporter refuses, each with an error naming what and where (the translated ones
are rows of aten_cases_complex.py; complex graph inputs and outputs are test_complex.py's)."""
import os
import subprocess
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
PARITY = ROOT / os.environ.get("PARITY_BUILD_DIR", "build") / "parity"


class _Fn(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


def _export_error(tmp_path, fn, x):
    ep = torch.export.export(_Fn(fn), (x,), strict=False)
    torch.export.save(ep, tmp_path / "m.pt2")
    proc = subprocess.run([str(PARITY), "export", tmp_path / "m.pt2", "-o", tmp_path / "m.onnx"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0, "export of a program it cannot translate exactly succeeded"
    assert not (tmp_path / "m.onnx").exists()
    return proc.stderr


def test_an_op_without_a_complex_translation_is_refused_not_run_on_the_pairs(tmp_path):
    # exp of a complex value: the real translation would exponentiate both parts.
    err = _export_error(tmp_path, lambda x: torch.view_as_real(torch.exp(torch.fft.rfft(x))), torch.randn(2, 8))
    assert "aten::exp.default on complex values" in err, err
