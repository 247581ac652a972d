"""The long tail of real models: a left-padded LLM batch (the padded query rows see no key under the causal
mask, where torch's attention gives 0 and a plain ONNX Softmax NaN); a sinusoidal position table built
under torch.no_grad() from the sequence length (a grad-mode region with a symbolic-size argument); torch.vmap
and a Python vmap over scan; a scan whose body has an export-only check on an unbacked size that eager's
inputs violate; a PatchTST forecast whose decomposed program relies on a meta kernel's layout."""
import math

import torch
import transformers as tf
from torch import nn
from torch.export import Dim

from ..registry import Case, register
from ._zoo import VOCAB, CausalLM, text_shapes, token_inputs


def _left_padded_sets():
    """Two batches of different sizes; in each, some rows start with padding (attention_mask 0)."""
    out = []
    for b, s, pads in ((2, 6, (2, 0)), (3, 9, (0, 4, 1))):
        ids = torch.randint(3, VOCAB, (b, s))
        mask = torch.ones(b, s, dtype=torch.int64)
        for row, pad in enumerate(pads):
            mask[row, :pad] = 0
            ids[row, :pad] = 0  # the pad token
        out.append((ids, mask))
    return out


def _llama():
    config = tf.LlamaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128, pad_token_id=0)
    config._attn_implementation = "sdpa"
    return CausalLM(tf.LlamaForCausalLM(config))


register(Case(name="model_llama_left_padded", make_module=_llama, input_sets=_left_padded_sets,
              dynamic_shapes=text_shapes("input_ids", "attention_mask"),
              description="LLaMA on a left-padded batch: causal and padding masks hide every key of padded rows"))


class SinusoidalPositions(nn.Module):
    """x + a sinusoidal position table of x's (dynamic) length, computed under no_grad as encoders do."""

    def __init__(self, dim=16):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.dim = dim

    def forward(self, x):
        with torch.no_grad():
            pos = torch.arange(x.shape[1], dtype=torch.float32)[:, None]
            freq = torch.exp(torch.arange(0, self.dim, 2, dtype=torch.float32) * (-math.log(10000.0) / self.dim))
            table = torch.cat([torch.sin(pos * freq), torch.cos(pos * freq)], dim=-1)
        return self.proj(x + table)


register(Case(name="grad_region_position_table", make_module=SinusoidalPositions,
              input_sets=lambda: [(torch.randn(2, s, 16),) for s in (5, 11)],
              dynamic_shapes=({1: Dim("seq", min=2, max=64)},),
              description="a sinusoidal position table under torch.no_grad() sized by the dynamic sequence length"))


def _mixtral_grouped_mm():
    """A one-layer Mixtral with 4 experts, top-2 routing, its experts run by transformers' grouped_mm path
    (sort by expert, histc counts, cumulative offsets, one grouped matmul per projection)."""
    config = tf.MixtralConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                              num_attention_heads=4, num_key_value_heads=2, num_local_experts=4,
                              num_experts_per_tok=2, max_position_embeddings=128)
    config._experts_implementation = "grouped_mm"
    return CausalLM(tf.MixtralForCausalLM(config))


# transformers::grouped_mm_fallback is registered from Python; the libtorch reference executor runs its C++
# twin (verify/src/reference_transformers.cc).
MIXTRAL_GROUPED_MM = register(Case(name="model_mixtral_grouped_mm", make_module=_mixtral_grouped_mm,
                                   input_sets=token_inputs(), dynamic_shapes=text_shapes("input_ids", "attention_mask"),
                                   description="Mixtral MoE (4 experts, top-2) with transformers' grouped_mm experts"))


# --- torch.vmap, a Python vmap over scan, a scan body with an export-only runtime check, PatchTST ---

class VmapMulAdd(nn.Module):
    """torch.vmap of a per-element `a * b + 1` over two vectors of a dynamic length. The program holds
    torch._functorch.predispatch._add_batch_dim / _remove_batch_dim; capture re-decomposes them through
    functorch's batching rules, whose rule for the `+ 1` leaves `_to_copy(1, dtype=float32)` (a number where
    a tensor is expected)."""

    def forward(self, x, y):
        return torch.vmap(lambda a, b: a * b + 1)(x, y)


