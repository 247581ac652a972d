"""Capture-time CPU branches (scenarios/cpu_branches.py, docs/cpu-branches.md): the programs a case captures
must not depend on the host.

1. The da8w8 pair, through the real command line: quant_mlp_ao_da8w8 holds _int_mm(int8, int8) only and no
   uint8 value, quant_mlp_ao_da8w8_u8s8 holds _int_mm(uint8, int8) and the colsum correction, in non-strict
   and decomposed programs, whatever CPU runs the capture (this suite's Xeon has AMX: unforced, it would
   capture s8s8 for both).
2. In the capture process every _int_mm call, the export's and the eager reference's, takes the forced branch.
3. torchao's three CPU classes give two programs: no VNNI and AMX capture the same s8s8 program.
4. Every other capture path the quantized family uses (torchao w8 / w4 / da8w4, the PT2E x86 and XNNPACK
   quantizers, transformers' LLaMA with its attention choice) captures the same program and the same eager
   outputs with every CPU capability off, all on, or as a VNNI CPU without AMX; a control case (da8w8 with
   its forcing removed) proves the patched predicates reach the libraries.
"""
import json
import subprocess
import sys

import pytest
import torch
import torchao.quantization.quant_primitives  # noqa: F401  (registers torch.ops.torchao for torch.export.load)
from conftest import ROOT, run_capture

from scenarios import capture, cpu_branches
from scenarios.registry import get_case

MLP_PAIR = ("quant_mlp_ao_da8w8", "quant_mlp_ao_da8w8_u8s8")


def _int_mm_inputs(ep) -> list[tuple]:
    return [tuple(a.meta["val"].dtype for a in n.args[:2]) for n in ep.graph.nodes
            if n.op == "call_function" and n.target == torch.ops.aten._int_mm.default]


def _dtypes(ep) -> set:
    vals = [n.meta.get("val") for n in ep.graph.nodes]
    return {v.dtype for v in vals if isinstance(v, torch.Tensor)}


@pytest.fixture(scope="module")
def mlp_pair(tmp_path_factory):
    root = tmp_path_factory.mktemp("cpu_branches")
    proc = run_capture("--out", root, "--modes", "nonstrict,decomposed", "--filter", "^quant_mlp_ao_da8w8(_u8s8)?$",
                       "--keep-unsupported", timeout=600)
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert sorted((d["case"], d["mode"]) for d in lines) == sorted((c, m) for c in MLP_PAIR
                                                                   for m in ("nonstrict", "decomposed")), lines
    assert all(d["status"] == "captured" for d in lines), lines
    return root


@pytest.mark.parametrize("mode", ["nonstrict", "decomposed"])
def test_s8s8_case_holds_int8_by_int8(mlp_pair, mode):
    case_dir = mlp_pair / "quant_mlp_ao_da8w8" / mode
    ep = torch.export.load(str(case_dir / "model.pt2"))
    assert _int_mm_inputs(ep) == [(torch.int8, torch.int8)] * 2  # one per Linear
    assert torch.uint8 not in _dtypes(ep)
    assert json.loads((case_dir / "case.json").read_text())["cpu_branch"] == "torchao_amx"


@pytest.mark.parametrize("mode", ["nonstrict", "decomposed"])
def test_u8s8_case_holds_uint8_by_int8(mlp_pair, mode):
    case_dir = mlp_pair / "quant_mlp_ao_da8w8_u8s8" / mode
    ep = torch.export.load(str(case_dir / "model.pt2"))
    assert _int_mm_inputs(ep) == [(torch.uint8, torch.int8)] * 2
    # The correction 128 * colsum(W), subtracted in place (non-strict) or functionally (decomposed).
    subs = [n for n in ep.graph.nodes if n.op == "call_function" and n.target in (
        torch.ops.aten.sub_.Tensor, torch.ops.aten.sub.Tensor) and n.meta["val"].dtype == torch.int32]
    assert len(subs) == 2, [str(n.target) for n in subs]
    assert json.loads((case_dir / "case.json").read_text())["cpu_branch"] == "torchao_vnni"


@pytest.mark.parametrize("name,want", [(MLP_PAIR[0], torch.int8), (MLP_PAIR[1], torch.uint8)])
def test_every_int_mm_of_a_capture_takes_the_forced_branch(tmp_path, monkeypatch, name, want):
    """The eager reference too: every _int_mm call of capture_case (tracing and the eager input sets) has the
    branch's self dtype, on this host whatever its predicates say."""
    calls = []
    original = torch._int_mm

    def spy(a, b):
        calls.append((a.dtype, type(a).__name__))
        return original(a, b)

    monkeypatch.setattr(torch, "_int_mm", spy)
    result = capture.capture_case(get_case(name), "nonstrict", tmp_path, force=True)
    assert result["status"] == "captured", result
    eager = [c for c in calls if c[1] == "Tensor"]
    assert len(eager) >= 4, calls  # 2 Linears x 2 input sets, run eagerly
    assert len(calls) > len(eager), calls  # and the export's traced calls
    assert {dtype for dtype, _ in calls} == {want}, calls


