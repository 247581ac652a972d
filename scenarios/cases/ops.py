"""ATen ops with traps: each case is one op (or a small group) whose ONNX form is easy to get wrong."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.export import Dim

from ..registry import Case, register


class Fn1(nn.Module):
    """Wraps a function of the inputs (no weights) as a module; one class per arity, because
    torch.export pairs dynamic_shapes with forward's named parameters."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, a):
        return self.fn(a)


class Fn2(Fn1):
    def forward(self, a, b):
        return self.fn(a, b)


class Fn3(Fn1):
    def forward(self, a, b, c):
        return self.fn(a, b, c)


def op_case(name, fn, input_sets, dynamic_shapes=None, description=""):
    arity = fn.__code__.co_argcount
    wrapper = {1: Fn1, 2: Fn2, 3: Fn3}[arity]
    register(Case(name=name, make_module=lambda: wrapper(fn), input_sets=input_sets, dynamic_shapes=dynamic_shapes,
                  description=description))


B = Dim("batch", min=2, max=64)

op_case("op_roll", lambda x: torch.roll(x, shifts=(1, -2), dims=(0, 2)),
        lambda: [(torch.randn(b, 3, 5),) for b in (4, 7)], ({0: B},), "roll over two dims, negative shift")
op_case("op_interpolate_nearest", lambda x: F.interpolate(x, scale_factor=2, mode="nearest"),
        lambda: [(torch.randn(b, 3, 4, 5),) for b in (2, 3)], ({0: B},), "nearest upsampling x2")
op_case("op_interpolate_bilinear", lambda x: F.interpolate(x, size=(7, 9), mode="bilinear", align_corners=False),
        lambda: [(torch.randn(b, 2, 4, 5),) for b in (2, 3)], ({0: B},), "bilinear resize, half-pixel centres")
op_case(
    "op_interpolate_bilinear_align",
    lambda x: F.interpolate(x, scale_factor=1.5, mode="bilinear", align_corners=True),
    lambda: [(torch.randn(2, 2, 4, 6),), (torch.randn(2, 2, 4, 6),)],
    None,
    "bilinear, align_corners=True",
)
op_case("op_nonzero", lambda x: torch.nonzero(x > 0),
        lambda: [(torch.randn(4, 5),), (torch.randn(4, 5),)], None, "data-dependent output size")
op_case("op_bfloat16_round_trip", lambda x: (x.to(torch.bfloat16) * 3).to(torch.float32),
        lambda: [(torch.randn(b, 8),) for b in (3, 6)], ({0: B},), "bfloat16 compute, float32 out")
op_case("op_gather", lambda x, i: torch.gather(x, 1, i),
        lambda: [(torch.randn(b, 6), torch.randint(0, 6, (b, 4))) for b in (3, 5)], ({0: B}, {0: B}), "gather dim 1")
op_case("op_scatter_add", lambda x, i, s: x.scatter_add(1, i, s),
        lambda: [(torch.zeros(b, 6), torch.randint(0, 6, (b, 4)), torch.randn(b, 4)) for b in (3, 5)],
        ({0: B}, {0: B}, {0: B}), "scatter_add with repeated indices")
op_case("op_index_put", lambda x, i, v: torch.index_put(x, (i,), v, accumulate=False),
        lambda: [(torch.randn(8, 3), torch.tensor([1, 5, 6]), torch.randn(3, 3)) for _ in range(2)], None,
        "x[idx] = v through index_put")
op_case("op_cumsum", lambda x: torch.cumsum(x, dim=1),
        lambda: [(torch.randn(b, 7),) for b in (2, 9)], ({0: B},), "cumsum along dim 1")
op_case("op_topk", lambda x: tuple(torch.topk(x, 3, dim=-1)),
        lambda: [(torch.randn(b, 10),) for b in (2, 5)], ({0: B},), "topk values and indices")
op_case("op_einsum", lambda a, b: torch.einsum("bij,bjk->bik", a, b),
        lambda: [(torch.randn(b, 3, 4), torch.randn(b, 4, 5)) for b in (2, 6)], ({0: B}, {0: B}), "batched einsum")
op_case("op_sort", lambda x: tuple(torch.sort(x, dim=1, descending=True)),
        lambda: [(torch.randn(b, 6),) for b in (2, 4)], ({0: B},), "sort descending")
op_case("op_argmax", lambda x: torch.argmax(x, dim=1, keepdim=True),
        lambda: [(torch.randn(b, 9),) for b in (2, 4)], ({0: B},), "argmax keepdim")
