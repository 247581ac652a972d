"""Fast-path kernels a program calls directly, which torch.export keeps as one op: nn.MultiheadAttention's
inference kernel (_native_multi_head_attention) with the module's own weights, as its fast path calls it."""
import torch
from torch import nn
from torch.export import Dim

from ..registry import Case, register

B = Dim("batch", min=2, max=64)
T = Dim("seq", min=2, max=64)


class FastPathAttention(nn.Module):
    """Self-attention through torch._native_multi_head_attention on an nn.MultiheadAttention's weights,
    returning the output and (need_weights) the head-averaged weights; with a key padding mask."""

    def __init__(self, key_padding=False):
        super().__init__()
        self.mha = nn.MultiheadAttention(16, 4, batch_first=True)
        self.key_padding = key_padding

    def forward(self, x, pad=None):
        m = self.mha
        return torch._native_multi_head_attention(
            x, x, x, m.embed_dim, m.num_heads, m.in_proj_weight, m.in_proj_bias, m.out_proj.weight,
            m.out_proj.bias, pad if self.key_padding else None, True, True, 1 if self.key_padding else None)


def _padding(batch, seq):
    """True = padded: the last keys of each row but the first, never every key."""
    lengths = torch.randint(1, seq + 1, (batch,))
    return torch.arange(seq)[None, :] >= lengths[:, None]


register(Case(name="mha_fast_path", make_module=FastPathAttention,
              input_sets=lambda: [(torch.randn(b, s, 16),) for b, s in ((2, 5), (3, 7))],
              dynamic_shapes=({0: B, 1: T},),
              description="torch._native_multi_head_attention (nn.MultiheadAttention's fast path), need_weights"))
register(Case(name="mha_fast_path_key_padding", make_module=lambda: FastPathAttention(key_padding=True),
              input_sets=lambda: [(torch.randn(b, s, 16), _padding(b, s)) for b, s in ((2, 5), (3, 7))],
              dynamic_shapes=({0: B, 1: T}, {0: B, 1: T}),
              description="the fast-path kernel with a key padding mask (mask_type 1)"))
