"""In-place ops and buffer mutations: they must export as values, and mutated buffers as outputs."""
import torch
from torch import nn
from torch.export import Dim

from ..registry import Case, register

B = Dim("batch", min=2, max=64)


class AddInPlace(nn.Module):
    def forward(self, x, y):
        z = x.clone()
        z.add_(y)
        z.mul_(2)
        return z


class SliceAssign(nn.Module):
    def forward(self, x):
        y = x.clone()
        y[:2, :3] = 1.0
        return y


class IndexAssign(nn.Module):
    def forward(self, x, idx, update):
        y = x.clone()
        y[..., idx] = update
        return y


class MaskedAssign(nn.Module):
    def forward(self, x):
        y = x.clone()
        y[y < 0] = 0.0
        return y


class Counter(nn.Module):
    """A buffer updated on every call: the new count is an extra output."""

    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.zeros(1))

    def forward(self, x):
        self.count.add_(1)
        return x * self.count


class BatchNormTraining(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(4)

    def forward(self, x):
        # The registry puts modules in eval mode: training=True is asked for explicitly, so the running
        # statistics are updated (two buffer mutations).
        bn = self.bn
        return torch.nn.functional.batch_norm(x, bn.running_mean, bn.running_var, bn.weight, bn.bias, training=True,
                                              momentum=0.1)


class InputMutation(nn.Module):
    def forward(self, x, y):
        x.add_(y)  # mutates a user input
        return x * 2


register(Case(name="inplace_add_mul", make_module=AddInPlace,
              input_sets=lambda: [(torch.randn(b, 3), torch.randn(b, 3)) for b in (2, 5)],
              dynamic_shapes=({0: B}, {0: B}), description="add_ and mul_ on a clone"))
register(Case(name="inplace_slice_assign", make_module=SliceAssign,
              input_sets=lambda: [(torch.randn(b, 5),) for b in (3, 6)], dynamic_shapes=({0: B},),
              description="x[:2, :3] = 1"))
register(Case(name="inplace_index_assign", make_module=IndexAssign,
              input_sets=lambda: [(torch.randn(b, 4, 6), torch.tensor([0, 4]), torch.randn(b, 4, 2)) for b in (2, 3)],
              dynamic_shapes=({0: B}, None, {0: B}), description="x[..., idx] = update"))
register(Case(name="inplace_masked_assign", make_module=MaskedAssign,
              input_sets=lambda: [(torch.randn(b, 5),) for b in (2, 4)], dynamic_shapes=({0: B},),
              description="x[x < 0] = 0"))
register(Case(name="buffer_counter", make_module=Counter,
              input_sets=lambda: [(torch.randn(b, 3),) for b in (2, 4)], dynamic_shapes=({0: B},),
              description="a counter buffer incremented in forward"))


register(Case(name="buffer_batchnorm_training", make_module=BatchNormTraining,
              input_sets=lambda: [(torch.randn(b, 4),) for b in (3, 6)], dynamic_shapes=({0: B},),
              description="batch norm in training mode: running statistics updated"))
register(Case(name="inplace_user_input", make_module=InputMutation,
              input_sets=lambda: [(torch.randn(b, 3), torch.randn(b, 3)) for b in (2, 4)],
              dynamic_shapes=({0: B}, {0: B}), description="a user input mutated in place"))
