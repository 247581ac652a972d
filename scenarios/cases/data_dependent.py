"""Programs whose output sizes depend on the data: masked_select, nonzero_static (cut to its size or filled
with fill_value), unique_consecutive along a dim, boolean-mask rows. torch.export keeps these ops with
unbacked sizes (u0, ...) in the program; the ONNX computes them at run time (Compress, NonZero, ...).
Then programs whose op arguments are such sizes: pad amounts, roll shifts and unflatten sizes read with
`.item()`, a layer_norm over a masked selection (normalized_shape = [u0])."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.export import Dim

from ..registry import Case, register

B = Dim("batch", min=2, max=64)


class MaskedSelectPositive(nn.Module):
    """The positive elements, doubled: a 1-D output whose length is the count of x > 0."""

    def forward(self, x):
        return torch.masked_select(x, x > 0) * 2


class MaskedSelectColumns(nn.Module):
    """A [5] column mask (a buffer) broadcast over a dynamic batch of rows."""

    def __init__(self):
        super().__init__()
        self.register_buffer("keep", torch.tensor([True, False, True, True, False]))

    def forward(self, x):
        return torch.masked_select(torch.tanh(x), self.keep)


class NonzeroStaticFill(nn.Module):
    """Coordinates of x > 0.5, exactly 8 rows: cut when more, filled with -1 when fewer."""

    def forward(self, x):
        return torch.nonzero_static(x > 0.5, size=8, fill_value=-1)


class NonzeroStaticBatch(nn.Module):
    """As many coordinate rows as the (dynamic) batch has rows, fill 0, then used as float data."""

    def forward(self, x):
        return torch.nonzero_static(x > 0, size=x.shape[0], fill_value=0).float() + x.sum()


class UniqueConsecutiveRows(nn.Module):
    """Runs of equal rows collapse to one, with their lengths (unique_consecutive along dim 0)."""

    def forward(self, x):
        rows, counts = torch.unique_consecutive(x, dim=0, return_counts=True)
        return rows * 2, counts


class BoolMaskRows(nn.Module):
    """The rows whose sum is positive, through a linear layer."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x[x.sum(1) > 0])


def _amount(n, upper):
    """n.item() bounded for torch.export (0 <= k <= upper)."""
    k = n.item()
    torch._check(k >= 0)
    torch._check(k <= upper)
    return k


class PadFromItem(nn.Module):
    """F.pad whose right amount is read from a tensor (an unbacked SymInt in the pad list)."""

    def forward(self, x, n):
        return F.pad(x, (1, _amount(n, 8)), value=-1.0)


class PadReflectFromItem(nn.Module):
    """Reflect padding of the last dim by n.item() on the left (n < the dim's size)."""

    def forward(self, x, n):
        return F.pad(x.unsqueeze(0), (_amount(n, 5), 1), mode="reflect").squeeze(0)


class RollFromItem(nn.Module):
    """torch.roll by n.item() along the batch dim."""

    def forward(self, x, n):
        return torch.roll(x, _amount(n, 16), 0) * 2


class UnflattenFromItem(nn.Module):
    """The last dim (12) split into (n.item(), -1)."""

    def forward(self, x, n):
        k = n.item()
        torch._check(k > 0)
        torch._check(x.shape[-1] % k == 0)
        return x.unflatten(-1, (k, -1)).sum(-1)


class LayerNormUnbacked(nn.Module):
    """layer_norm over the positive elements: normalized_shape is [u0], a size from the data."""

    def forward(self, x):
        y = torch.masked_select(x, x > 0)
        return F.layer_norm(y, y.shape)


def _runs(batch):
    """[batch, 3] rows drawn from 3 distinct rows, each repeated 1-3 times in a row."""
    base = torch.randint(0, 3, (3, 3)).float()
    picks = torch.randint(0, 3, (batch,))
    return base[picks]


register(Case(name="dd_masked_select", make_module=MaskedSelectPositive,
              input_sets=lambda: [(torch.randn(b, 5),) for b in (3, 6)] + [(-torch.rand(4, 5),)],
              dynamic_shapes=({0: B},), description="masked_select(x, x > 0): output length from the data, "
              "none selected in the last set"))
register(Case(name="dd_masked_select_broadcast", make_module=MaskedSelectColumns,
              input_sets=lambda: [(torch.randn(b, 5),) for b in (3, 7)], dynamic_shapes=({0: B},),
              description="masked_select with a [5] buffer mask broadcast over [batch, 5]"))
register(Case(name="dd_nonzero_static", make_module=NonzeroStaticFill,
              input_sets=lambda: [(torch.rand(b, 3),) for b in (3, 6)] + [(torch.zeros(2, 3),)],
              dynamic_shapes=({0: B},), description="nonzero_static(size=8, fill_value=-1): cut or filled"))
register(Case(name="dd_nonzero_static_batch", make_module=NonzeroStaticBatch,
              input_sets=lambda: [(torch.randn(b, 4),) for b in (3, 6)], dynamic_shapes=({0: B},),
              description="nonzero_static whose size is the dynamic batch"))
register(Case(name="dd_unique_consecutive_rows", make_module=UniqueConsecutiveRows,
              input_sets=lambda: [(_runs(b),) for b in (6, 9)], dynamic_shapes=({0: Dim("rows", min=2, max=64)},),
              description="unique_consecutive(dim=0, return_counts=True)"))
register(Case(name="dd_bool_mask_rows", make_module=BoolMaskRows,
              input_sets=lambda: [(torch.randn(b, 4),) for b in (4, 7)], dynamic_shapes=({0: B},),
              description="x[x.sum(1) > 0] (index with a boolean row mask) into a linear layer"))
register(Case(name="dd_pad_from_item", make_module=PadFromItem,
              input_sets=lambda: [(torch.randn(b, 6), torch.tensor(n)) for b, n in ((3, 2), (5, 0), (2, 7))],
              dynamic_shapes=({0: B}, None), description="F.pad(x, (1, n.item())): pad amount from the data"))
register(Case(name="dd_pad_reflect_from_item", make_module=PadReflectFromItem,
              input_sets=lambda: [(torch.randn(b, 6), torch.tensor(n)) for b, n in ((3, 2), (4, 5), (2, 0))],
              dynamic_shapes=({0: B}, None), description="reflect padding by n.item()"))
register(Case(name="dd_roll_from_item", make_module=RollFromItem,
              input_sets=lambda: [(torch.randn(b, 3), torch.tensor(n)) for b, n in ((4, 1), (5, 7), (3, 0))],
              dynamic_shapes=({0: B}, None), description="torch.roll by n.item() (beyond the size too)"))
register(Case(name="dd_unflatten_from_item", make_module=UnflattenFromItem,
              input_sets=lambda: [(torch.randn(b, 12), torch.tensor(n)) for b, n in ((3, 3), (4, 4), (2, 6))],
              dynamic_shapes=({0: B}, None), description="x.unflatten(-1, (n.item(), -1))"))
register(Case(name="dd_layer_norm_unbacked", make_module=LayerNormUnbacked,
              input_sets=lambda: [(torch.randn(b, 5),) for b in (3, 6)], dynamic_shapes=({0: B},),
              description="F.layer_norm(y, y.shape) over y = masked_select(x, x > 0)"))
