"""The fp64 rule (scenarios/fp64.py, verify/src/fp64_rule.cc): capture saves eager's float64 outputs, the peers
and `parity verify` give a floating output that fails the fixed rule a second chance against them.

The oracle is arithmetic done by hand: values are +-2^-16 around an exact centre, so every rmse is a power of
two, and the verdicts follow from `res <= m * ref + atol / 10` on paper.
"""
import json
import subprocess

import numpy as np
import onnx
import onnx.helper as oh
import onnx.numpy_helper
import pytest
import torch
from conftest import PARITY, load_pb
from torch import nn

from scenarios import capture, fp64, peers
from scenarios.registry import Case

STEP = 2.0 ** -16  # 1.53e-5: a difference of two steps (3.05e-5) fails float32's fixed rule near zero
ATOL = 1e-5


def around_zero(n, amplitude, flip=False):
    signs = np.where(np.arange(n) % 2 == 0, 1.0, -1.0) * (-1 if flip else 1)
    return (signs * amplitude).astype(np.float32)


def test_the_rule_passes_float32_noise_and_fails_a_real_error():
    eager, reference = around_zero(1000, STEP), np.zeros(1000)
    assert peers.compare(eager, around_zero(1000, STEP, flip=True))[0] == 1000  # the fixed rule fails everywhere
    v = fp64.check(eager, around_zero(1000, STEP, flip=True), reference, ATOL)
    assert (v["passed"], v["res_error"], v["ref_error"], v["multiplier"]) == (True, STEP, STEP, 2.0)
    assert v["additive"] == pytest.approx(1e-6)
    assert fp64.text(v) == "fp64 rule: rmse vs float64 1.53e-05 <= 2 x eager's 1.53e-05 + 1.00e-06"
    far = fp64.check(eager, around_zero(1000, 8 * STEP, flip=True), reference, ATOL)  # 1.22e-4 > 3.15e-5
    assert (far["passed"], far["res_error"]) == (False, 8 * STEP)
    # Eager exact: only the additive term (atol / 10) is left.
    assert not fp64.check(np.zeros(1000, np.float32), around_zero(1000, 2 * STEP), reference, ATOL)["passed"]


def test_multiplier_three_below_1000_elements_and_for_half_dtypes():
    # res 2.5 * 2^-16 = 3.81e-5: within 3 x 1.53e-5 + 1e-6 = 4.68e-5, not within 2 x ... = 3.15e-5.
    small = fp64.check(around_zero(999, STEP), around_zero(999, 2.5 * STEP, flip=True), np.zeros(999), ATOL)
    assert (small["multiplier"], small["passed"]) == (3.0, True)
    large = fp64.check(around_zero(1000, STEP), around_zero(1000, 2.5 * STEP, flip=True), np.zeros(1000), ATOL)
    assert (large["multiplier"], large["passed"]) == (2.0, False)
    assert fp64.multiplier(5000, "float16") == fp64.multiplier(5000, "bfloat16") == 3.0


def test_nan_placement_shapes_and_a_missing_reference_still_fail():
    eager, actual, reference = around_zero(1000, STEP), around_zero(1000, STEP, flip=True), np.zeros(1000)
    eager[0] = np.nan
    moved = fp64.check(eager, actual, reference, ATOL)
    assert not moved["passed"] and "NaN" in moved["problem"] and moved["res_error"] is None
    both = actual.copy()
    both[0] = np.nan
    assert fp64.check(eager, both, reference, ATOL)["passed"]  # same NaN on both sides: left out of the rmse
    assert fp64.check(eager, both[:999], reference, ATOL) is None  # shapes differ: the rule does not apply
    assert fp64.check(eager, both, None, ATOL) is None
    assert fp64.check(np.ones(4, np.int64), np.zeros(4, np.int64), np.ones(4), ATOL) is None
    stale = fp64.check(np.ones(1000, np.float32), np.zeros(1000, np.float32), np.zeros(1000), ATOL)
    assert not stale["passed"] and "differs from eager" in stale["problem"]  # rmse 1 vs eager: no oracle
    m, _, verdict = peers.judge(around_zero(1000, STEP), around_zero(1000, STEP, flip=True), None)
    assert (m, verdict) == (1000, None)


