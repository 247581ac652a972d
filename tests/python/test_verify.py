"""parity verify: intermediates and first divergence (planted faults), --onnx, --fresh.

Faults are planted with the onnx package into our own export; the oracle for "which node is wrong"
is the edit itself, and for values libtorch/eager.
"""
import json

import onnx
import onnx.helper
import onnx.numpy_helper
import pytest
from test_end_to_end import parity


def report_entry(out):
    report = json.loads((out / "report.json").read_text())
    assert report["schema_version"] == 2
    assert len(report["cases"]) == 1
    return report["cases"][0]


def export_case(captured, tmp_path, name="mlp_docs", mode="strict"):
    model = tmp_path / "ours.onnx"
    parity("export", captured / name / mode / "model.pt2", "-o", model)
    return onnx.load(str(model))


def node(model, name):
    return next(n for n in model.graph.node if n.name == name)


def change_op_type(model):
    node(model, "node_sigmoid_1").op_type = "Relu"
    return "sigmoid_1", "node_sigmoid_1", "aten::sigmoid.default", "Relu", "self.fc0"


def change_constant(model):
    node(model, "node_linear_2").attribute.append(onnx.helper.make_attribute("alpha", 1.5))
    return "linear_2", "node_linear_2", "aten::linear.default", "Gemm", "self.fc1"


def test_intermediates_of_a_correct_export_all_agree(captured, tmp_path):
    out = tmp_path / "v"
    parity("verify", captured / "mlp_docs" / "strict", "--out", out, "--intermediates")
    entry = report_entry(out)
    assert entry["status"] == "pass" and entry["first_divergence"] is None
    for s in entry["input_sets"]:
        values = s["intermediates"]["values"]
        # Every FX node of this program has an ONNX value of the same name: cat, 5 linear, 4 sigmoid.
        assert [v["fx_node"] for v in values][:3] == ["cat", "linear", "sigmoid"] and len(values) == 10
        for v in values:
            assert v["passed"] and v["max_abs_error"] < 1e-5, v
            assert sum(v["histogram"]) == v["numel"]


@pytest.mark.parametrize("plant", [change_op_type, change_constant])
def test_planted_fault_is_named_as_first_divergence(captured, tmp_path, plant):
    model = export_case(captured, tmp_path)
    fx_node, onnx_node, aten_op, onnx_op, source_text = plant(model)
    altered = tmp_path / "altered.onnx"
    onnx.save(model, str(altered))
    out = tmp_path / "v"
    proc = parity("verify", captured / "mlp_docs" / "strict", "--onnx", altered, "--out", out, "--intermediates",
                  check=False)
    assert proc.returncode == 1, proc.stderr
    entry = report_entry(out)
    assert entry["status"] == "fail" and entry["onnx_given"] and entry["export"] == "skipped"
    d = entry["first_divergence"]
    assert d is not None, entry
    assert (d["fx_node"], d["onnx_node"], d["op"], d["onnx_op"]) == (fx_node, onnx_node, aten_op, onnx_op)
    assert "basic.py" in d["source"] and source_text in d["source"], d["source"]
    assert d["max_abs_error"] > 1e-3
    # Upstream values agree exactly as before; the altered one and everything after it diverge.
    values = entry["input_sets"][0]["intermediates"]["values"]
    names = [v["fx_node"] for v in values]
    k = names.index(fx_node)
    assert all(v["passed"] for v in values[:k]) and not values[k]["passed"]
    assert "first divergence: " + fx_node in proc.stdout
    assert f"FX node `{fx_node}`" in (out / "report.md").read_text()


def test_onnx_option_verifies_a_given_model(captured, tmp_path):
    model = export_case(captured, tmp_path, "linear_regression", "nonstrict")
    given = tmp_path / "given.onnx"
    onnx.save(model, str(given))
    out = tmp_path / "v"
    parity("verify", captured / "linear_regression" / "nonstrict", "--onnx", given, "--out", out)
    entry = report_entry(out)
    assert entry["status"] == "pass" and entry["onnx"] == str(given) and entry["export"] == "skipped"
    assert not (out / "model.onnx").exists()  # nothing was exported