def _program(name: str, branch: str) -> str:
    """The non-strict program of `name`'s module exported under `branch`, as text with dtypes and shapes."""
    case = get_case(name)
    args, kwargs = case.examples()[0]
    with cpu_branches.forced(branch):
        ep = torch.export.export(capture.subclasses.unwrap(case.module()), args, kwargs=kwargs,
                                 dynamic_shapes=case.shapes(), strict=False)
    return ep.graph_module.print_readable(print_output=False)


def test_no_vnni_and_amx_capture_the_same_program():
    programs = {b: _program(MLP_PAIR[0], b) for b in cpu_branches.BRANCHES}
    assert programs["torchao_no_vnni"] == programs["torchao_amx"]
    assert programs["torchao_vnni"] != programs["torchao_amx"]
    assert "torch.uint8" in programs["torchao_vnni"] and "torch.uint8" not in programs["torchao_amx"]


# Capture paths with no CPU branch (docs/cpu-branches.md); the control is da8w8 with its forcing removed.
UNBRANCHED = ("quant_mlp_ao_w8", "quant_mlp_ao_w4g32", "quant_mlp_ao_da8w4", "quant_mlp_x86_dynamic",
              "quant_mlp_x86_static", "quant_mlp_xnnpack_dynamic", "quant_mlp_xnnpack_static",
              "quant_llama_lm_ao_w8", "quant_mlp_ao_da8w8")
CONTROL = "control_da8w8_unforced"

# Run in a fresh process per capability set: the PT2E and torchao cases quantize once per process.
_SCRIPT = r"""
import dataclasses, json, sys, torch
from scenarios import capture, cpu_branches
from scenarios.registry import get_case
which, out, names, control = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
host = torch.cpu.get_capabilities()
values = {"none": {k: False for k, v in host.items() if isinstance(v, bool)},
          "all": {k: True for k, v in host.items() if isinstance(v, bool)}}.get(which) or cpu_branches.BRANCHES[which]
cases = [get_case(n) for n in names] + [dataclasses.replace(get_case("quant_mlp_ao_da8w8"), cpu_branch=None,
                                                            name=control)]
with cpu_branches.capabilities(values):
    for case in cases:
        programs = {}
        for mode in ("nonstrict", "decomposed"):
            print(json.dumps(capture.capture_case(case, mode, out, True, programs)))
"""


@pytest.fixture(scope="module")
def capability_sets(tmp_path_factory):
    root = tmp_path_factory.mktemp("capabilities")
    for which in ("none", "all", "torchao_vnni"):
        proc = subprocess.run([sys.executable, "-c", _SCRIPT, which, root / which, json.dumps(UNBRANCHED), CONTROL],
                              cwd=ROOT, capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, proc.stderr[-3000:]
        lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
        assert len(lines) == 2 * (len(UNBRANCHED) + 1) and all(d["status"] == "captured" for d in lines), lines
    return root


def _snapshot(case_dir):
    ep = torch.export.load(str(case_dir / "model.pt2"))
    outputs = sorted(p.relative_to(case_dir).as_posix() for p in case_dir.glob("test_data_set_*/output_*.pb"))
    return ep.graph_module.print_readable(print_output=False), {o: (case_dir / o).read_bytes() for o in outputs}


@pytest.mark.parametrize("mode", ["nonstrict", "decomposed"])
@pytest.mark.parametrize("name", UNBRANCHED)
def test_capture_ignores_the_cpu(capability_sets, name, mode):
    programs = {w: _snapshot(capability_sets / w / name / mode) for w in ("none", "all", "torchao_vnni")}
    assert programs["none"][1], "no eager outputs saved"
    for which in ("all", "torchao_vnni"):
        assert programs[which][0] == programs["none"][0], f"{name}/{mode}: the program changes with the CPU ({which})"
        assert programs[which][1] == programs["none"][1], f"{name}/{mode}: eager's outputs change with the CPU"


@pytest.mark.parametrize("mode", ["nonstrict", "decomposed"])
def test_control_branches_when_not_forced(capability_sets, mode):
    """Without its cpu_branch, da8w8 follows the patched predicates: the comparison above can see a branch."""
    text = {w: _snapshot(capability_sets / w / CONTROL / mode)[0] for w in ("none", "all", "torchao_vnni")}
    assert text["none"] == text["all"] and "torch.uint8" not in text["all"]
    assert "torch.uint8" in text["torchao_vnni"]
