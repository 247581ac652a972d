"""Complex tensors at the graph's edges (docs/complex.md): complex64 / complex128 inputs, outputs, parameters and
buffers export as (real, imaginary) pairs in a trailing dim of 2, listed in the model's metadata; ONNX Runtime runs
the pairs, parity.runtime takes and returns complex arrays, and both match eager (the oracle), as complex numbers.
Capture saves complex inputs and outputs as pairs (case.json says which), and verify compares them as complex.
"""
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from torch.export import Dim

import parity.runtime as rt
from parity import _complex

ROOT = Path(__file__).resolve().parents[2]
PARITY = ROOT / os.environ.get("PARITY_BUILD_DIR", "build") / "parity"
MODES = ("strict", "nonstrict", "decomposed")


class Gain(torch.nn.Module):
    """A complex input times a complex buffer and a complex parameter, plus a real input: complex output."""

    def __init__(self):
        super().__init__()
        self.register_buffer("phase", torch.polar(torch.ones(6), torch.linspace(0, 2, 6)))
        self.gain = torch.nn.Parameter(torch.randn(6, dtype=torch.complex64))

    def forward(self, z, x):
        return z * self.phase * self.gain + x, z.abs()


class Spectra(torch.nn.Module):
    """torch.fft straight to complex outputs over a dynamic length."""

    def forward(self, x, z):
        return torch.fft.rfft(x), torch.fft.fft(z, norm="ortho"), torch.fft.irfft(z)


class Double(torch.nn.Module):
    """complex128 in and out."""

    def forward(self, a, b):
        return a.conj() * b - a, torch.view_as_real(b).sum(-1)


class Views(torch.nn.Module):
    """view_as_complex of real pairs to a complex output; view_as_real of a complex input to a real output."""

    def forward(self, pairs, z):
        return torch.view_as_complex(pairs) * z, torch.view_as_real(z * 1j)


def _c(*shape, dtype=torch.complex64):
    return torch.randn(*shape, dtype=dtype)


B, N = Dim("batch", min=1, max=16), Dim("length", min=2, max=64)
CASES = {
    "gain": (Gain, lambda: [(_c(3, 6), torch.randn(3, 6)), (_c(5, 6), torch.randn(5, 6))], ({0: B}, {0: B})),
    "spectra": (Spectra, lambda: [(torch.randn(2, 10), _c(2, 10)), (torch.randn(3, 7), _c(3, 7))],
                ({0: B, 1: N}, {0: B, 1: N})),
    "double": (Double, lambda: [(_c(2, 5, dtype=torch.complex128), _c(2, 5, dtype=torch.complex128)),
                                (_c(4, 5, dtype=torch.complex128), _c(4, 5, dtype=torch.complex128))],
               ({0: B}, {0: B})),
    "views": (Views, lambda: [(torch.randn(2, 4, 2), _c(2, 4)), (torch.randn(3, 4, 2), _c(3, 4))], ({0: B}, {0: B})),
}