def write_pb(path, array, name="y"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(onnx.numpy_helper.from_array(array, name).SerializeToString())


def twice_onnx(path):
    """y = 2 * x in ONNX, float32 [1000]: exact, so ORT's output is exactly twice the input."""
    graph = oh.make_graph([oh.make_node("Add", ["x", "x"], ["y"])], "twice",
                          [oh.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1000])],
                          [oh.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1000])])
    onnx.save(oh.make_model(graph, opset_imports=[oh.make_opsetid("", 18)]), str(path))


def hand_case(folder, eager, reference, model=None):
    """A case folder with x = 0 (so y = 0 exactly), eager's recorded output `eager` and, unless None, its
    float64 output `reference`; with `model` a model.pt2 of y = 2 * x and an empty case.json."""
    x = np.zeros(1000, np.float32)
    write_pb(folder / "test_data_set_0" / "input_0.pb", x, "x")
    write_pb(folder / "test_data_set_0" / "output_0.pb", eager)
    if reference is not None:
        write_pb(fp64.reference_path(folder / "test_data_set_0", 0), reference)
    if model is not None:
        torch.export.save(torch.export.export(model, (torch.from_numpy(x),)), str(folder / "model.pt2"))
        (folder / "case.json").write_text("{}\n")
    return folder


def test_onnx_runtime_peer_passes_by_the_rule_only_with_a_reference(tmp_path):
    twice_onnx(tmp_path / "twice.onnx")
    noisy = around_zero(1000, STEP)  # eager 1.5e-5 off the exact 0: the fixed rule fails ORT's exact 0 by atol
    with_ref = hand_case(tmp_path / "with", noisy, np.zeros(1000))
    run = peers.run_ort(tmp_path / "twice.onnx", peers.load_sets(with_ref))
    assert (run["status"], run["mismatches"], run["fp64_outputs"]) == ("pass", 1000, 1), run
    assert (run["fp64_rule"]["res_error"], run["fp64_rule"]["ref_error"]) == (0.0, STEP)
    assert (run["fp64_rule"]["input_set"], run["fp64_rule"]["output"]) == ("test_data_set_0", 0)
    json.dumps(run, allow_nan=False)  # the line goes to C++'s JSON parser: no NaN or Infinity
    without = hand_case(tmp_path / "without", noisy, None)
    assert peers.run_ort(tmp_path / "twice.onnx", peers.load_sets(without))["status"] == "fail"
    exact_eager = hand_case(tmp_path / "exact", noisy, noisy.astype(np.float64))  # eager was exact: ORT is off
    run = peers.run_ort(tmp_path / "twice.onnx", peers.load_sets(exact_eager))
    assert (run["status"], run["fp64_outputs"], run["fp64_rule"]["passed"]) == ("fail", 0, False), run


class Twice(nn.Module):
    def forward(self, x):
        return x * 2


def verify(folder, out):
    proc = subprocess.run([str(PARITY), "verify", str(folder), "--out", str(out), "--no-html"], capture_output=True,
                          text=True, timeout=600)
    return proc, json.loads((out / "report.json").read_text())


