"""Every scenario x capture mode: `parity verify` exports it and compares the libtorch reference and refrt
with eager on every input set (report.json); our ONNX passes onnx.checker(full_check=True) and computes
eager PyTorch's outputs in onnxruntime and on refrt (`parity run`), on every input set; `parity profile`
writes a valid trace.

Oracles: the eager outputs stored at capture, onnx's checker and onnxruntime. A (case, mode) listed in
scenarios/known_failures.json is a strict xfail with the list's reason (it must still fail). The pairs
torch.export cannot capture are pinned in EXPECTED_CAPTURE_FAILED, each a strict xfail that must fail at
capture with torch's known message: a new capture failure fails, a fixed one is an unexpected pass (XPASS
strict, a failure) until it leaves the list.
"""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from conftest import MODES, ROOT, load_pb, run_capture, shared_dir
from filelock import FileLock
from test_profile import check_trace

sys.path.insert(0, str(ROOT))
import scenarios.cases  # noqa: E402,F401  (registers the cases)
from scenarios.registry import all_cases  # noqa: E402

PARITY = ROOT / os.environ.get("PARITY_BUILD_DIR", "build") / "parity"
# Our side's known failures only: the list also records the official exporter's and torch.export's.
KNOWN = {
    (k["case"], k["mode"]): k["reason"]
    for k in json.loads((ROOT / "scenarios" / "known_failures.json").read_text())
    if k.get("side", "ours") == "ours"
}
# Cases whose ONNX onnxruntime cannot run (its gap, not ours): the ORT leg must still raise this, so the
# entry goes when onnxruntime gains the kernel.
ORT_LACKS = {"op_bfloat16_round_trip": "onnxruntime 1.32's CPU provider has no bfloat16 Mul kernel"}
ORT_LACKS.update({c.name: "onnxruntime 1.32's CPU provider has no bfloat16 kernels for most ops (Gemm, MatMul, Conv, "
                  "LayerNormalization, Add, ...)" for c in all_cases() if c.name.startswith("half_")
                  and c.name.endswith("_bf16")})
# (case, mode) -> (a phrase of torch's error, why): what torch.export (torch 2.13.0) cannot capture.
_SPECIALISED = "torch.export specialises a dynamic dim whose example size is 1 (the case records exactly that)"
EXPECTED_CAPTURE_FAILED = {
    ("shape_size_one_at_capture", "strict"): (
        "You marked batch1 as dynamic but your code specialized it",
        _SPECIALISED,
    ),
    ("shape_size_one_at_capture", "nonstrict"): (
        "You marked batch1 as dynamic but your code specialized it",
        _SPECIALISED,
    ),
    ("shape_size_one_at_capture", "decomposed"): (
        "You marked batch1 as dynamic but your code specialized it",
        _SPECIALISED,
    ),
    ("sig_shape_as_index", "strict"): (
        "You marked width as dynamic but your code specialized it",
        "strict export (dynamo) specialises a size used as an index; non-strict captures it",
    ),
    ("vision_spatial_transformer", "strict"): (
        "Not all values of batch",
        "strict export (dynamo) traces F.affine_grid's size checks and bounds the batch to the example's; "
        "non-strict and decomposed capture it",
    ),
    ("while_item_counter", "nonstrict"): (
        "Attempted to wrap unbacked SymInt",
        "non-strict export refuses an unbacked SymInt (n.item()) as a while_loop input; strict captures it",
    ),
    ("while_item_counter", "decomposed"): (
        "Attempted to wrap unbacked SymInt",
        "non-strict export refuses an unbacked SymInt (n.item()) as a while_loop input; strict captures it",
    ),
    ("model_gpt2", "decomposed"): (
        "Cannot view a tensor with shape",
        "run_decompositions() fails inside torch: aten.view of a non-contiguous attention tensor",
    ),
}


# float16 / bfloat16 outputs: their dtype's numbers (common/tolerances.json), as `parity verify` uses.
HALF_TOLERANCES = {k: v for k, v in json.loads((ROOT / "common" / "tolerances.json").read_text()).items()
                   if k in ("float16", "bfloat16")}


