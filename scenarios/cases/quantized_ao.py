"""Quantized models, torchao's eager path: `quantize_(model, config)` swaps each nn.Linear weight for a tensor
subclass (Int8Tensor, IntxUnpackedToInt8Tensor) whose dispatch quantizes / dequantizes at run time.
scenarios/subclasses.py turns those weights into plain tensors before torch.export, so the program holds
torchao's ops (torchao::dequantize_affine, quantize_affine, choose_qparams_affine) and aten::_int_mm on
plain int8 / float tensors.

Configs (torchao 0.18): w8 Int8WeightOnlyConfig (per-channel int8), w4g32 / w4g128 IntxWeightOnlyConfig
(int4, groups of 32 / 128 along in_features), da8w8 Int8DynamicActivationInt8WeightConfig (per-token int8
activations, _int_mm), da8w4 Int8DynamicActivationIntxWeightConfig (per-token int8 activations, int4
weights in groups of 32).

Random weights under the case's seed, nothing downloaded; torchao is imported only when a module is built.
Names: quant_<model>_ao_<config>, in the quantized family (quant_*) next to the PT2E cases of quantized.py.

da8w8 programs depend on the CPU that captures them (torchao's int_scaled_matmul, docs/cpu-branches.md), so
each is captured twice with torchao's CPU predicates forced (scenarios/cpu_branches.py), on every host:
quant_<model>_ao_da8w8 as an AMX CPU (the s8s8 program: _int_mm(int8, int8); a CPU without VNNI captures
the same one) and quant_<model>_ao_da8w8_u8s8 as a CPU with VNNI and without AMX (the u8s8 program: x + 128
as uint8, _int_mm(uint8, int8), minus 128 * colsum(W)). The other configs have no CPU branch.
"""
import copy
import warnings

import torch
import transformers as tf
from torch import nn

from ..registry import Case, register
from ._zoo import BATCH, CausalLM, text_shapes, token_inputs
from .blocks import LlamaBlock, P, S
from .models_text import _DEC

CONFIGS = ("w8", "w4g32", "w4g128", "da8w8", "da8w8_u8s8", "da8w4")
# Case suffix -> the CPU class forced at capture (scenarios/cpu_branches.BRANCHES); the torchao config is the
# suffix's first part.
CPU_BRANCH = {"da8w8": "torchao_amx", "da8w8_u8s8": "torchao_vnni"}


def _config(key: str):
    """The torchao config named by `key` (imported here: importing scenarios must not need torchao)."""
    from torchao.quantization import (
        Int8DynamicActivationInt8WeightConfig,
        Int8DynamicActivationIntxWeightConfig,
        Int8WeightOnlyConfig,
        IntxWeightOnlyConfig,
        PerGroup,
    )
    return {
        "w8": lambda: Int8WeightOnlyConfig(),
        "w4g32": lambda: IntxWeightOnlyConfig(weight_dtype=torch.int4, granularity=PerGroup(32)),
        "w4g128": lambda: IntxWeightOnlyConfig(weight_dtype=torch.int4, granularity=PerGroup(128)),
        "da8w8": lambda: Int8DynamicActivationInt8WeightConfig(),
        "da8w4": lambda: Int8DynamicActivationIntxWeightConfig(weight_dtype=torch.int4,
                                                               weight_granularity=PerGroup(32)),
    }[key.split("_")[0]]()


def _family(name, build, inputs, dynamic_shapes, description, configs=CONFIGS):
    """One case per config: `build()` with quantize_ applied once per process, a copy per module."""
    for key in configs:
        quantized = {}

        def make_module(key=key, quantized=quantized):
            if "module" not in quantized:
                from torchao.quantization import quantize_
                with torch.random.fork_rng(), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model = build().eval()
                    quantize_(model, _config(key))
                    quantized["module"] = model
            return copy.deepcopy(quantized["module"])

        register(Case(name=f"quant_{name}_ao_{key}", make_module=make_module, input_sets=inputs,
                      dynamic_shapes=dynamic_shapes, description=f"{description} (torchao quantize_, {key})",
                      cpu_branch=CPU_BRANCH.get(key)))


# Widths for the LLaMA-style models: every Linear's in_features (128 or 256) is a multiple of both group
# sizes, 32 and 128. Head dim 32 (4 query heads, 2 key/value heads).
DIM, HIDDEN, HEADS, KV_HEADS = 128, 256, 4, 2
HEAD_DIM = DIM // HEADS


def _llama_block_inputs():
    """blocks._llama_inputs at this file's widths (that one is fixed at dim 32, head dim 8): the same
    sequence / cache lengths, RoPE cos and sin of the positions after the cache."""
    sets = []
    for s, past in ((3, 4), (5, 6)):
        pos = torch.arange(past, past + s, dtype=torch.float32)[:, None]
        freq = 1.0 / (10000 ** (torch.arange(0, HEAD_DIM, 2, dtype=torch.float32) / HEAD_DIM))
        ang = torch.cat([pos * freq, pos * freq], dim=-1)
        sets.append((torch.randn(2, s, DIM), ang.cos(), ang.sin(), torch.randn(2, KV_HEADS, past, HEAD_DIM),
                     torch.randn(2, KV_HEADS, past, HEAD_DIM)))
    return sets


# The MLP. Its first Linear has in_features 64, which groups of 128 cannot divide (quantize_ asserts
# "input size ... 64 to be divisible by block_size ... 128"), so it has no w4g128 case.
_family("mlp", lambda: nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 32)),
        lambda: [(torch.randn(b, 64),) for b in (2, 3)], ({0: BATCH},), "Linear-ReLU-Linear, 64-128-32",
        configs=("w8", "w4g32", "da8w8", "da8w8_u8s8", "da8w4"))
_family("llama_decoder", lambda: LlamaBlock(DIM, HEADS, KV_HEADS, HIDDEN), _llama_block_inputs,
        ({1: S}, {0: S}, {0: S}, {2: P}, {2: P}), "blocks.LlamaBlock at dim 128, hidden 256")

_LM = dict(_DEC, hidden_size=DIM, intermediate_size=HIDDEN, num_key_value_heads=KV_HEADS)
_family("llama_lm", lambda: CausalLM(tf.LlamaForCausalLM(tf.LlamaConfig(**_LM))), token_inputs(),
        text_shapes("input_ids", "attention_mask"), "transformers LLaMA causal LM, hidden 128")
_family("qwen2_lm", lambda: CausalLM(tf.Qwen2ForCausalLM(tf.Qwen2Config(**_LM))), token_inputs(),
        text_shapes("input_ids", "attention_mask"), "transformers Qwen2 causal LM (biased QKV), hidden 128")
