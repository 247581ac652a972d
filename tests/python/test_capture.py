"""Capture: every case x mode is captured, the test data is eager's, the Dim names travel in the archive.

The oracle is eager PyTorch: outputs stored at capture time are compared with the reloaded program.
"""
import json
import subprocess
import sys
import zipfile

import pytest
import torch
import torch.utils._pytree as pytree
from conftest import CASES_FILTER, MODES, ROOT, load_pb, run_capture
from torch import nn
from torch.export import Dim

from scenarios import capture, registry, subclasses
from scenarios.registry import Case, all_cases, get_case, register

CASES = ("linear_regression", "mlp_batch", "mlp_docs")
LINE_KEYS = {"case", "mode", "status", "dir", "seconds", "error", "order"}
CASE_KEYS = {"schema_version", "name", "mode", "status", "error", "torch_version", "input_names", "output_names",
             "input_sets", "dynamic_dims", "source_hash", "capture_seconds"}


def tensors(set_dir, kind):
    paths = sorted(set_dir.glob(f"{kind}_*.pb"), key=lambda p: int(p.stem.split("_")[1]))
    return [torch.from_numpy(load_pb(p).copy()) for p in paths]


def read_info(case_dir):
    return json.loads((case_dir / "case.json").read_text())


def check_against_eager(case_dir, atol=1e-5):
    """Reloads model.pt2 and runs every stored input set; the stored (eager) outputs must come back."""
    info = read_info(case_dir)
    ep = torch.export.load(str(case_dir / "model.pt2"))
    for k in range(info["input_sets"]):
        set_dir = case_dir / f"test_data_set_{k}"
        args, kwargs = pytree.tree_unflatten(tensors(set_dir, "input"), ep.call_spec.in_spec)
        got = pytree.tree_leaves(ep.module()(*args, **kwargs))
        expected = tensors(set_dir, "output")
        assert len(got) == len(expected) == len(info["output_names"])
        for g, e in zip(got, expected):
            torch.testing.assert_close(g, e, rtol=1e-5, atol=atol)


def dim_values(case_dir):
    """{(input, axis): [size in set 0, size in set 1, ...]} for every dynamic dim of case.json."""
    info = read_info(case_dir)
    sets = [tensors(case_dir / f"test_data_set_{k}", "input") for k in range(info["input_sets"])]
    return {(d["input"], d["axis"]): [s[d["input"]].shape[d["axis"]] for s in sets] for d in info["dynamic_dims"]}


def archive_dims(pt2):
    with zipfile.ZipFile(pt2) as z:
        entry = [n for n in z.namelist() if n.endswith("/extra/parity_dims.json")]
        assert len(entry) == 1, z.namelist()
        return json.loads(z.read(entry[0]))


# ---- registry and the list command ----