def assert_matches_eager(got, expected, what):
    """Integers and bools exactly (same dtype, every element), floats within rtol 1e-4, atol 1e-5 (float16 and
    bfloat16 within their dtype's tolerance, compared in float64)."""
    got = np.asarray(got)
    assert got.shape == expected.shape, f"{what}: shape {got.shape} != eager {expected.shape}"
    if expected.dtype.kind in "iub":
        assert got.dtype == expected.dtype, f"{what}: dtype {got.dtype} != eager {expected.dtype}"
        np.testing.assert_array_equal(got, expected, err_msg=what)
    elif str(expected.dtype) in HALF_TOLERANCES:
        assert got.dtype == expected.dtype, f"{what}: dtype {got.dtype} != eager {expected.dtype}"
        tol = HALF_TOLERANCES[str(expected.dtype)]
        np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64), rtol=tol["rtol"],
                                   atol=tol["atol"], err_msg=what)
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5, err_msg=what)


def test_integer_outputs_compare_exactly():
    """The comparison the ORT and refrt legs use: an index off by one where rtol would hide it fails."""
    big = np.array([1_000_000_000, 7], dtype=np.int64)
    assert_matches_eager(big.copy(), big, "same")
    with pytest.raises(AssertionError):
        assert_matches_eager(big + np.array([1, 0]), big, "off by one")
    with pytest.raises(AssertionError, match="dtype"):
        assert_matches_eager(big.astype(np.int32), big, "narrowed")
    with pytest.raises(AssertionError):
        assert_matches_eager(np.array([True, False]), np.array([True, True]), "bool")
    assert_matches_eager(np.array([1.0, 2.0], np.float32), np.array([1.0, 2.00001], np.float32), "float within rtol")
# The quantized family (quant_*) has its own test, test_quantized.py: its outputs compare in quantization steps.
NOT_QUANTIZED = "^(?!quant_)"
# PARITY_SCENARIOS=REGEX narrows the cases further (scripts/test.sh --quick runs a sample this way).
SELECTED = NOT_QUANTIZED + (f"(?=.*(?:{os.environ['PARITY_SCENARIOS']}))" if os.environ.get("PARITY_SCENARIOS") else "")


class CaptureFailed(Exception):
    """The capture of this (case, mode) failed with the message its EXPECTED_CAPTURE_FAILED entry names."""


@pytest.fixture(scope="module")
def all_captured(tmp_path_factory):
    """Every selected case in every mode, captured once per run (with pytest-xdist, by one worker for all)."""

    def capture(root):
        proc = run_capture("--out", root, "--modes", ",".join(MODES), "--jobs", "2", "--filter", SELECTED,
                           timeout=2400)
        assert proc.returncode == 0, proc.stderr

    # PARITY_SCENARIO_CASES=DIR captures into DIR: capture is cached by source hash and torch version, so a
    # second run re-captures only what changed (and what failed to capture).
    reuse = os.environ.get("PARITY_SCENARIO_CASES")
    if not reuse:
        return shared_dir(tmp_path_factory, "all_cases", capture)
    root = Path(reuse)
    root.mkdir(parents=True, exist_ok=True)
    with FileLock(str(root / ".capture.lock")):
        capture(root)
    return root


def _params():
    return [pytest.param(c.name, m, id=f"{c.name}-{m}") for c in all_cases() if re.search(SELECTED, c.name)
            for m in MODES]