def test_onnx_option_needs_one_case_and_an_existing_file(captured, tmp_path):
    proc = parity("verify", captured / "linear_regression", "--onnx", tmp_path / "missing.onnx", check=False)
    assert proc.returncode == 3 and "missing.onnx" in proc.stderr
    given = tmp_path / "m.onnx"
    parity("export", captured / "linear_regression" / "strict" / "model.pt2", "-o", given)
    proc = parity("verify", captured / "linear_regression", "--onnx", given, check=False)
    assert proc.returncode == 2 and "one case" in proc.stderr


def dims_of(case_dir):
    info = json.loads((case_dir / "case.json").read_text())
    return {d["name"] for d in info["dynamic_dims"]}


def captured_batches(case_dir):
    from conftest import load_pb
    return {load_pb(s / "input_0.pb").shape[0] for s in case_dir.glob("test_data_set_*")}


@pytest.mark.parametrize("mode", ["strict", "decomposed"])
def test_fresh_sets_use_new_dims_and_agree(captured, tmp_path, mode):
    case_dir = captured / "mlp_batch" / mode
    out = tmp_path / "v"
    parity("verify", case_dir, "--out", out, "--fresh", "4")
    entry = report_entry(out)
    assert entry["status"] == "pass"
    fresh = entry["fresh_sets"]
    assert [f["name"] for f in fresh] == [f"fresh_{k}" for k in range(4)]
    seen = captured_batches(case_dir)
    for f in fresh:
        assert set(f["dims"]) == dims_of(case_dir) == {"batch"}
        batch = f["dims"]["batch"]
        assert batch >= 2 and batch not in seen, (batch, seen)
        assert f["outputs"][0]["shape"][0] == batch
        assert f["outputs"][0]["refrt_vs_libtorch"]["passed"]


def loaded_libraries(*args):
    """The shared objects the dynamic loader opened while `parity ARGS` ran (LD_DEBUG=files)."""
    import os
    import subprocess

    from conftest import PARITY
    proc = subprocess.run([str(PARITY), *map(str, args)], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, LD_DEBUG="files"))
    return proc, [line.split("file=")[1].split()[0] for line in proc.stderr.splitlines() if "file=" in line]


def test_only_the_reference_loads_libtorch(captured, tmp_path):
    """libtorch's start-up (its static operator registration) is paid by the commands that run the libtorch
    reference, not by run, export or ops: the reference is a module loaded on first use."""
    model = tmp_path / "m.onnx"
    proc, libs = loaded_libraries("export", captured / "mlp_docs" / "strict" / "model.pt2", "-o", model)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert not [lib for lib in libs if "libtorch" in lib or "libc10" in lib], libs
    proc, libs = loaded_libraries("ops")
    assert proc.returncode == 0 and not [lib for lib in libs if "libtorch" in lib], libs
    proc, libs = loaded_libraries("verify", captured / "mlp_docs" / "strict", "--out", tmp_path / "v", "--quiet")
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert any("libparity_reference.so" in lib for lib in libs) and any("libtorch_cpu" in lib for lib in libs), libs


def test_a_program_that_differs_from_eager_is_blamed_on_the_capture(captured, tmp_path):
    """When libtorch, running the same exported program, misses eager's outputs as refrt does (torch.export
    specialised something), the report says the capture differs, not the export. Planted: eager's stored
    output of one set is changed."""
    import shutil

    import numpy as np
    from conftest import load_pb
    case = tmp_path / "mlp_docs" / "strict"
    shutil.copytree(captured / "mlp_docs" / "strict", case)
    pb = case / "test_data_set_0" / "output_0.pb"
    tensor = onnx.numpy_helper.from_array(load_pb(pb) + np.float32(1))
    pb.write_bytes(tensor.SerializeToString())
    out = tmp_path / "v"
    parity("verify", case, "--out", out, check=False)
    entry = report_entry(out)
    assert entry["status"] == "fail"
    assert "the capture, not the export, differs from eager" in entry["error"], entry["error"]
    # A fault in our export is not blamed on the capture.
    model = export_case(captured, tmp_path)
    change_op_type(model)
    onnx.save(model, str(tmp_path / "altered.onnx"))
    parity("verify", captured / "mlp_docs" / "strict", "--onnx", tmp_path / "altered.onnx", "--out", tmp_path / "w",
           check=False)
    assert "not the export" not in report_entry(tmp_path / "w")["error"]
