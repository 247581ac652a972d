"""Model blocks built from configs with random weights: Conv-BN-ReLU, a transformer encoder layer, a
LLaMA-style decoder block with RoPE and a KV cache passed as tensors, an LSTM."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.export import Dim

from ..registry import Case, register

B = Dim("batch", min=2, max=64)
S = Dim("seq", min=2, max=128)


class ConvBnRelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
                                  nn.Conv2d(16, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU())

    def forward(self, x):
        return self.body(x)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim) + 0.1 * torch.randn(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([-x2, x1], dim=-1)


class LlamaBlock(nn.Module):
    """Pre-norm attention with rotary embeddings and a KV cache (past keys/values in, present out), then
    a SwiGLU MLP. Grouped-query attention: 4 query heads share 2 key/value heads."""

    def __init__(self, dim=32, heads=4, kv_heads=2, hidden=64):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, dim // heads
        self.q = nn.Linear(dim, dim, bias=False)
        self.k = nn.Linear(dim, kv_heads * self.head_dim, bias=False)
        self.v = nn.Linear(dim, kv_heads * self.head_dim, bias=False)
        self.o = nn.Linear(dim, dim, bias=False)
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)
        self.n1, self.n2 = RMSNorm(dim), RMSNorm(dim)

    def forward(self, x, cos, sin, past_k, past_v):
        b, s, _ = x.shape
        h = self.n1(x)
        q = self.q(h).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = self.k(h).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v(h).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = torch.cat([past_k, k], dim=2)
        v = torch.cat([past_v, v], dim=2)
        rep = self.heads // self.kv_heads
        attn = F.scaled_dot_product_attention(q, k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1))
        x = x + self.o(attn.transpose(1, 2).reshape(b, s, -1))
        h = self.n2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h)), k, v


def _llama_inputs():
    sets = []
    for s, past in ((3, 4), (5, 6)):
        pos = torch.arange(past, past + s, dtype=torch.float32)[:, None]
        freq = 1.0 / (10000 ** (torch.arange(0, 8, 2, dtype=torch.float32) / 8))
        ang = torch.cat([pos * freq, pos * freq], dim=-1)
        sets.append(
            (torch.randn(2, s, 32), ang.cos(), ang.sin(), torch.randn(2, 2, past, 8), torch.randn(2, 2, past, 8))
        )
    return sets


P = Dim("past", min=2, max=128)


class LSTMModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 16, num_layers=1, batch_first=True)

    def forward(self, x):
        out, (h, c) = self.lstm(x)
        return out, h, c


register(Case(name="block_conv_bn_relu", make_module=ConvBnRelu,
              input_sets=lambda: [(torch.randn(b, 3, 12, 12),) for b in (2, 3)], dynamic_shapes=({0: B},),
              description="two Conv-BN-ReLU stages (eval-mode batch norm)"))
register(Case(name="block_transformer_encoder",
              make_module=lambda: nn.TransformerEncoderLayer(32, 4, dim_feedforward=64, dropout=0.0, batch_first=True),
              input_sets=lambda: [(torch.randn(2, s, 32),) for s in (5, 9)], dynamic_shapes=({1: S},),
              description="nn.TransformerEncoderLayer, batch first"))
register(Case(name="block_llama_decoder", make_module=LlamaBlock, input_sets=_llama_inputs,
              dynamic_shapes=({1: S}, {0: S}, {0: S}, {2: P}, {2: P}),
              description="LLaMA-style block: RMSNorm, RoPE, GQA attention with a KV cache, SwiGLU"))
register(Case(name="block_lstm", make_module=LSTMModel,
              input_sets=lambda: [(torch.randn(2, 5, 8),) for _ in range(2)],
              description="a one-layer LSTM, batch first (static: torch.export unrolls it over the sequence)"))
register(Case(name="block_mlp_gelu_dropout",
              make_module=lambda: nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Dropout(0.1), nn.Linear(64, 16),
                                                nn.LayerNorm(16)),
              input_sets=lambda: [(torch.randn(b, 16),) for b in (2, 7)], dynamic_shapes=({0: B},),
              description="Linear-GELU-Dropout(eval)-Linear-LayerNorm"))
