"""`parity export` options: mutated state as extra outputs (and --drop-mutations), the failure report
(--report), opset 23's fused ops, deterministic output.

Oracles: eager PyTorch (the module's buffers and inputs after a forward call), onnx.checker and
onnxruntime; the report is checked for the facts a user needs (stage, op, count, node, source line).
"""
import zipfile
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from conftest import PARITY, ROOT, parity  # noqa: E402,F401
from torch import nn


class Counter(nn.Module):
    """A buffer incremented in place, a user input written in place, batch norm stats in training mode."""
    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.zeros(1))
        self.bn = nn.BatchNorm1d(3)

    def forward(self, x, state):
        self.count.add_(1)
        state.mul_(0.5)
        return self.bn(x) * self.count + state.sum()


def _capture(tmp_path, mode):
    torch.manual_seed(0)
    module = Counter().train()
    args = (torch.randn(4, 3), torch.randn(2))
    ep = torch.export.export(module, args, strict=(mode == "strict"))
    if mode == "decomposed":
        ep = ep.run_decompositions()
    pt2 = tmp_path / f"counter_{mode}.pt2"
    torch.export.save(ep, pt2)
    # Eager oracle: a fresh module with the same initial state, run once.
    torch.manual_seed(0)
    eager = Counter().train()
    x, state = (a.clone() for a in args)
    y = eager(x, state)
    expected = {"user": y.detach().numpy(), "mutated_buffer.count": eager.count.numpy(),
                "mutated_buffer.bn.running_mean": eager.bn.running_mean.numpy(),
                "mutated_buffer.bn.running_var": eager.bn.running_var.numpy(),
                "mutated_buffer.bn.num_batches_tracked": eager.bn.num_batches_tracked.numpy(),
                "mutated_input.state": state.numpy()}
    return pt2, [a.numpy() for a in args], expected


@pytest.mark.parametrize("mode", ["strict", "nonstrict", "decomposed"])
def test_mutated_state_becomes_named_outputs(tmp_path, mode):
    pt2, inputs, expected = _capture(tmp_path, mode)
    model = tmp_path / "m.onnx"
    parity("export", pt2, "-o", model)
    proto = onnx.load(str(model))
    onnx.checker.check_model(proto, full_check=True)
    names = [o.name for o in proto.graph.output]
    assert set(names[1:]) == set(expected) - {"user"}, names
    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    got = dict(zip(names, session.run(None, dict(zip([i.name for i in session.get_inputs()], inputs)))))
    np.testing.assert_allclose(got[names[0]], expected["user"], rtol=1e-5, atol=1e-6)
    for name in names[1:]:
        np.testing.assert_allclose(got[name], expected[name], rtol=1e-5, atol=1e-6, err_msg=name)
    # refrt computes the same state.
    ins = tmp_path / "inputs"
    ins.mkdir()
    for i, a in enumerate(inputs):
        (ins / f"input_{i}.pb").write_bytes(onnx.numpy_helper.from_array(a).SerializeToString())
    parity("run", model, "--inputs", ins, "--outputs", tmp_path / "out")
    for i, name in enumerate(names):
        t = onnx.TensorProto()
        t.ParseFromString((tmp_path / "out" / f"output_{i}.pb").read_bytes())
        want = expected["user"] if i == 0 else expected[name]
        np.testing.assert_allclose(onnx.numpy_helper.to_array(t), want, rtol=1e-5, atol=1e-6, err_msg=name)


def test_drop_mutations_keeps_the_user_outputs_only(tmp_path):
    pt2, _, _ = _capture(tmp_path, "decomposed")
    model = tmp_path / "m.onnx"
    parity("export", pt2, "-o", model, "--drop-mutations")
    assert [o.name for o in onnx.load(str(model)).graph.output] == [onnx.load(str(model)).graph.output[0].name]
    assert len(onnx.load(str(model)).graph.output) == 1


def test_two_exports_are_byte_identical(tmp_path):
    pt2, _, _ = _capture(tmp_path, "strict")
    parity("export", pt2, "-o", tmp_path / "a.onnx")
    parity("export", pt2, "-o", tmp_path / "b.onnx")
    assert (tmp_path / "a.onnx").read_bytes() == (tmp_path / "b.onnx").read_bytes()


def _with_unknown_op(src: Path, dst: Path):
    """The same program with every mul.Tensor renamed to an overload no translation knows."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename.endswith(".json") and "/models/" in item.filename:
                data = data.replace(b"torch.ops.aten.mul.Tensor", b"torch.ops.aten.frobnicate.Tensor")
            zout.writestr(item, data)


def test_failure_report_names_stage_ops_nodes_and_graph(tmp_path):
    pt2, _, _ = _capture(tmp_path, "decomposed")
    bad = tmp_path / "bad.pt2"
    _with_unknown_op(pt2, bad)
    out = tmp_path / "bad.onnx"
    proc = parity("export", bad, "-o", out, "--report", expect=4)
    report = tmp_path / "bad.report.md"
    assert str(report) in proc.stderr and not out.exists()
    text = report.read_text()
    assert "**failed** at stage `export`" in text
    assert "| `aten::frobnicate.Tensor` |" in text  # the unsupported-op table, with its count
    count = text.split("| `aten::frobnicate.Tensor` | ")[1].split(" |")[0]
    assert int(count) >= 2
    assert "test_export_options.py" in text  # each failing node's stack trace names the user's file
    assert "## Graph (" in text and "aten::frobnicate.Tensor(" in text


def test_report_after_a_successful_export(tmp_path):
    pt2, _, _ = _capture(tmp_path, "strict")
    parity("export", pt2, "-o", tmp_path / "ok.onnx", "--report")
    text = (tmp_path / "ok.report.md").read_text()
    assert (
        "- result: exported" in text
        and "None: every operator" in text
        and "| `aten::batch_norm.default` | 1 | yes |" in text
    )


def test_report_on_an_unreadable_archive(tmp_path):
    bad = tmp_path / "junk.pt2"
    bad.write_text("not a zip")
    parity("export", bad, "-o", tmp_path / "junk.onnx", "--report", expect=3)
    text = (tmp_path / "junk.report.md").read_text()
    assert "**failed** at stage" in text and "could not be read" in text
