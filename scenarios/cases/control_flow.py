"""Control flow: torch.cond, while_loop, scan and map."""
import torch
from torch import nn
from torch._higher_order_ops import scan, while_loop
from torch._higher_order_ops.map import map as map_rows
from torch.export import Dim

from ..registry import Case, register

B = Dim("batch", min=2, max=64)


class CondSimple(nn.Module):
    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda t: t.sin(), lambda t: t.cos(), (x,))


class CondMultipleOutputs(nn.Module):
    def forward(self, x, y):
        return torch.cond(x.mean() > y.mean(), lambda a, b: (a + b, a * b), lambda a, b: (a - b, b - a), (x, y))


class CondNested(nn.Module):
    def forward(self, x):
        def outer_true(t):
            return torch.cond(t.max() > 1.0, lambda u: u * 2, lambda u: u / 2, (t,))
        return torch.cond(x.sum() > 0, outer_true, lambda t: t - 1, (x,))


class CondSubmodules(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)

    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda t: self.a(t), lambda t: self.b(t) + torch.ones(4), (x,))


class WhileCountUp(nn.Module):
    def forward(self, x):
        def cond_fn(i, acc):
            return i < 5

        def body_fn(i, acc):
            return i + 1, acc + x
        _, out = while_loop(cond_fn, body_fn, (torch.zeros((), dtype=torch.int64), torch.zeros_like(x)))
        return out


class WhileCountDown(nn.Module):
    def forward(self, n, x):
        def cond_fn(i, acc):
            return i > 0

        def body_fn(i, acc):
            return i - 1, acc * 0.5 + 1
        return while_loop(cond_fn, body_fn, (n.clone(), x.clone()))


class ScanCumsum(nn.Module):
    def forward(self, x):
        def combine(carry, xs):
            nxt = carry + xs
            return nxt, nxt.clone()
        return scan(combine, torch.zeros(x.shape[1:]), x)


class ScanTwoCarriesReverse(nn.Module):
    def forward(self, x, w):
        def combine(carry, xs):
            s, p = carry
            s2 = s + xs * w
            p2 = p * 0.9 + xs
            return (s2, p2), s2 + p2
        return scan(combine, (torch.zeros(x.shape[1:]), torch.ones(x.shape[1:])), x, reverse=True)


class MapRows(nn.Module):
    """map over the rows of x with an extra operand and a weight: two outputs per row."""
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, bias):
        def body(row, b):
            h = torch.tanh(self.fc(row) + b)
            return h, h.sum().reshape(1)
        return map_rows(body, x, bias)


class CondReturnsInt(nn.Module):
    """Both branches return a Python int (an unbacked SymInt after the cond) that scales the input."""

    def forward(self, x):
        return x * torch.cond(x.sum() > 0, lambda t: 3, lambda t: 5, (x,))


class CondTensorAndInt(nn.Module):
    """Branches return (tensor, int); the int is also a user output (a number, 0-d in the case folder)."""

    def forward(self, x):
        a, b = torch.cond(x.sum() > 0, lambda t: (t + 1, 2), lambda t: (t - 1, 7), (x,))
        return a * b, b


class WhileIntCounters(nn.Module):
    """while_loop carrying two Python ints (as_ints in the program): i counts to the dynamic batch size,
    s sums 0..i-1; both leave the loop as SymInts, one scales x, one is a user output."""

    def forward(self, x):
        def cond_fn(i, s):
            return i < x.shape[0]

        def body_fn(i, s):
            return i + 1, s + i
        i, s = while_loop(cond_fn, body_fn, (0, 0))
        return x * s, i


class WhileItemCounter(nn.Module):
    """while_loop whose carried counter starts at n.item(): the serializer lists that symbol among the
    carried tensors by name (strict only: non-strict capture refuses an unbacked SymInt input)."""

    def forward(self, x, n):
        def cond_fn(i, acc):
            return i > 0

        def body_fn(i, acc):
            return i - 1, acc * 2
        _, acc = while_loop(cond_fn, body_fn, (n.item(), x))
        return acc


