"""The long tail through `parity.verify` (capture, export, refrt and the libtorch reference executor, all
against eager PyTorch): symbolic-int helpers in the program, ops without a translation re-decomposed by
torch on capture, attention over a left-padded batch.

Oracle: the eager model run at capture; the programs are checked to really hold what each test is about.
"""
import json
import math
import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.export import Dim

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))  # this tree's package, whichever tree the venv's install points to

import parity  # noqa: E402


def _targets(case_dir: Path) -> set:
    ep = torch.export.load(str(case_dir / "model.pt2"))
    return {str(n.target) for n in ep.graph.nodes if n.op == "call_function"}


class SymHelpers(nn.Module):
    """Sizes from torch.sym_max / sym_min / sym_float / math.trunc / sym_ite of two dynamic lengths (the helpers
    torch.export.save can serialize)."""

    def forward(self, x, y):
        a, b = x.shape[0], y.shape[0]
        n = torch.sym_max(a, b) + torch.sym_min(a, b) + math.trunc(torch.sym_float(a) / 3)
        k = torch.sym_ite(a > b, a, b)
        return torch.cat([x, y]).sum() + x.new_ones(n).cumsum(0), y.new_zeros(k) + 1


def test_reference_executor_evaluates_symbolic_helpers(tmp_path):
    sets = [((torch.randn(4), torch.randn(7)),), ((torch.randn(8), torch.randn(3)),)]
    result = parity.verify(SymHelpers(), sets[0][0], dynamic_shapes=({0: Dim("a", min=2)}, {0: Dim("b", min=2)}),
                           input_sets=[sets[1][0]], out=tmp_path, name="sym_helpers")
    held = _targets(result.case_dir)
    for helper in ("sym_max", "sym_min", "sym_float", "sym_ite", "trunc"):
        assert any(helper in t for t in held), (helper, held)
    assert result.passed, repr(result)
    assert all(o.libtorch_max_abs_error == 0 for o in result.outputs), repr(result)


class Huber(nn.Module):
    """aten::huber_loss: an op Parity does not translate, whose torch decomposition it does."""

    def forward(self, x, y):
        return F.huber_loss(x, y) * 2


def test_verify_redecomposes_an_op_without_translation_and_says_so(tmp_path):
    x, y = torch.randn(3, 4), torch.randn(3, 4)
    result = parity.verify(Huber(), (x, y), out=tmp_path, name="huber")
    assert result.decomposed_ops == ["aten::huber_loss.default"], repr(result)
    assert result.passed, repr(result)
    assert "aten.huber_loss.default" not in {t for t in _targets(result.case_dir)}
    assert "aten::huber_loss.default" in result.report_md.read_text()
    assert "re-decomposed" in repr(result)
    (kept,) = parity.capture(Huber(), (x, y), out=tmp_path / "kept", decompose_unsupported=False)
    assert kept.decomposed_ops == [] and "aten.huber_loss.default" in _targets(kept.dir)


class PaddedAttention(nn.Module):
    """Left padding under a causal mask: the padded query rows see no key (torch: 0, plain Softmax: NaN)."""

    def forward(self, q, k, v, keep):
        causal = torch.ones(q.shape[2], k.shape[2], dtype=torch.bool).tril()
        mask = causal[None, None] & keep[:, None, None, :].bool()
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def test_left_padded_attention_matches_torch_in_every_mode_and_opset(tmp_path):
    keep = torch.tensor([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]])
    args = (torch.randn(2, 2, 5, 4), torch.randn(2, 2, 5, 4), torch.randn(2, 2, 5, 4), keep)
    for mode in ("strict", "nonstrict", "decomposed"):
        for opset in (18, 23):
            result = parity.verify(PaddedAttention(), args, mode=mode, opset=opset, out=tmp_path / f"{mode}{opset}",
                                   name="padded_attention")
            assert result.passed, repr(result)


class VmapRows(nn.Module):
    """torch.vmap over rows: the program holds torch._functorch.predispatch._add_batch_dim/_remove_batch_dim."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(5, 6))

    def forward(self, x):
        return torch.vmap(lambda row: (row @ self.w).softmax(-1).sum(0))(x)


def test_vmap_program_is_retraced_into_batched_ops(tmp_path):
    x = torch.randn(3, 4, 5)
    (kept,) = parity.capture(VmapRows(), (x,), modes=("nonstrict",), out=tmp_path / "kept", decompose_unsupported=False)
    assert any("_add_batch_dim" in t for t in _targets(kept.dir))
    result = parity.verify(VmapRows(), (x,), out=tmp_path, name="vmap_rows")
    assert any("_add_batch_dim" in k for k in result.decomposed_ops), repr(result)
    assert not any("batch_dim" in t for t in _targets(result.case_dir))
    assert result.passed, repr(result)


def _scenario(name):
    """A long-tail scenario's module, its input sets and dynamic shapes (scenarios/cases/long_tail.py)."""
    sys.path.insert(0, str(ROOT))
    import scenarios.cases  # noqa: F401  (registers the cases)
    from scenarios.registry import get_case

    case = get_case(name)
    return case.module(), [args for args, _ in case.examples()], case.shapes()


def test_reference_runs_past_an_export_only_check_on_an_unbacked_size_and_says_so(tmp_path):
    module, sets, shapes = _scenario("scan_export_only_check")
    result = parity.verify(module, sets[0], dynamic_shapes=shapes, input_sets=sets[1:], out=tmp_path,
                           name="scan_export_only_check")
    assert result.passed, repr(result)
    # The program really asserts what eager's rows violate: torch's own run of it stops there.
    ep = torch.export.load(str(result.case_dir / "model.pt2"))
    with pytest.raises(RuntimeError, match=r"u\d+ >= 2"):
        ep.module()(*sets[0])
    report = json.loads(result.report_json.read_text())
    notes = [n for s in report["cases"][0]["input_sets"] for n in s.get("reference_notes", [])]
    assert len(notes) == 4 and all("failed (1 time)" in n for n in notes), notes  # 2 assertions x 2 sets
    assert "## Reference notes" in result.report_md.read_text() and "reference note" in repr(result)


def test_reference_keeps_the_recorded_layout_a_decomposed_view_relies_on(tmp_path):
    module, sets, shapes = _scenario("model_patchtst_prediction")
    result = parity.verify(module, sets[0], dynamic_shapes=shapes, input_sets=sets[1:], mode="decomposed",
                           out=tmp_path, name="patchtst")
    assert result.passed, repr(result)
    # torch's own run of the decomposed program fails at the view: CPU batch norm returns another layout
    # than its meta kernel recorded.
    ep = torch.export.load(str(result.case_dir / "model.pt2"))
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        ep.module()(*sets[0])


def test_vmap_of_an_add_with_a_number_passes_in_every_mode(tmp_path):
    module, sets, shapes = _scenario("vmap_mul_add")
    for mode in ("strict", "nonstrict", "decomposed"):
        result = parity.verify(module, sets[0], dynamic_shapes=shapes, input_sets=sets[1:], mode=mode,
                               out=tmp_path / mode, name="vmap_mul_add")
        assert result.passed, repr(result)
        # What the re-decomposition left: `_to_copy` of a plain number (the translation under test).
        ep = torch.export.load(str(result.case_dir / "model.pt2"))
        assert any(str(n.target) == "aten._to_copy.default" and not isinstance(n.args[0], torch.fx.Node)
                   for n in ep.graph.nodes if n.op == "call_function"), mode
