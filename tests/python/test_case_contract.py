"""The case folder contract (README "Case folders"): a hand-written minimal case verifies, and every
malformed case.json field is an exit-3 error that names the file and the field."""
import json
import shutil
import subprocess

import onnx.numpy_helper
import pytest
import torch
from test_end_to_end import PARITY
from torch import nn


class Tiny(nn.Module):
    def forward(self, x, y):
        return torch.tanh(x) * y + 1


def write_pb(path, array, name):
    path.write_bytes(onnx.numpy_helper.from_array(array, name).SerializeToString())


@pytest.fixture(scope="module")
def minimal_case(tmp_path_factory):
    """model.pt2 from torch.export.save, one test_data_set_0 and case.json written by hand: no Parity code."""
    folder = tmp_path_factory.mktemp("hand") / "tiny_tanh"
    (folder / "test_data_set_0").mkdir(parents=True)
    x, y = torch.randn(2, 3), torch.randn(2, 3)
    torch.export.save(torch.export.export(Tiny(), (x, y)), str(folder / "model.pt2"))
    write_pb(folder / "test_data_set_0" / "input_0.pb", x.numpy(), "x")
    write_pb(folder / "test_data_set_0" / "input_1.pb", y.numpy(), "y")
    write_pb(folder / "test_data_set_0" / "output_0.pb", (torch.tanh(x) * y + 1).numpy(), "out")
    (folder / "case.json").write_text("{}\n")
    return folder


def verify(folder, out):
    return subprocess.run([str(PARITY), "verify", str(folder), "--out", str(out), "--no-html"], capture_output=True,
                          text=True, timeout=600)


