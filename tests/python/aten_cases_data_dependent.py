"""Rows of the ATen translation table (aten_cases.CASES) for ops whose output size depends on the data:
masked_select, nonzero_static (cut to its size or filled with fill_value), unique_consecutive along a dim.

Imported at the end of aten_cases.py (after every other table: rows are seeded by their index).
"""
import torch
from aten_cases import _batch, aten, case, r, rb, ri

# --- masked_select: the selected elements in row-major order of self and mask broadcast together ---
case("aten::masked_select.default", lambda x: aten.masked_select.default(x, x > 0), lambda: (r(3, 4),))
case("aten::masked_select.default", lambda x, m: aten.masked_select.default(x, m), lambda: (r(3, 4), rb(4)),
     tag="mask-broadcast")
case("aten::masked_select.default", lambda x, m: aten.masked_select.default(x, m), lambda: (r(4), rb(2, 3, 4)),
     tag="self-broadcast")
case("aten::masked_select.default", lambda x, m: aten.masked_select.default(x, m),
     lambda: (ri(9, 3, 5), torch.zeros(3, 5, dtype=torch.bool)), tag="int64-none-selected")
case("aten::masked_select.default", lambda x: aten.masked_select.default(x, x.sum(1, keepdim=True) > 0),
     lambda: (r(5, 3),), dynamic=_batch, tag="dynamic")

# --- nonzero_static: nonzero's rows, cut to `size` or filled up to it with fill_value ---
case("aten::nonzero_static.default", lambda x: aten.nonzero_static.default(x, size=4), lambda: (rb(3, 5),),
     tag="cut")
case("aten::nonzero_static.default", lambda x: aten.nonzero_static.default(x, size=9, fill_value=-7),
     lambda: (torch.tensor([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]]),), tag="filled")
case("aten::nonzero_static.default", lambda x: aten.nonzero_static.default(x, size=3), lambda: (ri(3, 2, 3, 4),),
     tag="3d-default-fill")
case("aten::nonzero_static.default", lambda x: aten.nonzero_static.default(x > 0, size=x.shape[0]),
     lambda: (r(4, 3),), dynamic=_batch, tag="dynamic-size")

# --- unique_consecutive along a dim: runs of equal slices; inverse and counts come whatever the flags ---
_runs = lambda: (torch.tensor([[1, 1], [1, 1], [0, 1], [0, 1], [1, 1], [1, 0]]),)
case("aten::unique_consecutive.default", lambda a: aten.unique_consecutive.default(a, dim=0), _runs, tag="dim0")
case("aten::unique_consecutive.default", lambda a: aten.unique_consecutive.default(a, True, True, 1),
     lambda: (_runs()[0].T.float(),), tag="dim1-float")
# dim=2, not -1: torch 2.13's fake kernel gives a negative dim a wrong output meta ([2, 2, u0, 2, 2, 5] here).
case("aten::unique_consecutive.default", lambda a: aten.unique_consecutive.default(a, dim=2),
     lambda: (torch.tensor([[[1, 1, 2, 2, 2], [0, 0, 0, 3, 3]], [[1, 1, 2, 2, 5], [0, 0, 0, 3, 3]]]),), tag="dim-last")
