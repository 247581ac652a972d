"""A test-only user suite (tests/python/test_user_suites.py): one case that fails on purpose, next to
examples/suite, so that shards have failures and regressions to join."""
import torch
from torch import nn
from torch.export import Dim

from parity import register


class SlotIds(nn.Module):
    def forward(self, x):
        # Eager and ONNX pick different indices among tied scores; arithmetic on them is no longer a tie.
        return torch.topk(x, 2, dim=-1).indices * 10


@register
def slot_ids_from_ties():
    ties = torch.tensor([[1.0, 3, 3, 0, 3], [2, 2, 1, 2, 0]])
    return SlotIds(), [(ties,), (torch.cat([ties, ties]),)], ({0: Dim("batch")},)
