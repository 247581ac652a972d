"""Rows of the ATen translation table (aten_cases.CASES) for ops whose output size depends on the data:
masked_select, nonzero_static (cut to its size or filled with fill_value), unique_consecutive along a dim.

Imported at the end of aten_cases.py (after every other table: rows are seeded by their index).
"""
import torch
from aten_cases import F, _batch, aten, case, r, rb, ri

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


# --- int-list arguments holding unbacked SymInts (`.item()` or a data-dependent size) ---
def _amount(n, upper):
    """n.item(), bounded for torch.export (0 <= k <= upper)."""
    k = n.item()
    torch._check(k >= 0)
    torch._check(k <= upper)
    return k


_xn = lambda: (r(2, 3, 6), torch.tensor(2))
case("aten::pad.default", lambda x, n: F.pad(x, (1, _amount(n, 8))), _xn, tag="item-amount")
case("aten::pad.default", lambda x, n: F.pad(x, (_amount(n, 8), 0, 0, _amount(n, 8)), value=0.5), _xn,
     tag="item-amounts-2d")
case("aten::pad.default", lambda x, n: F.pad(x, (_amount(n, 5), 1), mode="reflect"), _xn, tag="item-reflect")
case("aten::pad.default", lambda x, n: F.pad(x, (0, _amount(n, 8)), mode="replicate"), _xn, tag="item-replicate")
case("aten::constant_pad_nd.default", lambda x, n: F.pad(x, (_amount(n, 8), 1)), _xn, decompose=True,
     tag="item-amount")
case("aten::roll.default", lambda x, n: torch.roll(x, _amount(n, 8), 2), _xn, tag="item-shift")
case("aten::roll.default", lambda x, n: torch.roll(x, (_amount(n, 8), -1), (2, 0)), _xn, tag="item-shift-2d")
def _unflatten_by_item(x, n):
    k = n.item()
    torch._check(k > 0)
    torch._check(x.shape[2] % k == 0)
    return x.unflatten(2, (k, -1))


case("aten::unflatten.int", _unflatten_by_item, _xn, tag="item-size")
# normalized_shape = [u0]: LayerNormalization's axis is the list's length, the default weight's size run-time
def _positive(x):
    return torch.masked_select(x, x > 0)  # [u0]


def _kept_rows_t(x):
    return x[x.sum(1) > 0].t()  # [4, u0]


_masked = lambda: (r(4, 5),)
case("aten::layer_norm.default", lambda x: F.layer_norm(_positive(x), _positive(x).shape), _masked,
     tag="unbacked-size")
case("aten::native_layer_norm.default", lambda x: F.layer_norm(_kept_rows_t(x), _kept_rows_t(x).shape[-1:]),
     lambda: (r(6, 4),), decompose=True, tag="unbacked-size")
case("aten::rms_norm.default", lambda x: F.rms_norm(_positive(x), _positive(x).shape), _masked, tag="unbacked-size")
case("aten::rms_norm.default", lambda x: F.rms_norm(_positive(x), _positive(x).shape), _masked, opset=23,
     onnx_ops=("RMSNormalization",), tag="opset23-unbacked-size")

# --- kthvalue: k is a SymInt argument (static, or read from the data) ---
case("aten::kthvalue.default", lambda x: tuple(aten.kthvalue.default(x, 2)), lambda: (r(3, 6),))
case("aten::kthvalue.default", lambda x: tuple(aten.kthvalue.default(x, 3, 0, True)), lambda: (r(5, 4),),
     tag="dim0-keepdim")
case("aten::kthvalue.default", lambda x, n: tuple(torch.kthvalue(x, _amount(n, 6) + 1, -1)),
     lambda: (r(2, 3, 7), torch.tensor(4)), tag="item-k")
case("aten::kthvalue.default", lambda x: tuple(aten.kthvalue.default(x, 1, 1)), lambda: (r(4, 5),), dynamic=_batch,
     tag="dynamic")