def _export(tmp_path, name, mode):
    make, sets, shapes = CASES[name]
    torch.manual_seed(0)
    model = make()
    inputs = sets()
    ep = torch.export.export(model, inputs[0], dynamic_shapes=shapes, strict=mode == "strict")
    if mode == "decomposed":
        ep = ep.run_decompositions()
    torch.export.save(ep, tmp_path / "m.pt2")
    proc = subprocess.run([str(PARITY), "export", tmp_path / "m.pt2", "-o", tmp_path / "m.onnx"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return model, inputs, tmp_path / "m.onnx"


def _pairs(t: torch.Tensor) -> np.ndarray:
    return torch.view_as_real(t).numpy() if t.is_complex() else t.numpy()


def _close(got: np.ndarray, want: torch.Tensor, what: str):
    """As complex numbers where eager's output is complex: |got - want| <= atol + rtol |want| per element."""
    want = want.detach().numpy()
    assert got.dtype == want.dtype and got.shape == want.shape, f"{what}: {got.dtype} {got.shape} vs {want.dtype} " \
                                                                f"{want.shape}"
    tol = 1e-5 if want.dtype in (np.complex64, np.float32) else 1e-10
    err = np.abs(got.astype(np.complex128) - want.astype(np.complex128))
    assert (err <= tol + tol * np.abs(want)).all(), f"{what}: max |got - eager| {err.max():.3g}"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_complex_edges_match_eager_in_refrt_and_ort(tmp_path, name, mode):
    model, inputs, path = _export(tmp_path, name, mode)
    refrt = rt.InferenceSession(path, threads=1)
    ort_session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    in_names = [i.name for i in ort_session.get_inputs()]
    for args in inputs:  # set 1 has other sizes of the dynamic dims
        with torch.no_grad():
            want = model(*args)
        # ONNX Runtime sees the pairs; parity.runtime complex arrays.
        ours = refrt.run(None, {n: a.numpy() for n, a in zip(in_names, args)})
        theirs = ort_session.run(None, {n: _pairs(a) for n, a in zip(in_names, args)})
        for k, w in enumerate(want):
            _close(ours[k], w, f"refrt output {k}")
            got = theirs[k]
            if w.is_complex():
                assert got.shape == (*w.shape, 2), got.shape
                got = got[..., 0] + 1j * got[..., 1]
                got = got.astype(w.numpy().dtype)
            _close(got, w, f"ORT output {k}")


def test_model_metadata_lists_the_complex_edges(tmp_path):
    _, _, path = _export(tmp_path, "gain", "nonstrict")
    model = onnx.load(path)
    props = {p.key: p.value for p in model.metadata_props}
    assert json.loads(props["parity.complex_inputs"]) == {"z": "complex64"}
    assert json.loads(props["parity.complex_outputs"]) == {"add": "complex64"}
    # The pair layout: float32 with one more dim of 2; the scan reads what onnx reads.
    z = model.graph.input[0]
    assert z.type.tensor_type.elem_type == onnx.TensorProto.FLOAT
    assert [d.dim_value or d.dim_param for d in z.type.tensor_type.shape.dim][-2:] == [6, 2]
    assert "complex64" in z.doc_string
    assert _complex.model_metadata(path) == props == _complex.model_metadata(path.read_bytes())
    # The complex buffer and parameter are initializers of pairs.
    inits = {i.name: i for i in model.graph.initializer}
    assert list(inits["phase"].dims) == [6, 2] and inits["phase"].data_type == onnx.TensorProto.FLOAT
    phase = onnx.numpy_helper.to_array(inits["phase"])
    np.testing.assert_allclose(phase[:, 0] + 1j * phase[:, 1], np.exp(1j * np.linspace(0, 2, 6)), atol=1e-6)


def test_runtime_describes_complex_edges_and_takes_pairs_too(tmp_path):
    model, inputs, path = _export(tmp_path, "gain", "strict")
    sess = rt.InferenceSession(path, threads=1)
    z_arg = sess.get_inputs()[0]
    assert z_arg.type == "tensor(complex64)" and z_arg.shape[-1] == 6
    assert sess.get_outputs()[0].type == "tensor(complex64)" and sess.get_outputs()[1].type == "tensor(float)"
    z, x = inputs[0]
    with torch.no_grad():
        want = model(z, x)[0]
    # Pairs are accepted as they are; complex_pairs=True gives ORT's view of the outputs.
    _close(sess.run(None, {"z": _pairs(z), "x": x.numpy()})[0], want, "pairs in")
    raw = rt.InferenceSession(path, threads=1, complex_pairs=True)
    assert raw.get_inputs()[0].type == "tensor(float)"
    got = raw.run(None, {"z": _pairs(z), "x": x.numpy()})[0]
    assert got.shape == (*want.shape, 2)
    with pytest.raises(Exception, match="complex64: pass a complex array"):
        sess.run(None, {"z": z.real.numpy(), "x": x.numpy()})


def test_capture_saves_complex_as_pairs_and_verify_compares_as_complex(tmp_path):
    from scenarios.capture import capture_case
    from scenarios.registry import Case

    make, sets, shapes = CASES["spectra"]
    case = Case(name="complex_test_spectra", make_module=make, input_sets=sets, dynamic_shapes=shapes)
    line = capture_case(case, "nonstrict", tmp_path / "cases")
    assert line["status"] == "captured", line
    folder = tmp_path / "cases" / "complex_test_spectra" / "nonstrict"
    info = json.loads((folder / "case.json").read_text())
    assert info["complex_inputs"] == {"1": "complex64"}
    assert info["complex_outputs"] == {"0": "complex64", "1": "complex64"}
    z_in = onnx.TensorProto.FromString((folder / "test_data_set_0" / "input_1.pb").read_bytes())
    assert z_in.data_type == onnx.TensorProto.FLOAT and list(z_in.dims) == [2, 10, 2]
    assert "complex64" in z_in.doc_string
    out = tmp_path / "verify"
    proc = subprocess.run([str(PARITY), "verify", folder, "--out", out, "--no-html", "--quiet"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads((out / "report.json").read_text())
    outputs = report["cases"][0]["input_sets"][1]["outputs"]
    assert [o["dtype"] for o in outputs] == ["complex64", "complex64", "float32"]
    for o in outputs[:2]:
        assert o["refrt_vs_eager"]["complex"]["dtype"] == "complex64"
        assert o["refrt_vs_eager"]["passed"] and o["libtorch_vs_eager"]["passed"]
    assert "compared as complex" not in json.dumps(outputs[2])
    assert "## Complex outputs" in (out / "report.md").read_text()


def test_a_swapped_pair_fails_the_complex_comparison(tmp_path):
    """The comparison can fail: a case folder whose eager output has real and imaginary parts swapped."""
    from scenarios.capture import capture_case
    from scenarios.registry import Case

    make, sets, shapes = CASES["gain"]
    case = Case(name="complex_test_swapped", make_module=make, input_sets=sets, dynamic_shapes=shapes)
    assert capture_case(case, "nonstrict", tmp_path / "cases")["status"] == "captured"
    folder = tmp_path / "cases" / "complex_test_swapped" / "nonstrict"
    pb = folder / "test_data_set_0" / "output_0.pb"
    proto = onnx.TensorProto.FromString(pb.read_bytes())
    pairs = onnx.numpy_helper.to_array(proto)[..., ::-1].copy()
    pb.write_bytes(onnx.numpy_helper.from_array(pairs, proto.name).SerializeToString())
    out = tmp_path / "verify"
    subprocess.run([str(PARITY), "verify", folder, "--out", out, "--no-html", "--quiet"],
                   capture_output=True, text=True, timeout=600)
    report = json.loads((out / "report.json").read_text())
    first = report["cases"][0]["input_sets"][0]["outputs"][0]["refrt_vs_eager"]
    assert not first["passed"] and first["complex"]["dtype"] == "complex64" and first["numel"] == 18


class ScalarTimes(torch.nn.Module):
    """A complex Python scalar in the program (mul.Tensor(z, 2j), add.Tensor(z, 1 - 1j))."""

    def forward(self, z):
        return torch.fft.fft(z) * 2j + (1 - 1j), z.abs()


@pytest.mark.parametrize("mode", ["strict", "decomposed"])
def test_parity_verify_api_on_complex_inputs_and_scalars(tmp_path, mode):
    """parity.verify end to end: capture, export, refrt and the libtorch reference (which takes the complex
    scalar as a c10::Scalar), both against eager, with fresh sizes of the dynamic dim."""
    import parity

    result = parity.verify(ScalarTimes(), (_c(3, 8),), dynamic_shapes=({0: Dim("b")},), input_sets=[(_c(5, 8),)],
                           mode=mode, out=tmp_path / "out", fresh=1)
    assert result.passed, str(result)
    report = json.loads((tmp_path / "out" / "verify" / "report.json").read_text())
    first = report["cases"][0]["input_sets"][0]["outputs"][0]
    assert first["dtype"] == "complex64" and first["refrt_vs_eager"]["complex"]["dtype"] == "complex64"