register(Case(name="vmap_mul_add", make_module=VmapMulAdd,
              input_sets=lambda: [(torch.randn(3), torch.randn(3)), (torch.randn(7), torch.randn(7))],
              dynamic_shapes=({0: Dim("n", min=2)}, {0: Dim("n", min=2)}),
              description="torch.vmap(lambda a, b: a * b + 1) over a dynamic length"))


def scan_vmap(fn):
    """A vmap written in Python: `fn` applied to each row of its arguments by torch's scan (what a model does
    when torch.vmap cannot be exported), the results stacked along dim 0."""
    from torch._higher_order_ops.scan import scan

    def run(*xs):
        def step(carry, rows):
            return carry.clone(), fn(*rows)
        return scan(step, xs[0].new_zeros(()), xs)[1]
    return run


class ScanVmapMulAdd(nn.Module):
    """The same `a * b + 1` through the Python vmap above: a scan over the dynamic length."""

    def forward(self, x, y):
        return scan_vmap(lambda a, b: a * b + 1)(x, y)


register(Case(name="vmap_python_scan", make_module=ScanVmapMulAdd,
              input_sets=lambda: [(torch.randn(3), torch.randn(3)), (torch.randn(7), torch.randn(7))],
              dynamic_shapes=({0: Dim("n", min=2)}, {0: Dim("n", min=2)}),
              description="a Python vmap of a * b + 1 as a scan over a dynamic length"))


class ScanPrefixCopy(nn.Module):
    """Row i keeps its first pos[i] values, the rest are zeros. Eager runs a Python loop; under export a scan
    whose body reads pos[i] as an unbacked size (u0) and checks, for export only, that it is > 1 (so that
    torch.export does not specialise the slice length to 0 or 1). Eager's inputs hold rows with pos 1: the
    program's runtime assertion `u0 >= 2` fails on them though eager's result is well defined (pytorch#151564)."""

    def forward(self, padded, pos):
        if not torch.compiler.is_exporting():
            out = torch.zeros(padded.shape)
            for i in range(pos.shape[0]):
                out[i, :pos[i]] = padded[i, :pos[i]]
            return out
        from torch._higher_order_ops.scan import scan

        def step(carry, xs):
            row, p = xs
            n = p.item()
            torch._check(n > 0)
            torch._check(n < row.shape[0])
            torch._check(n > 1)  # export only: keeps u0 off {0, 1}
            out = torch.zeros((row.shape[0],))
            out[:n] = row[:n]
            return carry.clone(), out
        return scan(step, padded.new_zeros(()), (padded, pos))[1]


register(Case(name="scan_export_only_check", make_module=ScanPrefixCopy,
              input_sets=lambda: [(torch.randn(5, 6), torch.tensor([1, 2, 3, 4, 5])),
                                  (torch.randn(3, 8), torch.tensor([7, 1, 4]))],
              dynamic_shapes=({0: Dim("rows", min=2), 1: Dim("width", min=3)}, {0: Dim("rows", min=2)}),
              description="scan with an unbacked slice length and an export-only torch._check eager's rows violate"))


class PatchTSTForecast(nn.Module):
    """transformers' PatchTSTForPrediction (tiny, random weights): past values -> the forecast. Its batch norm
    runs on a transposed tensor; decomposed, a Linear's `view` relies on the layout torch's meta kernel gave
    that batch norm (libtorch's CPU kernel returns another one)."""

    def __init__(self):
        super().__init__()
        config = tf.PatchTSTConfig(num_input_channels=3, context_length=32, patch_length=8, patch_stride=8,
                                   prediction_length=6, d_model=16, num_attention_heads=2, num_hidden_layers=1,
                                   ffn_dim=32)
        self.model = tf.PatchTSTForPrediction(config)

    def forward(self, past_values):
        return self.model(past_values=past_values).prediction_outputs


register(Case(name="model_patchtst_prediction", make_module=PatchTSTForecast,
              input_sets=lambda: [(torch.randn(2, 32, 3),), (torch.randn(5, 32, 3),)],
              dynamic_shapes=({0: Dim("batch", min=2, max=64)},),
              description="PatchTST prediction head (batch norm on a transposed tensor) with a dynamic batch"))
