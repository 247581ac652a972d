"""`parity coverage` through the command line: the ops of one saved program against torch's own graph,
the official exporter's registry figure against issue 10's bar, and the usage and input errors."""
import json
import re
import subprocess
import sys
from collections import Counter

import torch
from conftest import ROOT, parity
from torch import nn


class ReluAddMatmul(nn.Module):
    def forward(self, x, y):
        return torch.relu(x) + torch.relu(y) @ y.T


def _save(tmp_path):
    x, y = torch.randn(3, 3), torch.randn(3, 3)
    ep = torch.export.export(ReluAddMatmul(), (x, y))
    torch.export.save(ep, str(tmp_path / "m.pt2"))
    return ep


def test_program_lists_the_graphs_ops_with_their_counts(tmp_path):
    ep = _save(tmp_path)
    # Oracle: torch's own graph; FX "aten.relu.default" is "aten::relu.default" in registry spelling.
    expected = Counter(str(n.target).replace("aten.", "aten::", 1) for n in ep.graph.nodes if n.op == "call_function")
    rows = {}
    for line in parity("coverage", "--program", tmp_path / "m.pt2").stdout.splitlines():
        key, count, translated = line.split()
        rows[key] = (int(count), translated)
    assert {k: c for k, (c, _) in rows.items()} == dict(expected), (rows, expected)
    assert all(t == "yes" for _, t in rows.values()), rows
    assert parity("coverage", "--program", tmp_path / "m.pt2", "--missing").stdout == ""


def test_torchlib_figure_meets_the_bar_and_counts_every_registry_key():
    registry = json.loads(subprocess.run([sys.executable, str(ROOT / "scenarios" / "torchlib_keys.py")],
                                         capture_output=True, text=True, check=True, timeout=600).stdout)
    out = parity("coverage", "--torchlib").stdout
    m = re.search(r"^(\d+)/(\d+) torchlib ATen overloads translated", out, re.M)
    assert m, out[-2000:]
    covered, total = int(m.group(1)), int(m.group(2))
    assert total == len(registry["keys"]) and total > 0
    assert covered >= 0.95 * total, f"{covered}/{total} is below issue 10's 95 % bar"
    # One row per registry key, and --missing keeps exactly the rows with a "no".
    rows = [line.split() for line in out.splitlines() if line.startswith("aten::")]
    assert sorted(r[0] for r in rows) == sorted(registry["keys"])
    missing = [line.split()[0] for line in parity("coverage", "--torchlib", "--missing").stdout.splitlines()
               if line.startswith("aten::")]
    assert missing == [r[0] for r in rows if "no" in r[1:]]


def test_core_listing_and_its_missing_subset():
    out = parity("coverage").stdout
    m = re.search(r"^(\d+)/(\d+) core ATen overloads translated", out, re.M)
    assert m and int(m.group(2)) > 100, out[-2000:]
    rows = [line.split() for line in out.splitlines() if line.startswith("aten::")]
    assert len(rows) == int(m.group(2)) and sum(r[1] == "yes" for r in rows) == int(m.group(1))
    missing = [
        line.split()[0] for line in parity("coverage", "--missing").stdout.splitlines() if line.startswith("aten::")
    ]
    assert missing == [r[0] for r in rows if "no" in r[1:]]


def test_composite_denominator_comes_from_torchs_dispatcher():
    """Oracle: torch's dispatcher. Every listed overload has a CompositeImplicitAutograd kernel, and the ops a
    non-strict program keeps (meshgrid, diff, conv_transpose2d: seen in a real export) are in the listing."""
    out = parity("coverage", "--composite").stdout
    m = re.search(r"^(\d+)/(\d+) CompositeImplicitAutograd ATen overloads translated", out, re.M)
    assert m and int(m.group(2)) > 300, out[-2000:]
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines() if line.startswith("aten::")}
    assert len(rows) == int(m.group(2)) and sum(r[0] == "yes" for r in rows.values()) == int(m.group(1))
    for key in rows:
        assert torch._C._dispatch_has_kernel_for_dispatch_key(
            key.replace(".default", ""), "CompositeImplicitAutograd"
        ), key

    class Kept(nn.Module):
        def forward(self, x, y, w):
            a, b = torch.meshgrid(x, y, indexing="ij")
            return torch.diff(a + b), torch.nn.functional.conv_transpose2d(w, w.transpose(0, 1))

    ep = torch.export.export(Kept(), (torch.randn(3), torch.randn(4), torch.randn(2, 2, 3, 3)), strict=False)
    kept = {str(n.target).replace("aten.", "aten::", 1) for n in ep.graph.nodes if n.op == "call_function"}
    for key in ("aten::meshgrid.indexing", "aten::diff.default", "aten::conv_transpose2d.input"):
        assert key in kept and key in rows and rows[key][0] == "yes", (key, sorted(kept))


def test_errors_name_the_problem(tmp_path):
    proc = parity("coverage", "--program", tmp_path / "absent.pt2", expect=3)
    assert "absent.pt2" in proc.stderr, proc.stderr
    proc = parity("coverage", "--torchlib", "--program", tmp_path / "absent.pt2", expect=2)
    assert "--torchlib" in proc.stderr or "--program" in proc.stderr, proc.stderr
    parity("coverage", "extra", expect=2)
