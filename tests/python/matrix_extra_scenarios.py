"""Test-only scenarios, loaded by scenarios.capture through PARITY_EXTRA_SCENARIOS (never in the normal
matrix): a module torch.export refuses (a Python branch on a tensor value)."""
import torch
from torch import nn
from torch.export import Dim

from scenarios.registry import Case, register


class RefusedBranch(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x + 1
        return x - 1


register(Case(name="refused_branch", make_module=RefusedBranch,
              input_sets=lambda: [(torch.randn(3, 2),), (torch.randn(5, 2),)],
              dynamic_shapes=({0: Dim("batch")},),
              description="torch.export cannot capture data-dependent Python control flow"))
