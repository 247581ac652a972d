"""State written more than once in one call: the exported mutation outputs must hold what eager leaves
behind (the last write), through submodules, views, loops and control flow. Capture records eager's final
state (scenarios/state.py) and verify compares every mutation output with it.

Strict and non-strict captures keep the in-place ops (training IR), where `add_ = add_(buf, 1)` makes
`add_` another name of `buf`; decomposed captures are functional. Both must give eager's state.
"""
import torch
from torch import nn
from torch.export import Dim

from ..registry import Case, register

B = Dim("batch", min=2, max=64)


class InputTwice(nn.Module):
    """An input written twice: whole, then a slice of it."""

    def forward(self, x, y):
        x.add_(y)
        x[:, :2].mul_(3)
        return x.sum(dim=1)


class CounterPerLayer(nn.Module):
    """A counter bumped once per layer in a Python loop (eager leaves 3 after one call)."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))
        self.register_buffer("count", torch.zeros((), dtype=torch.int64))

    def forward(self, x):
        for layer in self.layers:
            self.count.add_(1)
            x = layer(x) * self.count
        return x


class Accumulator(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.register_buffer("total", torch.zeros(width))

    def forward(self, x):
        self.total.add_(x.mean(dim=0))
        return x + self.total


class ChildrenCalledTwice(nn.Module):
    """Two children, each called twice; the parent reads their buffers between the calls."""

    def __init__(self):
        super().__init__()
        self.a, self.b = Accumulator(4), Accumulator(4)

    def forward(self, x):
        x = self.b(self.a(x))
        seen = self.a.total * 2 + self.b.total
        x = self.b(self.a(x))
        return x + seen


class Bump(nn.Module):
    """torch's own export test: an int64 buffer at 10, bumped once per call."""

    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.tensor(10))

    def forward(self, x):
        self.buf.add_(1)
        return x + self.buf


class ChildBumpedThrice(nn.Module):
    def __init__(self):
        super().__init__()
        self.child = Bump()

    def forward(self, x):
        return self.child(self.child(self.child(x)))


class KVCacheTwoWrites(nn.Module):
    """A cache written at two places per call: index_copy_ at the new positions, then a slice copy_."""

    def __init__(self):
        super().__init__()
        self.register_buffer("cache", torch.zeros(2, 8, 4))

    def forward(self, k, v, pos):
        self.cache.index_copy_(1, pos, k)
        self.cache[:, 6:8].copy_(v)
        return self.cache.sum(dim=1)


class IndexPutTwice(nn.Module):
    """index_put_ at two index sets, the buffer read in between."""

    def __init__(self):
        super().__init__()
        self.register_buffer("table", torch.zeros(6, 3))

    def forward(self, x, idx):
        self.table.index_put_((idx,), x)
        mid = self.table.sum(dim=0)
        self.table.index_put_((idx + 1,), x * 2, accumulate=True)
        return mid + self.table.sum(dim=0)


class SliceCopies(nn.Module):
    """copy_ into overlapping slices of a buffer."""

    def __init__(self):
        super().__init__()
        self.register_buffer("state", torch.zeros(3, 5))

    def forward(self, x):
        self.state[:, :3].copy_(x[:, :3])
        self.state[:, 2:4].copy_(x[:, 2:4] * 2)
        return self.state * 1


class ReadBetween(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.ones(4))

    def forward(self, x):
        self.buf.add_(x.sum(dim=0))
        y = self.buf * 2
        self.buf.mul_(3)
        return y + self.buf


class AroundCond(nn.Module):
    """Written before and after a cond whose branches read it."""

    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.zeros(3))

    def forward(self, x):
        self.buf.add_(x.sum(dim=0))
        y = torch.cond(x.sum() > 0, lambda b: b * 2, lambda b: b - 1, (self.buf,))
        self.buf.mul_(2)
        return y + self.buf


class WhileLoopBody(nn.Module):
    """In-place writes inside a while_loop body (on its own clone), then the result copied into the buffer."""

    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.ones(3))

    def forward(self, x):
        def cond_fn(i, acc):
            return i < 3

        def body_fn(i, acc):
            acc = acc.clone()
            acc.add_(x)
            acc.mul_(0.5)
            return i + 1, acc

        _, out = torch._higher_order_ops.while_loop(cond_fn, body_fn, (torch.tensor(0), self.buf.clone()))
        self.buf.copy_(out)
        self.buf.add_(1)
        return out


