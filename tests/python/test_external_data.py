"""`parity export --external-data`: weights in a separate file, the standard ONNX external-data layout.

Oracles: onnx.checker.check_model(path) (checks the external data references), onnx's own loader
(load_external_data), onnxruntime and eager PyTorch. The layout facts checked are the spec's: location
relative to the model, offset and length, offsets aligned, tensors below the threshold inline.
"""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from conftest import PARITY, ROOT, parity  # noqa: E402,F401
from onnx import numpy_helper
from torch import nn


class ThreeLinear(nn.Module):
    """Weights of 1.2 MB (64 KiB-aligned when external), 77 KB and 12 KB, biases from 40 bytes."""
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(600, 512)
        self.b = nn.Linear(512, 38)
        self.c = nn.Linear(38, 10)

    def forward(self, x):
        return self.c(torch.relu(self.b(torch.relu(self.a(x)))))


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("extdata")
    torch.manual_seed(0)
    module = ThreeLinear().eval()
    x = torch.randn(3, 600)
    pt2 = tmp / "three.pt2"
    torch.export.save(torch.export.export(module, (x,)), pt2)
    with torch.no_grad():
        expected = module(x).numpy()
    sizes = {name: p.numel() * 4 for name, p in module.named_parameters()}
    return pt2, x.numpy(), expected, sizes


def _ort(path, x):
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return sess.run(None, {sess.get_inputs()[0].name: x})[0]


def _refrt(path, x, tmp):
    inputs = tmp / "inputs"
    inputs.mkdir(exist_ok=True)
    (inputs / "input_0.pb").write_bytes(numpy_helper.from_array(x, "x").SerializeToString())
    parity("run", path, "--inputs", inputs, "--outputs", tmp / "outputs")
    return numpy_helper.to_array(onnx.load_tensor(str(tmp / "outputs" / "output_0.pb")))


def test_external_data_layout_checker_onnxruntime_and_refrt(captured, tmp_path):
    pt2, x, expected, sizes = captured
    out = tmp_path / "model.onnx"
    proc = parity("export", pt2, "-o", out, "--external-data", "--external-data-threshold", "1024")
    assert "model.onnx.data" in proc.stdout
    data = tmp_path / "model.onnx.data"
    assert data.exists()
    onnx.checker.check_model(str(out))  # by path: resolves and bounds-checks every external reference
    model = onnx.load(str(out), load_external_data=False)
    ranges = []
    for t in model.graph.initializer:
        nbytes = int(np.prod(t.dims)) * 4
        if nbytes >= 1024:
            assert t.data_location == onnx.TensorProto.EXTERNAL, t.name
            kv = {e.key: e.value for e in t.external_data}
            assert kv["location"] == "model.onnx.data"
            offset, length = int(kv["offset"]), int(kv["length"])
            assert length == nbytes
            assert offset % (65536 if nbytes >= 1 << 20 else 64) == 0, (t.name, offset)
            ranges.append((offset, offset + length))
        else:
            assert t.data_location != onnx.TensorProto.EXTERNAL and len(t.raw_data) == nbytes, t.name
    ranges.sort()
    assert all(a[1] <= b[0] for a, b in zip(ranges, ranges[1:])), "external ranges overlap"
    assert ranges[-1][1] <= data.stat().st_size
    assert len(ranges) == sum(1 for n in sizes.values() if n >= 1024)
    # onnx's own loader reads the same bytes the module has.
    full = onnx.load(str(out))
    weights = {t.name: numpy_helper.to_array(t) for t in full.graph.initializer}
    torch.manual_seed(0)
    reference = ThreeLinear().eval()
    for name, p in reference.named_parameters():
        np.testing.assert_array_equal(weights[name], p.detach().numpy())
    np.testing.assert_allclose(_ort(out, x), expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(_refrt(out, x, tmp_path), expected, rtol=1e-5, atol=1e-5)
    assert not [p for p in tmp_path.iterdir() if ".tmp." in p.name]


def test_inline_export_streams_large_weights_into_one_file(captured, tmp_path):
    pt2, x, expected, _ = captured
    out = tmp_path / "inline.onnx"
    parity("export", pt2, "-o", out)
    assert not (tmp_path / "inline.onnx.data").exists()
    onnx.checker.check_model(str(out))
    model = onnx.load(str(out))
    assert all(t.data_location != onnx.TensorProto.EXTERNAL for t in model.graph.initializer)
    np.testing.assert_allclose(_ort(out, x), expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(_refrt(out, x, tmp_path), expected, rtol=1e-5, atol=1e-5)
    # Deterministic: a second export is byte-identical.
    parity("export", pt2, "-o", tmp_path / "again.onnx")
    assert (tmp_path / "again.onnx").read_bytes() == out.read_bytes()


def test_external_data_file_name_and_bad_names(captured, tmp_path):
    pt2, x, expected, _ = captured
    out = tmp_path / "named.onnx"
    parity("export", pt2, "-o", out, "--external-data-file", "weights.bin")
    assert (tmp_path / "weights.bin").exists() and not (tmp_path / "named.onnx.data").exists()
    onnx.checker.check_model(str(out))
    np.testing.assert_allclose(_ort(out, x), expected, rtol=1e-5, atol=1e-5)
    for bad in ["../weights.bin", "/tmp/weights.bin", "sub/weights.bin"]:
        proc = parity("export", pt2, "-o", tmp_path / "bad.onnx", "--external-data-file", bad, expect=2)
        assert bad in proc.stderr
    proc = parity("export", pt2, "-o", tmp_path / "bad.onnx", "--external-data", "--external-data-threshold", "lots",
                  expect=2)
    assert "--external-data-threshold" in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["named.onnx", "weights.bin"]