register(Case(name="cond_simple", make_module=CondSimple,
              input_sets=lambda: [(torch.randn(b, 3).abs(),) for b in (2, 4)] + [(-torch.randn(3, 3).abs(),)],
              dynamic_shapes=({0: B},), description="torch.cond on the sign of a sum (both branches run)"))
register(Case(name="cond_multiple_outputs", make_module=CondMultipleOutputs,
              input_sets=lambda: [(torch.randn(b, 3) + 1, torch.randn(b, 3)) for b in (2, 4)] +
              [(torch.randn(3, 3) - 1, torch.randn(3, 3))],
              dynamic_shapes=({0: B}, {0: B}), description="two outputs per branch"))
register(Case(name="cond_nested", make_module=CondNested,
              input_sets=lambda: [(torch.randn(b, 3).abs() * 2,) for b in (2, 4)] + [(-torch.randn(3, 3).abs(),)],
              dynamic_shapes=({0: B},), description="a cond inside a cond branch"))
register(Case(name="cond_submodules", make_module=CondSubmodules,
              input_sets=lambda: [(torch.randn(b, 4).abs(),) for b in (2, 4)] + [(-torch.randn(3, 4).abs(),)],
              dynamic_shapes=({0: B},), description="branches call submodules with weights and create constants"))
register(Case(name="while_count_up", make_module=WhileCountUp,
              input_sets=lambda: [(torch.randn(b, 3),) for b in (2, 4)], dynamic_shapes=({0: B},),
              description="while_loop with an incrementing counter"))
register(Case(name="while_count_down", make_module=WhileCountDown,
              input_sets=lambda: [(torch.tensor(n), torch.randn(3)) for n in (3, 6)],
              description="while_loop with a data-dependent trip count, decrementing"))
register(
    Case(
        name="scan_cumsum",
        make_module=ScanCumsum,
        input_sets=lambda: [(torch.randn(s, 3),) for s in (4, 7)],
        dynamic_shapes=({0: Dim("steps", min=2, max=64)},),
        description="scan with one carry",
    )
)
register(Case(name="scan_two_carries_reverse", make_module=ScanTwoCarriesReverse,
              input_sets=lambda: [(torch.randn(5, 3), torch.randn(3)) for _ in range(2)],
              description="scan with two carries, an additional input, reverse"))
register(Case(name="map_rows", make_module=MapRows,
              input_sets=lambda: [(torch.randn(r, 4), torch.randn(4)) for r in (3, 6)],
              dynamic_shapes=({0: Dim("rows", min=2, max=64)}, None),
              description="torch map over rows with an extra operand and submodule weights (Scan without carries)"))
register(Case(name="cond_returns_int", make_module=CondReturnsInt,
              input_sets=lambda: [(torch.randn(b, 4).abs(),) for b in (2, 5)] + [(-torch.randn(3, 4).abs(),)],
              dynamic_shapes=({0: B},), description="cond branches return Python ints (3 or 5) scaling x"))
register(Case(name="cond_tensor_and_int", make_module=CondTensorAndInt,
              input_sets=lambda: [(torch.randn(b, 4).abs(),) for b in (2, 5)] + [(-torch.randn(3, 4).abs(),)],
              dynamic_shapes=({0: B},), description="cond branches return (tensor, int); the int is an output"))
register(Case(name="while_int_counters", make_module=WhileIntCounters,
              input_sets=lambda: [(torch.randn(b),) for b in (3, 6)], dynamic_shapes=({0: B},),
              description="while_loop carrying two Python ints up to the dynamic batch size"))
register(Case(name="while_item_counter", make_module=WhileItemCounter,
              input_sets=lambda: [(torch.randn(3), torch.tensor(n)) for n in (3, 5, 0)],
              description="while_loop whose counter starts at n.item() (strict only)"))