class StaleView(nn.Module):
    """A view taken before its base is written and read after: it sees the write."""

    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.zeros(2, 3))

    def forward(self, x):
        row = self.buf[0]
        self.buf.add_(x)
        return row * 2


class TransposedWrite(nn.Module):
    """A write through a transposed view and a select of it."""

    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.arange(6.0).reshape(2, 3))

    def forward(self, x):
        self.buf.t()[1].add_(x)
        return self.buf.sum(dim=1)


class SplitWrites(nn.Module):
    """Writes through the pieces of split and unbind."""

    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.arange(12.0).reshape(4, 3))

    def forward(self, x):
        top, bottom = self.buf.split(2)
        top.add_(x)
        bottom.mul_(2)
        rows = self.buf.unbind(0)
        rows[3].sub_(1)
        return self.buf.sum(dim=0)


def _x(*shape):
    return lambda: [(torch.randn(*shape),), (torch.randn(*shape),)]


register(Case(name="mutation_input_twice", make_module=InputTwice,
              input_sets=lambda: [(torch.randn(b, 4), torch.randn(b, 4)) for b in (3, 5)],
              dynamic_shapes=({0: B}, {0: B}), description="x.add_(y) then x[:, :2].mul_(3) on an input"))
register(Case(name="mutation_counter_per_layer", make_module=CounterPerLayer,
              input_sets=lambda: [(torch.randn(b, 4),) for b in (2, 5)], dynamic_shapes=({0: B},),
              description="an int64 counter buffer bumped once per layer (3 per call)"))
register(Case(name="mutation_children_called_twice", make_module=ChildrenCalledTwice,
              input_sets=lambda: [(torch.randn(b, 4),) for b in (2, 5)], dynamic_shapes=({0: B},),
              description="two children called twice each, their buffers read in between"))
register(Case(name="mutation_child_bumped_thrice", make_module=ChildBumpedThrice,
              input_sets=lambda: [(torch.arange(3),), (torch.arange(5),)],
              dynamic_shapes=({0: B},), description="torch's test: int64 buffer 10 bumped thrice, eager leaves 13"))
register(Case(name="mutation_kv_cache_two_writes", make_module=KVCacheTwoWrites,
              input_sets=lambda: [(torch.randn(2, 2, 4), torch.randn(2, 2, 4), torch.tensor([1, 3])),
                                  (torch.randn(2, 2, 4), torch.randn(2, 2, 4), torch.tensor([0, 4]))],
              description="a cache written by index_copy_ and a slice copy_ in one call"))
register(Case(name="mutation_index_put_twice", make_module=IndexPutTwice,
              input_sets=lambda: [(torch.randn(2, 3), torch.tensor([0, 2])),
                                  (torch.randn(3, 3), torch.tensor([1, 3, 4]))],
              dynamic_shapes=({0: B}, {0: B}), description="index_put_ twice, accumulate the second time"))
register(Case(name="mutation_slice_copies", make_module=SliceCopies, input_sets=_x(3, 5),
              description="copy_ into two overlapping slices"))
register(Case(name="mutation_read_between", make_module=ReadBetween,
              input_sets=lambda: [(torch.randn(b, 4),) for b in (2, 5)], dynamic_shapes=({0: B},),
              description="add_, a read, then mul_ on one buffer"))
register(Case(name="mutation_around_cond", make_module=AroundCond,
              input_sets=lambda: [(torch.randn(b, 3) + 1,) for b in (2, 4)] + [(torch.randn(3, 3) - 1,)],
              dynamic_shapes=({0: B},), description="a buffer written before and after a cond that reads it"))
register(Case(name="mutation_while_loop_body", make_module=WhileLoopBody, input_sets=_x(3),
              description="in-place ops in a while_loop body, its result copied into a buffer, then add_"))
register(Case(name="mutation_stale_view", make_module=StaleView, input_sets=_x(2, 3),
              description="a row view taken before add_ on its buffer, read after"))
register(Case(name="mutation_transposed_write", make_module=TransposedWrite, input_sets=_x(2),
              description="buf.t()[1].add_(x): a write through a transpose and a select"))
register(Case(name="mutation_split_writes", make_module=SplitWrites, input_sets=_x(2, 3),
              description="writes through split and unbind pieces of a buffer"))
