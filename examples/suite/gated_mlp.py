"""A user's own regression suite, case 1: a gated MLP registered with the Case API.

    parity matrix --scenarios examples/suite --modes strict,nonstrict --no-peers
"""
import torch
from torch import nn
from torch.export import Dim

from parity import Case, register


class GatedMLP(nn.Module):
    def __init__(self, width=8, hidden=16):
        super().__init__()
        self.up, self.gate, self.down = nn.Linear(width, hidden), nn.Linear(width, hidden), nn.Linear(hidden, width)
        self.norm = nn.LayerNorm(width)

    def forward(self, x):
        return self.norm(x + self.down(torch.sigmoid(self.gate(x)) * torch.tanh(self.up(x))))


register(Case(name="example_gated_mlp", make_module=GatedMLP,
              # Set 0 is torch.export's example; the other sets change the dynamic dims (never to 1).
              input_sets=lambda: [(torch.randn(4, 3, 8),), (torch.randn(2, 5, 8),), (torch.randn(7, 2, 8),)],
              dynamic_shapes=({0: Dim("batch"), 1: Dim("seq")},),
              description="gated MLP with a residual and LayerNorm, dynamic batch and sequence"))
