"""Capture: every case x mode is captured, the test data is eager's, the Dim names travel in the archive."""
import json
import zipfile

import onnx
import onnx.numpy_helper
import pytest
import torch

from scenarios import capture
from scenarios.registry import Case, all_cases

MODES = ("strict", "nonstrict", "decomposed")


def load_pb(path):
    t = onnx.TensorProto()
    t.ParseFromString(path.read_bytes())
    return torch.from_numpy(onnx.numpy_helper.to_array(t).copy())


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    root = tmp_path_factory.mktemp("capture")
    results = [capture.capture_case(c, m, root) for c in all_cases() for m in MODES]
    assert all(r["status"] == "captured" for r in results), results
    return root


def test_registry_has_the_foundation_cases():
    names = [c.name for c in all_cases()]
    assert {"linear_regression", "mlp_docs", "mlp_batch"} <= set(names)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["linear_regression", "mlp_docs", "mlp_batch"])
def test_case_folder_layout_and_eager_outputs(out, name, mode):
    case_dir = out / name / mode
    info = json.loads((case_dir / "case.json").read_text())
    assert info["status"] == "captured" and info["mode"] == mode and info["torch_version"] == torch.__version__
    assert info["input_sets"] >= 2
    ep = torch.export.load(str(case_dir / "model.pt2"))
    batch_sizes = set()
    for k in range(info["input_sets"]):
        set_dir = case_dir / f"test_data_set_{k}"
        inputs = [load_pb(set_dir / f"input_{i}.pb") for i in range(len(info["input_names"]))]
        batch_sizes.add(inputs[0].shape[0])
        # The oracle: the reloaded program on the stored inputs reproduces the stored eager outputs.
        args = _rebuild_args(name, inputs)
        got = torch.utils._pytree.tree_leaves(ep.module()(*args))
        for i, value in enumerate(got):
            torch.testing.assert_close(value, load_pb(set_dir / f"output_{i}.pb"), rtol=1e-5, atol=1e-6)
    assert len(batch_sizes) == info["input_sets"], "each input set must use a different batch size"


def _rebuild_args(name, flat):
    if name == "mlp_docs":
        return (flat[0], {"tensor_x": flat[1]}, [flat[2]])
    return tuple(flat)


def test_dim_names_are_stored_in_the_archive(out):
    with zipfile.ZipFile(out / "mlp_docs" / "strict" / "model.pt2") as z:
        entry = next(n for n in z.namelist() if n.endswith("extra/parity_dims.json"))
        dims = json.loads(z.read(entry))
    assert list(dims.values()) == ["batch"]
    info = json.loads((out / "mlp_docs" / "strict" / "case.json").read_text())
    assert [d["input_name"] for d in info["dynamic_dims"]] == info["input_names"]
    assert {d["symbol"] for d in info["dynamic_dims"]} == set(dims)


def test_second_capture_is_cached(out):
    case = next(c for c in all_cases() if c.name == "linear_regression")
    assert capture.capture_case(case, "strict", out)["status"] == "cached"
    assert capture.capture_case(case, "strict", out, force=True)["status"] == "captured"


class DataDependentBranch(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:  # a Python branch on a tensor value: torch.export refuses it
            return x + 1
        return x - 1


def test_a_case_torch_export_cannot_capture_is_reported(tmp_path):
    case = Case(name="data_dependent_branch", make_module=DataDependentBranch,
                input_sets=lambda: [(torch.randn(3, 2),), (torch.randn(5, 2),)],
                dynamic_shapes=lambda: ({0: torch.export.Dim("batch")},))
    result = capture.capture_case(case, "strict", tmp_path)
    assert result["status"] == "capture_failed" and result["error"]
    info = json.loads((tmp_path / "data_dependent_branch" / "strict" / "case.json").read_text())
    assert info["status"] == "capture_failed" and not (tmp_path / "data_dependent_branch" / "strict" / "model.pt2").exists()


def test_unknown_filter_is_a_usage_error(tmp_path, capsys):
    assert capture.main(["--out", str(tmp_path), "--filter", "no_such_case_xyz"]) == 2
    assert "no_such_case_xyz" in capsys.readouterr().err