op_case("op_where_clamp", lambda x, y: torch.where(x > 0, x, y).clamp(-0.5, 0.5),
        lambda: [(torch.randn(b, 4), torch.randn(b, 4)) for b in (2, 8)], ({0: B}, {0: B}), "where then clamp")
op_case("op_softmax_logsoftmax", lambda x: (torch.softmax(x, -1), torch.log_softmax(x, 1)),
        lambda: [(torch.randn(b, 5, 6),) for b in (2, 3)], ({0: B},), "softmax and log_softmax on different dims")
op_case("op_mean_var", lambda x: (x.mean(dim=(1, 2), keepdim=True), x.var(dim=1, unbiased=True)),
        lambda: [(torch.randn(b, 5, 6),) for b in (2, 3)], ({0: B},), "mean over two dims, unbiased var")
op_case("op_pow_rsqrt_erf", lambda x: torch.erf(x) + torch.rsqrt(x.abs() + 1) * x.pow(3),
        lambda: [(torch.randn(b, 5),) for b in (2, 3)], ({0: B},), "erf, rsqrt, pow")
op_case("op_integer_div_mod", lambda a, b: (torch.div(a, b, rounding_mode="floor"), torch.remainder(a, b),
                                             torch.div(a, b, rounding_mode="trunc")),
        lambda: [(torch.randint(-20, 20, (n, 4)), torch.randint(1, 6, (n, 4)) * (1 - 2 * torch.randint(0, 2, (n, 4))))
                 for n in (3, 5)], ({0: B}, {0: B}), "floor/trunc division and Python-sign remainder")
op_case("op_expand_repeat", lambda x: (x.expand(-1, 4, -1), x.repeat(1, 2, 3)),
        lambda: [(torch.randn(b, 1, 3),) for b in (2, 3)], ({0: B},), "expand and repeat")
op_case("op_flip_stack_chunk", lambda x: torch.stack(torch.flip(x, [1]).chunk(2, dim=1), dim=0),
        lambda: [(torch.randn(b, 6),) for b in (2, 3)], ({0: B},), "flip, chunk, stack")
op_case("op_constant_pad", lambda x: F.pad(x, (1, 2, 0, 1), value=0.5),
        lambda: [(torch.randn(b, 3, 4),) for b in (2, 3)], ({0: B},), "constant padding of the last two dims")
op_case("op_reflect_pad", lambda x: F.pad(x, (2, 1), mode="reflect"),
        lambda: [(torch.randn(b, 3, 6),) for b in (2, 3)], ({0: B},), "reflect padding")


class ConvPoolNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.gn = nn.GroupNorm(2, 8)

    def forward(self, x):
        y = F.max_pool2d(self.conv(x), 2)
        y = self.gn(self.dw(y))
        return F.adaptive_avg_pool2d(y, 1).flatten(1)


register(Case(name="op_conv_pool_norm", make_module=ConvPoolNorm,
              input_sets=lambda: [(torch.randn(b, 3, 16, 16),) for b in (2, 3)], dynamic_shapes=({0: B},),
              description="conv stride 2, depthwise conv, group norm, max/avg pooling"))


class EmbeddingLayerNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(50, 16)
        self.ln = nn.LayerNorm(16)

    def forward(self, ids):
        return F.gelu(self.ln(self.emb(ids)))


S = Dim("seq", min=2, max=128)
register(Case(name="op_embedding_layernorm_gelu", make_module=EmbeddingLayerNorm,
              input_sets=lambda: [(torch.randint(0, 50, (2, s)),) for s in (5, 11)], dynamic_shapes=({1: S},),
              description="embedding, layer norm, gelu with a dynamic sequence"))


class SDPA(nn.Module):
    def forward(self, q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


register(Case(name="op_sdpa_bool_mask", make_module=SDPA,
              input_sets=lambda: [(torch.randn(2, 4, s, 8), torch.randn(2, 4, s, 8), torch.randn(2, 4, s, 8),
                                   torch.rand(s, s) > 0.3) for s in (5, 9)],
              dynamic_shapes=({2: S}, {2: S}, {2: S}, {0: S, 1: S}),
              description="scaled dot-product attention with a boolean mask"))


class CausalSDPA(nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


register(Case(name="op_sdpa_causal", make_module=CausalSDPA,
              input_sets=lambda: [tuple(torch.randn(1, 2, s, 8) for _ in range(3)) for s in (4, 7)],
              dynamic_shapes=({2: S}, {2: S}, {2: S}), description="causal attention"))