def test_list_command_prints_every_case():
    proc = subprocess.run([sys.executable, "-m", "scenarios", "list"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [c.name for c in all_cases()]
    assert set(CASES) <= set(proc.stdout.split())


def test_cases_are_sorted_deterministic_and_have_distinct_inputs():
    assert [c.name for c in all_cases()] == sorted(c.name for c in all_cases())
    for case in all_cases():
        assert get_case(case.name) is case
        # Tensor-subclass weights (torchao's quantize_) compare as the plain tensors capture saves.
        a, b = (subclasses.unwrap(case.module()).state_dict() for _ in range(2))
        assert all(torch.equal(a[k], b[k]) for k in a)
        first, again = case.examples(), case.examples()
        assert len(first) >= 2
        for (args, kwargs), (args2, kwargs2) in zip(first, again):
            leaves, leaves2 = pytree.tree_leaves((args, kwargs)), pytree.tree_leaves((args2, kwargs2))
            assert len(leaves) == len(leaves2)
            for x, y in zip(leaves, leaves2):  # non-tensor leaves (ints, floats, bools, None) compare by value
                assert torch.equal(x, y) if isinstance(x, torch.Tensor) else x == y, case.name
            # torch.export merges one tensor passed twice into one input: every tensor must be its own.
            ts = [t for t in leaves if isinstance(t, torch.Tensor)]
            assert len({id(t) for t in ts}) == len(ts)
            assert not any(torch.equal(x, y) for i, x in enumerate(ts) for y in ts[i + 1:]), case.name


# ---- the captured folders (captured once per session through the command line) ----

def test_cli_prints_one_json_line_per_case_and_mode(capture_run):
    assert [(line["case"], line["mode"]) for line in capture_run.lines] == [
        (name, m) for name in sorted(CASES) for m in MODES]
    assert all(set(line) == LINE_KEYS and line["error"] is None for line in capture_run.lines)
    # One process prints in the run's order; "order" names it for the parallel runs, whose lines come as cases end.
    assert [line["order"] for line in capture_run.lines] == list(range(len(capture_run.lines)))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", CASES)
def test_case_folder_layout_and_eager_oracle(captured, name, mode):
    case_dir = captured / name / mode
    info = read_info(case_dir)
    assert CASE_KEYS <= set(info)
    assert (info["schema_version"], info["name"], info["mode"], info["status"], info["error"]) == (
        1, name, mode, "captured", None)
    assert info["torch_version"] == torch.__version__ and info["input_sets"] >= 2
    assert not list(case_dir.glob("*.tmp")) and not list(case_dir.glob(".*.tmp"))
    for k in range(info["input_sets"]):
        set_dir = case_dir / f"test_data_set_{k}"
        assert len(list(set_dir.glob("input_*.pb"))) == len(info["input_names"])
        assert len(list(set_dir.glob("output_*.pb"))) == len(info["output_names"])
    check_against_eager(case_dir)


@pytest.mark.parametrize("name", CASES)
def test_dynamic_dims_differ_across_sets(captured, name):
    info = read_info(captured / name / "strict")
    assert info["dynamic_dims"] and {d["name"] for d in info["dynamic_dims"]} == {"batch"}
    for values in dim_values(captured / name / "strict").values():
        assert len(set(values)) == len(values) and min(values) >= 2, values


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", CASES)
def test_dim_names_are_stored_in_the_archive(captured, name, mode):
    case_dir = captured / name / mode
    dims = archive_dims(case_dir / "model.pt2")
    info = read_info(case_dir)
    assert set(dims.values()) == {"batch"}
    assert set(dims) == {d["symbol"] for d in info["dynamic_dims"]}
    # The symbols are the program's own: its range constraints and input shapes use them.
    ep = torch.export.load(str(case_dir / "model.pt2"))
    assert set(dims) == {str(s) for s in ep.range_constraints}


def test_stored_outputs_are_eager_outputs(captured):
    # Recomputed eagerly in this process from the stored inputs: capture's module is the same
    # deterministic module, so the numbers are identical.
    case = get_case("mlp_docs")
    case_dir = captured / "mlp_docs" / "nonstrict"
    ep = torch.export.load(str(case_dir / "model.pt2"))
    set_dir = case_dir / "test_data_set_1"
    args, kwargs = pytree.tree_unflatten(tensors(set_dir, "input"), ep.call_spec.in_spec)
    with torch.no_grad():
        expected = case.module()(*args, **kwargs)
    torch.testing.assert_close(tensors(set_dir, "output")[0], expected, rtol=0, atol=0)


def test_second_run_is_cached(captured):
    proc = run_capture("--out", captured, "--modes", ",".join(MODES), "--filter", CASES_FILTER)
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(lines) == len(CASES) * len(MODES)
    assert {line["status"] for line in lines} == {"cached"}


def test_force_and_a_changed_source_recapture(tmp_path):
    case = get_case("linear_regression")
    case_dir = tmp_path / case.name / "nonstrict"
    assert capture.capture_case(case, "nonstrict", tmp_path)["status"] == "captured"
    assert capture.capture_case(case, "nonstrict", tmp_path)["status"] == "cached"
    assert capture.capture_case(case, "nonstrict", tmp_path, force=True)["status"] == "captured"
    info = read_info(case_dir)
    info["source_hash"] = "stale"
    (case_dir / "case.json").write_text(json.dumps(info))
    (case_dir / "test_data_set_9").mkdir()  # left over from an older version of the case
    assert capture.capture_case(case, "nonstrict", tmp_path)["status"] == "captured"
    assert not (case_dir / "test_data_set_9").exists()
    assert read_info(case_dir)["source_hash"] == capture.source_hash(case)


# ---- failures and usage errors ----

class DataDependentBranch(nn.Module):
    def forward(self, x):
        if x.sum() > 0:  # a Python branch on a tensor value: torch.export refuses it in both modes
            return x + 1
        return x - 1


def test_a_case_torch_export_cannot_capture_is_a_result(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(registry, "_CASES", dict(registry._CASES))
    register(Case(name="data_dependent_branch", make_module=DataDependentBranch,
                  input_sets=lambda: [(torch.randn(3, 2),), (torch.randn(5, 2),)],
                  dynamic_shapes=({0: Dim("batch")},)))
    code = capture.main(["--out", str(tmp_path), "--filter", "^(data_dependent_branch|linear_regression)$",
                         "--modes", "strict,nonstrict"])
    assert code == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    status = {(line["case"], line["mode"]): line for line in lines}
    assert len(lines) == 4
    for mode in ("strict", "nonstrict"):
        assert status[("linear_regression", mode)]["status"] == "captured"
        failed = status[("data_dependent_branch", mode)]
        assert failed["status"] == "capture_failed" and failed["error"], failed
        case_dir = tmp_path / "data_dependent_branch" / mode
        info = read_info(case_dir)
        assert info["status"] == "capture_failed" and info["error"] == failed["error"]
        assert sorted(p.name for p in case_dir.iterdir()) == ["case.json"]  # no model.pt2, no test data


def test_usage_errors(tmp_path, capsys):
    assert capture.main(["--out", str(tmp_path), "--filter", "no_such_case_xyz"]) == 2
    assert "no_such_case_xyz" in capsys.readouterr().err
    for bad in (["--out", str(tmp_path), "--modes", "strict,bogus"], ["--out", str(tmp_path), "--filter", "("], []):
        with pytest.raises(SystemExit) as e:  # argparse's usage errors (the last: --out is missing)
            capture.main(bad)
        assert e.value.code == 2
    assert not list(tmp_path.iterdir())


# ---- keyword inputs, two named dims, both forms of dynamic_shapes ----

class KeywordScale(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 2)

    def forward(self, x, bias=None, *, scale):
        return self.linear(x) * scale + bias


@pytest.mark.parametrize("form", ["by_name", "tuple"])
@pytest.mark.parametrize("mode", ["strict", "nonstrict"])
def test_kwargs_and_two_named_dims(tmp_path, monkeypatch, form, mode):
    monkeypatch.setattr(registry, "_CASES", dict(registry._CASES))
    batch, seq = Dim("batch"), Dim("seq")
    spec = {0: batch, 1: seq}
    shapes = {"x": spec, "bias": spec, "scale": spec} if form == "by_name" else (spec, spec, spec)

    @register
    def case():
        # kwargs given as scale then bias: the program follows this order, not the signature's.
        return Case(name="keyword_scale", make_module=KeywordScale,
                    input_sets=lambda: [(torch.randn(b, s, 4),) for b, s in ((3, 5), (6, 2))],
                    kwargs_sets=lambda: [{"scale": torch.randn(b, s, 2), "bias": torch.randn(b, s, 2)}
                                         for b, s in ((3, 5), (6, 2))],
                    dynamic_shapes=shapes)

    assert capture.capture_case(case, mode, tmp_path)["status"] == "captured"
    case_dir = tmp_path / "keyword_scale" / mode
    info = read_info(case_dir)
    assert info["input_names"] == ["x", "scale", "bias"]
    assert [(d["input_name"], d["axis"], d["name"]) for d in info["dynamic_dims"]] == [
        (n, a, dim) for n in ("x", "scale", "bias") for a, dim in ((0, "batch"), (1, "seq"))]
    assert sorted(archive_dims(case_dir / "model.pt2").values()) == ["batch", "seq"]
    assert all(len(set(v)) == 2 for v in dim_values(case_dir).values())
    check_against_eager(case_dir)


@torch.library.custom_op("parity_test::twice", mutates_args=())
def _twice(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@_twice.register_fake
def _(x):
    return torch.empty_like(x)


def test_python_custom_op_modules_are_recorded_and_imported_by_the_peers(tmp_path, monkeypatch):
    """A custom op defined in Python (as transformers defines grouped_mm_fallback) is resolved by
    torch.export.load only once its module is imported: capture records the module, the peers import it."""
    class M(nn.Module):
        def forward(self, x):
            return torch.ops.parity_test.twice(x) + 1

    ep = torch.export.export(M(), (torch.randn(2, 3),))
    assert capture.python_op_modules(ep) == [__name__]
    assert capture.python_op_modules(torch.export.export(nn.Linear(3, 2), (torch.randn(2, 3),))) == []

    from scenarios import peers
    (tmp_path / "parity_probe_ops.py").write_text("import sys\nsys.parity_probe_imported = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "case.json").write_text(json.dumps({"python_op_modules": ["parity_probe_ops"]}))
    peers.load_case_libraries(tmp_path)
    assert getattr(sys, "parity_probe_imported", False)
    monkeypatch.delattr(sys, "parity_probe_imported")
    monkeypatch.delitem(sys.modules, "parity_probe_ops")


def test_peer_errors_name_the_innermost_cause():
    """The official exporter wraps its reason in a generic, coloured ConversionError: the report shows both."""
    from scenarios import peers
    try:
        try:
            raise LookupError("No ONNX function found for <OpOverload(op='ns.op')>")
        except LookupError as inner:
            raise RuntimeError("\x1b[96mFailed to convert\x1b[0m the exported program\nstep 3/3") from inner
    except RuntimeError as e:
        message = peers._message(e)
    assert message.startswith("LookupError: No ONNX function found for <OpOverload(op='ns.op')>"), message
    assert "(in RuntimeError: Failed to convert the exported program step 3/3)" in message, message
    assert "\x1b" not in message
