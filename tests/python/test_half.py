"""Half precision end to end (docs/half-precision.md): the case folder holds float16 / bfloat16 values bit for
bit, and the issue's attention + MLP block verifies through parity.verify in both dtypes, with a dynamic
batch and sequence, its report stating the numbers it compared with.

Oracles: torch's own tensors (the bits), eager PyTorch (the verdict's reference)."""
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import onnx
import pytest
import torch
from onnx import numpy_helper
from torch import nn
from torch.export import Dim

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))  # this tree's package, whichever tree the venv's install points to
sys.path.insert(0, str(ROOT))

import parity  # noqa: E402
from scenarios.capture import tensor_proto  # noqa: E402


class AttentionBlock(nn.Module):
    """The issue's example: nn.MultiheadAttention, LayerNorm, Linear, GELU."""

    def __init__(self, d=64):
        super().__init__()
        self.attn = nn.MultiheadAttention(d, 4, batch_first=True)
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_case_folder_keeps_the_bits(dtype):
    half = dtype == torch.float16
    bits = torch.tensor(np.array([0x0000, 0x8000, 0x0001, 0x7BFF if half else 0x7F7F, 0x7C00 if half else 0x7F80,
                                  0x3C01 if half else 0x3F81], dtype=np.uint16).view(np.int16))
    value = bits.view(dtype).reshape(2, 3)  # zeros, the smallest subnormal, the largest finite, inf, 1 + ulp
    proto = onnx.TensorProto.FromString(tensor_proto(value, "x").SerializeToString())
    back = numpy_helper.to_array(proto)
    assert back.dtype == (np.float16 if dtype == torch.float16 else ml_dtypes.bfloat16)
    assert back.shape == (2, 3)
    np.testing.assert_array_equal(back.view(np.int16).ravel(), bits.numpy())


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_attention_block_verifies_in_its_dtype(tmp_path, dtype):
    torch.manual_seed(0)
    model = AttentionBlock().eval().to(dtype)
    sets = [(torch.randn(2, 8, 64, dtype=dtype),), (torch.randn(3, 5, 64, dtype=dtype),)]
    result = parity.verify(model, sets[0], dynamic_shapes=({0: Dim("batch"), 1: Dim("seq")},), input_sets=sets,
                           out=tmp_path, name=f"half_block_{str(dtype)[6:]}")
    assert result.status == "pass", str(result)
    onnx_model = onnx.load(str(Path(result.report_md).parent / "model.onnx"))
    want = onnx.TensorProto.FLOAT16 if dtype == torch.float16 else onnx.TensorProto.BFLOAT16
    assert onnx_model.graph.input[0].type.tensor_type.elem_type == want  # exported as it is, not upcast
    report = Path(result.report_md).read_text()
    assert "## Tolerances" in report and f"| {str(dtype)[6:]} |" in report


@pytest.mark.parametrize("dtype, opset", [(torch.float32, 18), (torch.float16, 18), (torch.bfloat16, 22)])
def test_automatic_opset_makes_valid_onnx(tmp_path, dtype, opset):
    """bfloat16 Conv and pooling are valid ONNX from opset 22: a bfloat16 program exports at 22 by itself (the
    checker, with full shape inference, refuses a bfloat16 Conv at 18); others keep the default 18."""
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.MaxPool2d(2)).eval().to(dtype)
    pt2, out = tmp_path / "m.pt2", tmp_path / "m.onnx"
    torch.export.save(torch.export.export(model, (torch.randn(1, 3, 8, 8, dtype=dtype),), strict=False), pt2)
    proc = subprocess.run([str(parity.parity_bin()), "export", str(pt2), "-o", str(out)], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    exported = onnx.load(str(out))
    assert [o.version for o in exported.opset_import if o.domain in ("", "ai.onnx")] == [opset]
    onnx.checker.check_model(exported, full_check=True)
