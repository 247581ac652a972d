"""The ATen schema sweep (scenarios/sweep/aten_schema_sweep.py): its table follows the installed torch's
schemas (no selected overload dropped), every overload an OpInfo sample reaches is a case whose program
holds that overload, set 1 moves data-dependent sizes, and a sample of it runs through the matrix in the
three modes with the per-overload summary counting what the report says."""
import json
import re
import subprocess
import sys

import pytest
import torch
from test_end_to_end import PARITY, ROOT

SWEEP = ROOT / "scenarios" / "sweep" / "aten_schema_sweep.py"
# A data-dependent output size, a Tensor[] return, a SymInt[] argument: three classes of the sweep.
SAMPLE = ("aten.nonzero.default", "aten.split_with_sizes.default", "aten.view.default")


def _cases():
    from scenarios import suite
    return {c.name: c for c in suite.load_file(SWEEP)}


def _sweep():
    return next(iter(_cases().values())).make_module.__globals__


def test_the_table_follows_the_installed_schemas():
    sweep = _sweep()
    table = sweep["load_table"]()
    assert table["torch_version"] == torch.__version__, "torch changed: rebuild the table (aten_schema_sweep.py map)"
    selected = sweep["selected_overloads"]()
    assert set(table["overloads"]) == set(selected)
    assert {ov: row["reasons"] for ov, row in table["overloads"].items()} == selected
    assert "symint_list_arg" in selected["aten.view.default"] and "dynamic_output_shape" in selected[
        "aten.nonzero.default"] and "non_tensor_return" in selected["aten.split_with_sizes.default"]
    assert "aten.add.Tensor" not in selected and "aten.relu.default" not in selected


def test_every_reached_overload_is_a_case_and_the_others_say_why():
    sweep = _sweep()
    table = sweep["load_table"]()
    reached = {ov for ov, row in table["overloads"].items() if row.get("opinfo")}
    # Left out with a reason: OpInfos whose eager output differs between runs (uninitialised memory).
    left_out = sweep["left_out"](table)
    assert {"aten.empty_strided.default", "aten.new_empty.default"} <= set(left_out)
    assert all("eager is no oracle" in why for why in left_out.values())
    assert set(_cases()) == {ov.replace(".", "_") for ov in reached - set(left_out)}
    assert len(reached) >= 40
    for ov, row in table["overloads"].items():
        assert row.get("opinfo") or row.get("why_not"), ov


@pytest.mark.parametrize("overload", SAMPLE + ("aten.masked_select.default", "aten.bincount.default"))
def test_the_case_program_holds_its_overload(overload):
    """Checked by torch.export itself, not by the table that chose the samples."""
    case = _cases()[overload.replace(".", "_")]
    (args, kwargs), _ = case.examples()
    ep = torch.export.export(case.module(), args, kwargs, dynamic_shapes=case.shapes(), strict=False)
    ops = {str(n.target) for ep_ in (ep, ep.run_decompositions()) for n in ep_.graph.nodes if n.op == "call_function"}
    assert overload in ops, sorted(ops)


def test_set_one_changes_data_dependent_sizes():
    case = _cases()["aten_nonzero_default"]
    (set0, _), (set1, _) = case.examples()
    assert [t.shape for t in set0[0]] == [t.shape for t in set1[0]]
    with torch.no_grad():
        out0, out1 = case.module()(*set0), case.module()(*set1)
    assert any(a.shape != b.shape for a, b in zip(out0, out1)), "nonzero's output sizes must differ between sets"


def test_sample_through_the_matrix_and_the_summary(tmp_path):
    names = "|".join(re.escape(ov.replace(".", "_")) for ov in SAMPLE)
    proc = subprocess.run([str(PARITY), "matrix", "--scenarios", str(SWEEP), "--filter", f"^({names})$",
                           "--no-peers", "-j", "2", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=900)
    report = json.loads((tmp_path / "report.json").read_text())
    got = sorted((c["case"], c["mode"], c["status"]) for c in report["cases"])
    want = sorted((ov.replace(".", "_"), m, "pass") for ov in SAMPLE for m in ("strict", "nonstrict", "decomposed"))
    assert got == want, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert proc.returncode == 0
    summary = subprocess.run([sys.executable, str(SWEEP), "summary", str(tmp_path / "report.json"), "--json"],
                             capture_output=True, text=True, timeout=300, check=True)
    s = json.loads(summary.stdout)
    assert (s["pairs"], s["captured"], s["overloads_captured"]) == (9, 9, 3)
    assert s["parity_pass"] == 9 and s["official_run"] == 0
    assert {ov: sorted(modes) for ov, modes in s["overloads"].items()} == {
        ov: sorted(("strict", "nonstrict", "decomposed")) for ov in SAMPLE}


def test_summary_classes():
    """Parity's classes from report entries as the matrix writes them."""
    sys.path.insert(0, str(SWEEP.parent))
    try:
        from _aten_sweep_tools import _verdict
    finally:
        sys.path.remove(str(SWEEP.parent))
    unsupported = ("parity: error: export: m.pt2: node 'masked_select' (aten::masked_select.default): unsupported "
                   "ATen operator(s):\n  aten::masked_select.default x2 (first at node 'masked_select')\n"
                   "  aten::nonzero_static.default x1 (first at node 'n')")
    assert _verdict({"status": "error", "stage": "export", "error": unsupported}, []) == (
        "unsupported", "aten::masked_select.default, aten::nonzero_static.default")
    assert _verdict({"status": "error", "stage": "export", "error": "pad must be a static int list"}, [])[0] == \
        "export_error"
    assert _verdict({"status": "pass"}, ["aten.unique_dim.default"]) == (
        "pass_decomposed", "torch decomposed aten.unique_dim.default")
    assert _verdict({"status": "pass"}, []) == ("pass", "")
    assert _verdict({"status": "capture_failed", "error": "GuardOnDataDependentSymNode: u0"}, [])[0] == "capture_failed"
    assert _verdict({"status": "fail", "stage": "verify", "error": "outputs differ"}, [])[0] == "fail"
