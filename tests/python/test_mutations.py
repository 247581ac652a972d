"""State written more than once per call (scenarios/cases/mutations.py), in every capture mode: each
mutation output of Parity's ONNX (`mutated_buffer.<fqn>`, `mutated_input.<name>`), run by refrt and by
onnxruntime, equals the state eager leaves behind. The oracle is computed here, by running the module eagerly
on the case's inputs and reading its buffers and inputs afterwards; capture's own record of that state
(test_data_set_<k>/state_<j>.pb, which `parity verify` judges with) must equal it too. A planted export that
keeps the first write instead of the last (the bug of issue 44) must fail the same check.
"""
import json
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from conftest import MODES, PARITY, ROOT, data_sets, files, load_pb, run_capture, shared_dir

sys.path.insert(0, str(ROOT))
import scenarios.cases  # noqa: E402,F401  (registers the cases)
from scenarios.registry import all_cases  # noqa: E402

CASES = [c for c in all_cases() if c.name.startswith("mutation_")]


@pytest.fixture(scope="module")
def family(tmp_path_factory):
    def make(root):
        proc = run_capture("--out", root, "--modes", ",".join(MODES), "--filter", "^mutation_")
        assert proc.returncode == 0, proc.stderr
    return shared_dir(tmp_path_factory, "mutation_family", make)


def eager_state(case, case_dir, data):
    """Every buffer and tensor input of the module after one eager call on the set's inputs, by the name of
    the mutation output that carries it, and the names whose values the call changed."""
    info = json.loads((case_dir / "case.json").read_text())
    inputs = [torch.from_numpy(load_pb(p).copy()) for p in files(data, "input")]
    module = case.module()
    before = {f"mutated_buffer.{n}": b.clone() for n, b in module.named_buffers()}
    before.update({f"mutated_input.{n}": t.clone() for n, t in zip(info["input_names"], inputs)})
    with torch.no_grad():
        module(*inputs)
    after = {f"mutated_buffer.{n}": b for n, b in module.named_buffers()}
    after.update({f"mutated_input.{n}": t for n, t in zip(info["input_names"], inputs)})
    changed = {n for n in after if not torch.equal(before[n], after[n])}
    return {n: t.numpy() for n, t in after.items()}, changed


def run_refrt(model, data, out):
    proc = subprocess.run([str(PARITY), "run", str(model), "--inputs", str(data), "--outputs", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return [load_pb(p) for p in files(out, "output")]


def mutation_mismatches(case, case_dir, model, tmp_path):
    """Every disagreement between the model's mutation outputs (refrt and onnxruntime) and eager's state."""
    graph = onnx.load(str(model)).graph
    outputs = [o.name for o in graph.output]
    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    problems = []
    for k, data in enumerate(data_sets(case_dir)):
        want, changed = eager_state(case, case_dir, data)
        missing = changed - set(outputs)
        if missing:
            problems.append(f"set {k}: eager changed {sorted(missing)}, the model has no output for it")
        feeds = dict(zip([i.name for i in graph.input], [load_pb(p) for p in files(data, "input")]))
        runs = {"onnxruntime": session.run(None, feeds), "refrt": run_refrt(model, data, tmp_path / f"refrt_{k}")}
        for runtime, values in runs.items():
            for name, got in zip(outputs, values):
                if not name.startswith("mutated_"):
                    continue
                expected = want[name]
                if got.shape != expected.shape or not np.allclose(got, expected, rtol=1e-5, atol=1e-6):
                    problems.append(f"set {k} {runtime} {name}: eager {expected.ravel()[:6]}, got {got.ravel()[:6]}")
        # Capture's record (what `parity verify` judges with) is the same state.
        recorded = {load_onnx_name(p): load_pb(p) for p in files(data, "state")}
        if set(recorded) != changed:
            problems.append(f"set {k}: capture recorded {sorted(recorded)}, eager changed {sorted(changed)}")
        for name, value in recorded.items():
            if not np.array_equal(value, want[name]):
                problems.append(f"set {k}: capture's record of {name} differs from eager's state")
    return problems


def load_onnx_name(path):
    t = onnx.TensorProto()
    t.ParseFromString(path.read_bytes())
    return t.name


def export(case_dir, out):
    proc = subprocess.run([str(PARITY), "export", str(case_dir / "model.pt2"), "-o", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_mutation_outputs_are_eagers_final_state(family, case, mode, tmp_path):
    case_dir = family / case.name / mode
    model = export(case_dir, tmp_path / "model.onnx")
    problems = mutation_mismatches(case, case_dir, model, tmp_path)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("mode", ["strict", "nonstrict"])
def test_planted_first_write_fails(family, mode, tmp_path):
    """The bug this family exists for, planted in a correct export: the buffer output rewired to the value
    of the first of its three writes (`add_`, the FX name of the first bump). The check must catch it."""
    case = next(c for c in CASES if c.name == "mutation_child_bumped_thrice")
    case_dir = family / case.name / mode
    model = onnx.load(str(export(case_dir, tmp_path / "model.onnx")))
    values = {o for n in model.graph.node for o in n.output}
    assert "add_" in values, "the first bump's value is not in the model under its FX name"
    out = next(o for o in model.graph.output if o.name == "mutated_buffer.child.buf")
    for node in model.graph.node:  # whatever produced the output now copies the first write
        if out.name in node.output:
            model.graph.node.remove(node)
            break
    model.graph.node.append(onnx.helper.make_node("Identity", ["add_"], [out.name]))
    planted = tmp_path / "planted.onnx"
    onnx.save(model, str(planted))
    problems = mutation_mismatches(case, case_dir, planted, tmp_path)
    assert any("mutated_buffer.child.buf" in p and "eager [13" in p for p in problems), problems
