"""One oracle test per ATen translation (table: aten_cases.py).

Every tiny program is captured once per session with torch.export (in this process: fast), exported with
`parity export`, checked with onnx.checker, then run in ONNX Runtime and on refrt (`parity run`); both are
compared with eager PyTorch. Where refrt does not implement an ONNX op yet, the refrt leg is a strict
expected failure naming the op, so that it turns into a failure (to be removed from REFRT_LACKS) once the
kernel lands.
"""
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import onnx
import onnx.numpy_helper
import onnxruntime as ort
import pytest
import torch

from aten_cases import CASES, OpCase
from conftest import load_pb

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / os.environ.get("PARITY_BUILD_DIR", "build")
PARITY = BUILD / "parity"
DRIVER = BUILD / "parity_aten_driver"

# ONNX ops refrt does not implement on this branch (see `parity ops`).
REFRT_LACKS = {
    "Col2Im", "RandomNormalLike", "RandomUniformLike",
}


class _Fn(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


def _flat_outputs(value):
    if isinstance(value, torch.Tensor):
        return [value]
    out = []
    for v in value:
        out.extend(_flat_outputs(v))
    return out


def _save(path, array):
    path.write_bytes(onnx.numpy_helper.from_array(np.array(array, order="C")).SerializeToString())


def _capture(c: OpCase, index: int, root: Path) -> dict:
    d = root / f"{index:03d}_{c.id}"
    d.mkdir()
    torch.manual_seed(index)
    args = c.inputs()
    try:
        dyn = {"args": tuple(c.dynamic.get("x") if i == 0 else None for i in range(len(args)))} if c.dynamic else None
        ep = torch.export.export(_Fn(c.fn), args, dynamic_shapes=dyn, strict=False)
        if c.decompose:
            ep = ep.run_decompositions()
        if c.edit:
            c.edit(ep)
        targets = sorted({_target_key(n.target) for n in ep.graph.nodes if n.op == "call_function"})
        torch.export.save(ep, d / "model.pt2")
    except Exception as e:  # a capture failure is that case's test failure, not the session's
        return {"dir": d, "error": f"{type(e).__name__}: {e}"}
    torch.manual_seed(index)
    expected = _flat_outputs(c.fn(*[a.clone() for a in args]))
    (d / "test_data_set_0").mkdir()
    for i, a in enumerate(args):
        _save(d / "test_data_set_0" / f"input_{i}.pb", a.numpy())
    for i, e in enumerate(expected):
        _save(d / "test_data_set_0" / f"output_{i}.pb", e.detach().numpy())
    return {"dir": d, "targets": targets, "n_outputs": len(expected), "opset": c.opset}


def _target_key(target) -> str:
    if isinstance(target, torch._ops.OpOverload):
        ns, rest = target.name().split("::", 1)
        return f"{ns}::{rest}" if "." in rest else f"{ns}::{rest}.default"
    if isinstance(target, torch._ops.HigherOrderOperator):
        return f"higher_order::{target.name()}"
    module = getattr(target, "__module__", "") or ""
    return f"{module}::{getattr(target, '__name__', str(target))}"


@pytest.fixture(scope="session")
def captured(tmp_path_factory):
    """Every case captured, then exported and run on refrt by one driver process (see aten_ops_driver.cc)."""
    root = tmp_path_factory.mktemp("aten")
    infos = {c.id + f"#{i}": _capture(c, i, root) for i, c in enumerate(CASES)}
    manifest = []
    for info in infos.values():
        if "error" in info:
            continue
        d = info["dir"]
        info["onnx"] = d / "model.onnx"
        info["refrt_out"] = d / "refrt_out"
        manifest.append((info, {"pt2": str(d / "model.pt2"), "onnx": str(info["onnx"]),
                                "inputs": str(d / "test_data_set_0"), "outputs": str(info["refrt_out"]),
                                "opset": info["opset"]}))
    (root / "manifest.json").write_text(json.dumps([m for _, m in manifest]))
    proc = subprocess.run([str(DRIVER), root / "manifest.json", root / "results.json"], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    for (info, _), result in zip(manifest, json.loads((root / "results.json").read_text())):
        info.update(result)
    return infos


def parity(*args):
    proc = subprocess.run([str(PARITY), *map(str, args)], capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise AssertionError(f"parity {' '.join(map(str, args))} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


def _exported(captured, c, index):
    info = captured[c.id + f"#{index}"]
    assert "error" not in info, info.get("error")
    assert c.key in info["targets"], f"the captured graph does not hold {c.key}: {info['targets']}"
    assert "export_error" not in info, info["export_error"]
    proto = onnx.load(str(info["onnx"]))
    onnx.checker.check_model(proto, full_check=True)
    assert proto.opset_import[0].version == c.opset
    missing = set(c.onnx_ops) - {n.op_type for n in proto.graph.node}
    assert not missing, f"the export at opset {c.opset} lacks {sorted(missing)}"
    return info, proto


def _compare(c, got, expected_dir, n, proto):
    # Mutated user inputs follow the user's outputs ("mutated_input.<name>"); eager records the user's only.
    mutated = sum(o.name.startswith("mutated_") for o in proto.graph.output)
    assert len(got) == n + mutated, f"{len(got)} outputs, eager has {n} (+ {mutated} mutated inputs)"
    got = got[:n]
    for i, value in enumerate(got):
        want = load_pb(expected_dir / f"output_{i}.pb")
        assert value.shape == want.shape, f"output {i}: shape {value.shape} vs eager {want.shape}"
        assert value.dtype == want.dtype, f"output {i}: dtype {value.dtype} vs eager {want.dtype}"
        if c.check == "close":
            np.testing.assert_allclose(value, want, rtol=c.tol, atol=c.tol / 10, err_msg=f"output {i}")


def _params():
    return [pytest.param(c, i, id=c.id) for i, c in enumerate(CASES)]


@pytest.mark.parametrize("c,index", _params())
def test_onnxruntime_matches_eager(captured, c, index):
    info, proto = _exported(captured, c, index)
    session = ort.InferenceSession(str(info["onnx"]), providers=["CPUExecutionProvider"])
    sets = info["dir"] / "test_data_set_0"
    feeds = {inp.name: load_pb(sets / f"input_{i}.pb") for i, inp in enumerate(session.get_inputs())}
    _compare(c, session.run(None, feeds), sets, info["n_outputs"], proto)


@pytest.mark.parametrize("c,index", _params())
def test_refrt_matches_eager(captured, c, index, request):
    info, proto = _exported(captured, c, index)
    lacking = sorted({n.op_type for n in proto.graph.node} & REFRT_LACKS) + ([c.refrt_lacks] if c.refrt_lacks else [])
    if lacking:
        request.applymarker(pytest.mark.xfail(strict=True, reason=f"refrt lacks {', '.join(lacking)}"))
    assert "run_error" not in info, info["run_error"]
    out = info["refrt_out"]
    got = [load_pb(out / f"output_{i}.pb") for i in range(len(list(out.glob("output_*.pb"))))]
    _compare(c, got, info["dir"] / "test_data_set_0", info["n_outputs"], proto)


def test_cli_export_and_run_match_the_driver(captured, tmp_path):
    """The driver calls what `parity export` / `parity run` call: same model bytes, same outputs."""
    info = next(i for k, i in captured.items() if k.startswith("add.Tensor#"))
    model = tmp_path / "model.onnx"
    parity("export", info["dir"] / "model.pt2", "-o", model)
    assert model.read_bytes() == info["onnx"].read_bytes()
    parity("run", model, "--inputs", info["dir"] / "test_data_set_0", "--outputs", tmp_path / "out")
    np.testing.assert_array_equal(load_pb(tmp_path / "out" / "output_0.pb"), load_pb(info["refrt_out"] / "output_0.pb"))