def test_parity_verify_applies_the_rule_to_refrt_and_libtorch_and_reports_it(tmp_path):
    noisy = around_zero(1000, STEP)
    proc, report = verify(hand_case(tmp_path / "with", noisy, np.zeros(1000), Twice()), tmp_path / "out1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    case = report["cases"][0]
    out = case["input_sets"][0]["outputs"][0]
    for side in ("refrt_vs_eager", "libtorch_vs_eager"):
        assert (out[side]["passed"], out[side]["mismatches"], out[side]["fp64_rule"]["passed"]) == (True, 1000, True)
        assert (out[side]["fp64_rule"]["res_error"], out[side]["fp64_rule"]["ref_error"]) == (0.0, STEP)
    assert (case["status"], case["fp64_rule"]["input_set"]) == ("pass", "test_data_set_0")
    assert report["summary"]["fp64_rule"]["cases"] == 1
    assert "fp64 rule: rmse vs float64 0.00e+00 <= 2 x eager's 1.53e-05" in proc.stdout
    assert "1 passed only by the fp64 rule" in (tmp_path / "out1" / "report.md").read_text()
    # No float64 reference: the old verdict. Eager exact: refrt's exact 0 is no excuse for eager's noise.
    proc, report = verify(hand_case(tmp_path / "without", noisy, None, Twice()), tmp_path / "out2")
    assert (proc.returncode, report["cases"][0]["status"]) == (1, "fail")
    assert "fp64_rule" not in report["cases"][0] and "fp64_rule" not in report["summary"]
    proc, report = verify(hand_case(tmp_path / "exact", noisy, noisy.astype(np.float64), Twice()), tmp_path / "out3")
    assert (proc.returncode, report["cases"][0]["status"]) == (1, "fail")
    assert report["cases"][0]["fp64_rule"]["passed"] is False


class Deep(nn.Module):
    """Float32 rounding shows: a sum of many products."""
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(64, 64))

    def forward(self, x):
        for _ in range(4):
            x = torch.tanh(x @ self.w)
        return x, x.argmax(-1)


class Float32Inside(Deep):
    def forward(self, x):
        return x @ self.w.float()  # in the float64 run a float64 input meets a float32 weight: it fails


class Noisy(Deep):
    def forward(self, x):
        return x + torch.rand_like(x)  # float and double draws differ: the float64 run is no oracle


def capture_one(tmp_path, module, fp64_reference=True):
    case = Case(name="fp64_probe", make_module=lambda: module, input_sets=lambda: [(torch.randn(3, 64),)],
                fp64_reference=fp64_reference)
    line = capture.capture_case(case, "nonstrict", tmp_path / ("on" if fp64_reference else "off"), force=True)
    assert line["status"] == "captured", line
    return tmp_path / ("on" if fp64_reference else "off") / "fp64_probe" / "nonstrict"


def test_capture_saves_the_float64_run_of_floating_outputs_without_changing_the_rest(tmp_path):
    torch.manual_seed(0)
    module = Deep()
    on, off = capture_one(tmp_path, module), capture_one(tmp_path, module, fp64_reference=False)
    set_on, set_off = on / "test_data_set_0", off / "test_data_set_0"
    for name in ("input_0.pb", "output_0.pb", "output_1.pb"):
        assert (set_on / name).read_bytes() == (set_off / name).read_bytes()
    x = torch.from_numpy(load_pb(set_on / "input_0.pb").copy())
    with torch.no_grad():
        want = module.double()(x.double())[0].numpy()
    got = load_pb(fp64.reference_path(set_on, 0))
    assert got.dtype == np.float64 and np.array_equal(got, want)
    assert not fp64.reference_path(set_on, 1).exists()  # argmax: integers need no reference
    assert sorted(p.name for p in set_on.glob("output_*.pb")) == ["output_0.pb", "output_1.pb"]
    assert json.loads((on / "case.json").read_text())["fp64_outputs"] == [1]
    assert "fp64_outputs" not in json.loads((off / "case.json").read_text())


@pytest.mark.parametrize("module, why", [(Float32Inside(), "the float64 run failed"),
                                         (Noisy(), "the float64 run differs from float32")])
def test_capture_keeps_no_reference_when_the_float64_run_is_no_oracle(tmp_path, module, why):
    case_dir = capture_one(tmp_path, module)
    info = json.loads((case_dir / "case.json").read_text())
    assert info["fp64_outputs"] == [0] and why in info["fp64_note"], info
    assert not (case_dir / "test_data_set_0" / fp64.FOLDER).exists()


def test_a_model_too_large_for_a_float64_copy_gets_none(tmp_path, monkeypatch):
    monkeypatch.setattr(fp64, "MAX_TWIN_BYTES", 64 * 64 * 8 - 1)  # Deep's weight in float64 is one byte more
    info = json.loads((capture_one(tmp_path, Deep()) / "case.json").read_text())
    assert info["fp64_outputs"] == [0] and "would pass" in info["fp64_note"], info
