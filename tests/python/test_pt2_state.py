"""Every kind of state torch.export.save writes into a .pt2 round-trips through `parity export`:
parameters, persistent and non-persistent buffers, lifted tensor constants, tensors shared between
names (tied weights); a custom object is refused with an error naming the entry; a `decompose` re-save
exports too.

Oracles: eager PyTorch (the module's forward), onnx.checker and onnxruntime running Parity's ONNX; the
libtorch reference (`parity verify`) on the same archive.
"""
import json
import subprocess
import sys
import zipfile

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from conftest import PARITY, ROOT, parity  # noqa: E402,F401
from torch import nn


class AllState(nn.Module):
    """A parameter, a persistent and a non-persistent buffer, a plain tensor attribute (a lifted constant),
    and one tensor registered under two buffer names."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.register_buffer("scale", torch.tensor([1.5, -2.0, 0.5]))
        self.register_buffer("inv_freq", torch.arange(3, dtype=torch.float32) / 7, persistent=False)
        self.offset = torch.tensor([0.25, 0.5, 0.75])  # not registered: torch.export lifts it as a constant
        shared = torch.tensor([3.0, 1.0, 2.0])
        self.register_buffer("shared_a", shared)
        self.register_buffer("shared_b", shared)

    def forward(self, x):
        y = self.fc(x) * self.scale + torch.sin(self.inv_freq) + self.offset
        return y * self.shared_a - self.shared_b


class TiedLM(nn.Module):
    """An embedding and an output projection that share one weight (tied word embeddings)."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 6)
        self.head = nn.Linear(6, 10, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids):
        return self.head(torch.tanh(self.embed(ids)))


def _save(module, args, path, **kw):
    ep = torch.export.export(module.eval(), args, **kw)
    torch.export.save(ep, str(path))
    return ep


def _run_onnx(path, args):
    sess = ort.InferenceSession(str(path))
    return sess.run(None, {i.name: a.numpy() for i, a in zip(sess.get_inputs(), args)})


@pytest.mark.parametrize("strict", [False, True], ids=["nonstrict", "strict"])
def test_every_kind_of_state_round_trips(tmp_path, strict):
    torch.manual_seed(0)
    module, x = AllState(), torch.randn(5, 4)
    ep = _save(module, (x,), tmp_path / "m.pt2", strict=strict)
    kinds = {s.kind.name for s in ep.graph_signature.input_specs}
    assert {"PARAMETER", "BUFFER", "CONSTANT_TENSOR"} <= kinds, kinds
    assert any(s.persistent is False for s in ep.graph_signature.input_specs if s.kind.name == "BUFFER")
    parity("export", tmp_path / "m.pt2", "-o", tmp_path / "m.onnx")
    model = onnx.load(str(tmp_path / "m.onnx"))
    onnx.checker.check_model(model, full_check=True)
    got = _run_onnx(tmp_path / "m.onnx", (x,))[0]
    np.testing.assert_allclose(got, module(x).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_tied_weights_become_one_initializer(tmp_path):
    torch.manual_seed(0)
    module, ids = TiedLM(), torch.randint(0, 10, (2, 5))
    _save(module, (ids,), tmp_path / "m.pt2")
    parity("export", tmp_path / "m.pt2", "-o", tmp_path / "m.onnx")
    model = onnx.load(str(tmp_path / "m.onnx"))
    weights = [i for i in model.graph.initializer if list(i.dims) == [10, 6]]
    assert len(weights) == 1, [i.name for i in weights]
    got = _run_onnx(tmp_path / "m.onnx", (ids,))[0]
    np.testing.assert_allclose(got, module(ids).detach().numpy(), rtol=1e-5, atol=1e-6)


def _rewrite_model_json(src, dst, edit):
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename.endswith("models/model.json"):
                data = json.dumps(edit(json.loads(data))).encode()
            zout.writestr(item, data)


def test_custom_object_is_refused_naming_the_entry(tmp_path):
    _save(nn.Linear(2, 2), (torch.randn(3, 2),), tmp_path / "m.pt2")

    def add_custom_obj(model):
        specs = model["graph_module"]["signature"]["input_specs"]
        specs.insert(0, {"custom_obj": {"arg": {"name": "obj0", "class_fqn": "__torch__.torch.classes.my.Thing"},
                                        "custom_obj_name": "m.thing"}})
        return model

    _rewrite_model_json(tmp_path / "m.pt2", tmp_path / "bad.pt2", add_custom_obj)
    proc = parity("export", tmp_path / "bad.pt2", "-o", tmp_path / "bad.onnx", expect=4)  # valid, unsupported
    assert "custom object 'm.thing'" in proc.stderr and "bad.pt2" in proc.stderr, proc.stderr
    assert not (tmp_path / "bad.onnx").exists()


def test_missing_stored_tensor_names_input_and_records(tmp_path):
    module = AllState()
    _save(module, (torch.randn(2, 4),), tmp_path / "m.pt2")

    def rename_buffer(model):
        for spec in model["graph_module"]["signature"]["input_specs"]:
            if "buffer" in spec and spec["buffer"]["buffer_name"] == "inv_freq":
                spec["buffer"]["buffer_name"] = "gone"
        return model

    _rewrite_model_json(tmp_path / "m.pt2", tmp_path / "bad.pt2", rename_buffer)
    proc = parity("export", tmp_path / "bad.pt2", "-o", tmp_path / "bad.onnx", expect=3)
    assert "non-persistent buffer 'gone'" in proc.stderr and "data/constants/" in proc.stderr, proc.stderr


class NormThenScale(nn.Module):
    def forward(self, x):
        return torch.linalg.vector_norm(x, dim=-1, keepdim=True) * x


def test_decompose_rewrites_only_what_parity_lacks(tmp_path):
    """scenarios.decompose with an explicit op list: the op is gone, the rest of the program stays, and the
    re-saved archive exports and matches eager."""
    x = torch.randn(3, 4)
    ep = _save(NormThenScale(), (x,), tmp_path / "m.pt2")
    before = {str(n.target) for n in ep.graph.nodes if n.op == "call_function"}
    assert "aten.linalg_vector_norm.default" in before, before
    proc = subprocess.run([sys.executable, "-m", "scenarios.decompose", tmp_path / "m.pt2", "-o", tmp_path / "d.pt2",
                           "--ops", "aten::linalg_vector_norm.default", "--parity", PARITY],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    after = {str(n.target) for n in torch.export.load(str(tmp_path / "d.pt2")).graph.nodes if n.op == "call_function"}
    assert "aten.linalg_vector_norm.default" not in after and "aten.mul.Tensor" in after, after
    parity("export", tmp_path / "d.pt2", "-o", tmp_path / "d.onnx")
    np.testing.assert_allclose(
        _run_onnx(tmp_path / "d.onnx", (x,))[0], NormThenScale()(x).numpy(), rtol=1e-5, atol=1e-6
    )
