"""The long tail of real models: a left-padded LLM batch (the padded query rows see no key under the causal
mask, where torch's attention gives 0 and a plain ONNX Softmax NaN); a sinusoidal position table built
under torch.no_grad() from the sequence length (a grad-mode region with a symbolic-size argument)."""
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