def _run(*args):
    proc = subprocess.run([str(PARITY), *map(str, args)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"parity {' '.join(map(str, args))}:\n{proc.stderr}"


def check_captured(name, mode, info):
    """Fails on a capture failure that is not pinned, raises CaptureFailed on a pinned one."""
    if info["status"] == "captured":
        return
    error = info.get("error") or "capture did not finish"
    pinned = EXPECTED_CAPTURE_FAILED.get((name, mode))
    assert pinned, f"{name}/{mode}: capture failed and is not in EXPECTED_CAPTURE_FAILED:\n{error}"
    assert pinned[0] in error, f"{name}/{mode}: capture failed, but not with {pinned[0]!r}:\n{error}"
    raise CaptureFailed(error.splitlines()[0])


_VERIFIED = {}  # case -> (its `parity verify` folder, the command's stderr), in this worker


def verified(all_captured, name, tmp_path_factory):
    """`parity verify` of every captured mode of the case, once (one process: libtorch loads once per case);
    each mode's report entry and model are under <folder>/<mode>/ and in <folder>/report.json."""
    if name not in _VERIFIED:
        out = tmp_path_factory.mktemp(f"verify_{name}")
        proc = subprocess.run([str(PARITY), "verify", all_captured / name, "--out", out, "--quiet", "--no-html"],
                              capture_output=True, text=True, timeout=1200)
        _VERIFIED[name] = (out, proc.stderr)
    return _VERIFIED[name]


def check_libtorch_reference(report_path, name, mode, n_sets):
    """`parity verify`'s report.json: the libtorch reference matches eager and refrt on every output of
    every input set, mutated state included (capture records eager's final state: case.json eager_state), and
    the case passes."""
    report = json.loads(report_path.read_text())
    assert report["schema_version"] == 2
    entries = [e for e in report["cases"] if (e["case"], e["mode"]) == (name, mode)]
    assert len(entries) == 1, f"{name}/{mode}: {len(entries)} entries in {report_path}"
    entry = entries[0]
    bad = []
    for s in entry["input_sets"]:
        assert s["outputs"], s["name"]
        for out in s["outputs"]:
            if out.get("kind") == "mutation":  # judged against eager's state, not only against libtorch
                assert "refrt_vs_eager" in out, f"{name}/{mode}: {out['name']} has no eager record"
            for leg in ("libtorch_vs_eager", "refrt_vs_libtorch"):
                if not out[leg]["passed"]:
                    bad.append(f"{s['name']} output {out['index']} ({out['name']}) {leg}: {out[leg]}")
    assert not bad, f"{name}/{mode}:\n" + "\n".join(bad)
    assert entry["status"] == "pass", f"{name}/{mode}: {entry['status']} at {entry['stage']}: {entry['error']}"
    assert len(entry["input_sets"]) == n_sets


@pytest.mark.parametrize("name,mode", _params())
def test_scenario_checker_onnxruntime_and_refrt(all_captured, name, mode, tmp_path, tmp_path_factory, request):
    case_dir = all_captured / name / mode
    info = json.loads((case_dir / "case.json").read_text())
    if (name, mode) in EXPECTED_CAPTURE_FAILED:
        request.applymarker(pytest.mark.xfail(strict=True, raises=CaptureFailed,
                                              reason=EXPECTED_CAPTURE_FAILED[(name, mode)][1]))
    check_captured(name, mode, info)
    if (name, mode) in KNOWN:
        request.applymarker(pytest.mark.xfail(strict=True, reason=KNOWN[(name, mode)]))
    sets = sorted(p for p in case_dir.iterdir() if p.name.startswith("test_data_set_"))
    # `parity verify` exports (with the case's plugins) and runs the libtorch reference and refrt on every set.
    verify_dir, stderr = verified(all_captured, name, tmp_path_factory)
    assert (verify_dir / "report.json").exists(), f"parity verify wrote no report.json:\n{stderr}"
    check_libtorch_reference(verify_dir / "report.json", name, mode, len(sets))
    model = verify_dir / mode / "model.onnx"
    onnx.checker.check_model(onnx.load(str(model)), full_check=True)
    ort_lacks = ORT_LACKS.get(name)
    session = None
    if ort_lacks:
        with pytest.raises(Exception, match="NOT_IMPLEMENTED"):  # the gap is still there
            ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    else:
        session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    names = [i.name for i in onnx.load(str(model)).graph.input]
    assert len(sets) >= 2
    for s in sets:
        expected = [load_pb(p) for p in sorted(s.glob("output_*.pb"), key=lambda p: int(p.stem.split("_")[1]))]
        feeds = {n: load_pb(s / f"input_{i}.pb") for i, n in enumerate(names)}
        refrt_out = tmp_path / f"refrt_{s.name}"
        _run("run", model, "--inputs", s, "--outputs", refrt_out)
        runs = [("refrt", [load_pb(refrt_out / f"output_{i}.pb") for i in range(len(expected))])]
        if session is not None:
            runs.append(("onnxruntime", session.run(None, feeds)))
        if s == sets[0]:  # `parity profile` works on every scenario model: a valid trace of its nodes
            _run("profile", model, "--inputs", s, "--runs", "1", "--warmup", "0", "--out", tmp_path / "profile")
            check_trace(tmp_path / "profile" / "trace.json", model, 1)
        for runtime, values in runs:
            # Our ONNX may add outputs after the user's (mutated buffers and inputs): compare the user's.
            assert len(values) >= len(expected), runtime
            for i, e in enumerate(expected):
                assert_matches_eager(values[i], e, f"{runtime} {name}/{mode} {s.name} output {i}")
