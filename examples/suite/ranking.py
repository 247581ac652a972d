"""A user's own regression suite, case 2: a function returning (model, input_sets, dynamic_shapes).

The scores have ties on purpose: the top-3 indices of equal scores may differ between eager PyTorch and
refrt (which follows ONNX: the lower index first); Parity counts those as ties, not failures.

    parity capture examples/suite/ranking.py:top3_items --modes nonstrict
"""
import torch
from torch import nn
from torch.export import Dim

from parity import register


class TopItems(nn.Module):
    def __init__(self, k=3):
        super().__init__()
        self.k = k

    def forward(self, scores):
        best = torch.topk(scores, self.k, dim=-1)
        return best.values, best.indices, scores.argmax(dim=-1)


@register
def top3_items():
    """top-3 and argmax over integer-valued scores (many ties)"""
    sets = [(torch.randint(0, 4, (n, 9)).float(),) for n in (5, 3, 6)]
    return TopItems(), sets, ({0: Dim("users")},)