def test_a_hand_written_minimal_case_verifies(minimal_case, tmp_path):
    proc = verify(minimal_case, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    entry = json.loads((tmp_path / "report.json").read_text())["cases"][0]
    # Defaults: the folder's name, mode "custom", status "captured" (no "status" field is not a failed capture).
    assert (entry["case"], entry["mode"], entry["status"]) == ("tiny_tanh", "custom", "pass")
    assert entry["input_sets"][0]["outputs"][0]["refrt_vs_eager"]["passed"] is True


def test_case_json_fields_given_explicitly_are_used(minimal_case, tmp_path):
    folder = tmp_path / "case"
    shutil.copytree(minimal_case, folder)
    (folder / "case.json").write_text(json.dumps({
        "schema_version": 1, "name": "tanh_mul", "mode": "strict", "status": "captured", "error": None,
        "input_names": ["x", "y"], "output_names": ["add"], "input_sets": 1, "torch_libraries": [],
        "export_plugins": [], "dynamic_dims": [], "description": "by hand", "future_field": {"ignored": True}}))
    proc = verify(folder, tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    entry = json.loads((tmp_path / "out" / "report.json").read_text())["cases"][0]
    assert (entry["case"], entry["mode"], entry["status"]) == ("tanh_mul", "strict", "pass")


MALFORMED = [
    ({"name": 3}, '"name": expected a string, got number'),
    ({"name": ""}, '"name": must not be empty'),
    ({"mode": None}, '"mode": expected a string, got null'),
    ({"status": "done"}, '"status": expected "captured" or "capture_failed"'),
    ({"status": True}, '"status": expected a string, got boolean'),
    ({"error": 5}, '"error": expected a string, got number'),
    ({"input_sets": "2"}, '"input_sets": expected an integer >= 0, got string'),
    ({"input_sets": -1}, '"input_sets": expected an integer >= 0, got -1'),
    ({"input_sets": 3}, '"input_sets": says 3 but the folder holds 1'),
    ({"input_names": "x"}, '"input_names": expected a list of strings, got string'),
    ({"output_names": [1]}, '"output_names[0]": expected a string, got number'),
    ({"dynamic_dims": {"x": {"0": "batch"}}}, '"dynamic_dims": expected a list of {"input": int'),
    ({"dynamic_dims": ["batch"]}, '"dynamic_dims[0]": expected an object'),
    ({"dynamic_dims": [{"input": 0, "axis": "0", "name": "batch"}]}, '"dynamic_dims[0].axis": expected an integer'),
    ({"dynamic_dims": [{"axis": 0, "name": "batch"}]}, '"dynamic_dims[0].input": missing'),
    ({"dynamic_dims": [{"input": 0, "axis": 0}]}, '"dynamic_dims[0].name": missing'),
    ({"dynamic_dims": [{"input": 0, "axis": 0, "name": 7}]}, '"dynamic_dims[0].name": expected a string'),
    ({"torch_libraries": "libops.so"}, '"torch_libraries": expected a list of strings, got string'),
    ({"export_plugins": [None]}, '"export_plugins[0]": expected a string, got null'),
    ({"decomposed_ops": "aten::relu_.default"}, '"decomposed_ops": expected a list of strings, got string'),
    ({"python_op_modules": [7]}, '"python_op_modules[0]": expected a string, got number'),
    ({"schema_version": 2}, '"schema_version": expected 1'),
    ({"capture_seconds": "fast"}, '"capture_seconds": expected a number, got string'),
    ({"description": []}, '"description": expected a string, got array'),
    ({"eager_state": "yes"}, '"eager_state": expected true or false, got string'),
]


@pytest.mark.parametrize(
    "fields, message", MALFORMED, ids=[m[1].split('"')[1] + f"-{i}" for i, m in enumerate(MALFORMED)]
)
def test_each_malformed_field_is_an_exit_3_error_naming_file_and_field(minimal_case, tmp_path, fields, message):
    folder = tmp_path / "case"
    shutil.copytree(minimal_case, folder)
    (folder / "case.json").write_text(json.dumps(fields))
    proc = verify(folder, tmp_path / "out")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert f"{folder / 'case.json'}: field {message}" in proc.stderr, proc.stderr
    assert "json.exception" not in proc.stderr


@pytest.mark.parametrize("text, message", [
    ('{"name": ', "broken JSON: parse error at line 1"),
    ("[1, 2]", "expected a JSON object, got array"),
])
def test_a_case_json_that_is_not_an_object_is_an_exit_3_error(minimal_case, tmp_path, text, message):
    folder = tmp_path / "case"
    shutil.copytree(minimal_case, folder)
    (folder / "case.json").write_text(text)
    proc = verify(folder, tmp_path / "out")
    assert proc.returncode == 3 and f"{folder / 'case.json'}: {message}" in proc.stderr, proc.stderr
    assert "json.exception" not in proc.stderr


def test_a_captured_case_without_model_or_data_is_an_exit_3_error(minimal_case, tmp_path):
    folder = tmp_path / "case"
    shutil.copytree(minimal_case, folder)
    (folder / "model.pt2").unlink()
    proc = verify(folder, tmp_path / "out")
    assert proc.returncode == 3 and "no model.pt2" in proc.stderr, proc.stderr
    shutil.copytree(minimal_case, folder, dirs_exist_ok=True)
    shutil.rmtree(folder / "test_data_set_0")
    proc = verify(folder, tmp_path / "out")
    assert proc.returncode == 3 and "no test_data_set_<k>" in proc.stderr, proc.stderr


def test_a_failed_capture_is_reported_with_its_error(minimal_case, tmp_path):
    folder = tmp_path / "case"
    shutil.copytree(minimal_case, folder)
    (folder / "case.json").write_text(json.dumps({"status": "capture_failed", "error": "torch.export said no"}))
    proc = verify(folder, tmp_path / "out")
    entry = json.loads((tmp_path / "out" / "report.json").read_text())["cases"][0]
    assert (entry["status"], entry["error"]) == ("capture_failed", "torch.export said no")
    assert proc.returncode == 0, proc.stderr  # torch.export's refusal is a result, not Parity's failure


class Counter(nn.Module):
    """A buffer written twice per call: eager leaves 2."""

    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.zeros(()))

    def forward(self, x):
        self.count.add_(1)
        self.count.add_(1)
        return x * self.count


@pytest.fixture(scope="module")
def counter_case(tmp_path_factory):
    """A hand-written case whose program writes its buffer; case.json says eager's state is recorded."""
    folder = tmp_path_factory.mktemp("hand") / "counter"
    (folder / "test_data_set_0").mkdir(parents=True)
    x = torch.randn(2, 3)
    torch.export.save(torch.export.export(Counter(), (x,)), str(folder / "model.pt2"))
    write_pb(folder / "test_data_set_0" / "input_0.pb", x.numpy(), "x")
    write_pb(folder / "test_data_set_0" / "output_0.pb", (x * 2).numpy(), "out")
    (folder / "case.json").write_text(json.dumps({"eager_state": True}))
    return folder


@pytest.mark.parametrize("recorded, passes, headline", [
    (2.0, True, None),
    (3.0, False, "mutated_buffer.count (test_data_set_0): eager 3, refrt 2"),  # a wrong record is caught
    # No record: eager left the buffer as it was (0), so an export that writes it fails.
    (None, False, "mutated_buffer.count (test_data_set_0): eager 0, refrt 2"),
])
def test_mutation_outputs_are_judged_against_eagers_recorded_state(counter_case, tmp_path, recorded, passes,
                                                                    headline):
    folder = tmp_path / "case"
    shutil.copytree(counter_case, folder)
    if recorded is not None:
        write_pb(folder / "test_data_set_0" / "state_0.pb", torch.tensor(recorded).numpy(), "mutated_buffer.count")
    proc = verify(folder, tmp_path / "out")
    assert proc.returncode == (0 if passes else 1), proc.stderr  # 1: a case failed
    entry = json.loads((tmp_path / "out" / "report.json").read_text())["cases"][0]
    state = entry["input_sets"][0]["outputs"][1]
    assert (state["name"], state["kind"]) == ("mutated_buffer.count", "mutation")
    assert state["refrt_vs_eager"]["passed"] is passes and state["libtorch_vs_eager"]["passed"] is passes
    assert entry["status"] == ("pass" if passes else "fail"), entry["error"]
    if headline:
        assert headline in entry["error"] and entry["max_abs_error"] > 0, entry["error"]


def test_state_eager_wrote_without_an_output_fails(counter_case, tmp_path):
    """Eager's record names a tensor the model returns no output for: that lost update fails the case."""
    folder = tmp_path / "case"
    shutil.copytree(counter_case, folder)
    write_pb(folder / "test_data_set_0" / "state_0.pb", torch.tensor(2.0).numpy(), "mutated_buffer.count")
    write_pb(folder / "test_data_set_0" / "state_1.pb", torch.tensor(5.0).numpy(), "mutated_buffer.elsewhere")
    proc = verify(folder, tmp_path / "out")
    entry = json.loads((tmp_path / "out" / "report.json").read_text())["cases"][0]
    assert entry["status"] == "fail", proc.stderr
    assert "mutated_buffer.elsewhere (test_data_set_0): eager writes this state, but the exported model has no " \
           "output for it" in entry["error"], entry["error"]
