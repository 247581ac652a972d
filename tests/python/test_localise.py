"""A failing case explains itself without any flag: `parity verify` re-runs its first failing input set
with every intermediate compared and names the first divergence (FX node, op, ONNX node, source line);
every mismatch carries NaN / Inf counts of both sides and the worst elements with their indices.

The fault is planted with the onnx package (Sigmoid -> Log: NaN wherever the Linear before it is
negative); the oracle for "which node is wrong" is the edit itself, for values libtorch / eager."""
import json

import numpy as np
import onnx
import pytest
from conftest import load_pb
from test_end_to_end import parity


@pytest.fixture(scope="module")
def planted(captured, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("localise")
    model = tmp / "ours.onnx"
    parity("export", captured / "mlp_docs" / "strict" / "model.pt2", "-o", model)
    proto = onnx.load(str(model))
    next(n for n in proto.graph.node if n.name == "node_sigmoid_1").op_type = "Log"
    onnx.save(proto, str(tmp / "altered.onnx"))
    out = tmp / "verify"
    proc = parity("verify", captured / "mlp_docs" / "strict", "--onnx", tmp / "altered.onnx", "--out", out, check=False)
    return proc, json.loads((out / "report.json").read_text())["cases"][0], out


def test_a_failing_case_names_its_first_divergence_without_flags(planted):
    proc, entry, out = planted
    assert proc.returncode == 1 and entry["status"] == "fail", proc.stdout + proc.stderr
    d = entry["first_divergence"]
    assert d is not None, entry
    assert (d["fx_node"], d["onnx_node"], d["op"], d["onnx_op"]) == (
        "sigmoid_1",
        "node_sigmoid_1",
        "aten::sigmoid.default",
        "Log",
    )
    assert "basic.py" in d["source"] and "self.fc0" in d["source"], d["source"]
    assert d["input_set"] == "test_data_set_0"
    # Only the first failing set was re-run with intermediates, and it says so.
    sets = entry["input_sets"]
    assert sets[0]["intermediates"]["localised"] is True and "intermediates" not in sets[1]
    assert "first divergence: sigmoid_1" in proc.stdout
    assert "first divergence: sigmoid_1 (aten::sigmoid.default -> ONNX Log)" in entry["error"]
    assert "FX node `sigmoid_1`" in (out / "report.md").read_text()


def test_the_first_divergence_counts_nans_and_names_the_worst_elements(planted, captured):
    _, entry, _ = planted
    detail = entry["first_divergence"]["detail"]
    # Log of a negative input is NaN: ours has NaNs, libtorch's sigmoid none.
    assert detail["nan"]["expected"] == 0 and detail["nan"]["actual"] > 0, detail
    worst = detail["worst"]
    assert worst and worst[0]["abs_error"] == "Infinity" and "nan" in worst[0]["actual"], worst
    assert all(len(w["index"]) == 2 for w in worst)  # [batch, feature] of the [N, 32] activation


def test_every_mismatching_output_carries_its_detail(planted, captured):
    _, entry, _ = planted
    case = captured / "mlp_docs" / "strict"
    for s in entry["input_sets"]:
        eager = load_pb(case / s["name"] / "output_0.pb")
        cmp = s["outputs"][0]["refrt_vs_eager"]
        assert not cmp["passed"]
        d = cmp["detail"]
        assert d["nan"]["expected"] == int(np.isnan(eager).sum()) == 0
        assert d["inf"]["expected"] == int(np.isinf(eager).sum())
        for w in d["worst"]:
            assert len(w["index"]) == eager.ndim
            assert float(w["expected"]) == pytest.approx(float(eager[tuple(w["index"])]), rel=1e-6, abs=1e-7)
        assert s["outputs"][0]["libtorch_vs_eager"]["passed"] and "detail" not in s["outputs"][0]["libtorch_vs_eager"]


def test_a_passing_case_is_not_re_run(captured, tmp_path):
    out = tmp_path / "v"
    parity("verify", captured / "mlp_docs" / "strict", "--out", out)
    entry = json.loads((out / "report.json").read_text())["cases"][0]
    assert entry["status"] == "pass" and entry["first_divergence"] is None
    assert all("intermediates" not in s for s in entry["input_sets"])
