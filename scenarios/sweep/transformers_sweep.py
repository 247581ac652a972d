"""The transformers sweep: one case per model type of the installed `transformers`, built from its config
class with small sizes and random weights, fed inputs made from the model's own forward arguments.

    parity matrix --scenarios scenarios/sweep/transformers_sweep.py --shard 1/8 --out out/sweep-1
    parity report --merge out/sweep-*/report.json --out out/sweep

Every model type of `transformers.models.auto.modeling_auto.MODEL_MAPPING_NAMES` becomes a case
`hf_<model_type>`: the causal-LM head where the type has one (logits, padded batch), the seq2seq head for
encoder-decoders (teacher forcing), else the base model. A type that cannot be built (config refuses the
small sizes, an input we cannot make, a dependency missing) is still a case: its capture fails with a
message starting `cannot build hf_<type>:` and the reason, so the report lists it instead of dropping it.
This is the regression suite to run before upgrading torch or transformers; it is too large for the
default matrix (docs/transformers-sweep.md gives its figures and how to shard it).
"""
from __future__ import annotations

import inspect
import zlib

import torch
from torch import nn
from torch.export import Dim

from parity import Case, register

BATCH = Dim("batch", min=2, max=16)
SEQ = Dim("seq", min=2, max=64)
# (batch, seq) per input set: set 1 differs in both dims and carries left padding.
TEXT_SIZES = ((2, 8), (3, 13))
IMAGE_SIZE = 32

# Config attributes that set a model's size, scaled down wherever a config has them (sub-configs too).
SIZE_OVERRIDES = {
    "hidden_size": 32, "d_model": 32, "n_embd": 32, "embed_dim": 32, "dim": 32, "n_embed": 32,
    "num_hidden_layers": 2, "num_layers": 2, "n_layer": 2, "n_layers": 2, "encoder_layers": 2,
    "decoder_layers": 2, "num_decoder_layers": 2, "num_encoder_layers": 2,
    "num_attention_heads": 4, "n_head": 4, "n_heads": 4, "encoder_attention_heads": 4,
    "decoder_attention_heads": 4, "num_heads": 4,
    "num_key_value_heads": 2, "head_dim": 8, "kv_channels": 8,
    "intermediate_size": 64, "ffn_dim": 64, "encoder_ffn_dim": 64, "decoder_ffn_dim": 64, "n_inner": 64,
    "d_ff": 64, "d_kv": 8, "moe_intermediate_size": 32, "shared_expert_intermediate_size": 32,
    "num_experts": 4, "num_local_experts": 4, "n_routed_experts": 4, "num_experts_per_tok": 2,
    "max_position_embeddings": 128, "max_source_positions": 16, "max_target_positions": 64,
    "image_size": IMAGE_SIZE, "patch_size": 8, "num_mel_bins": 16,
    "kv_lora_rank": 16, "q_lora_rank": 16, "qk_rope_head_dim": 8, "qk_nope_head_dim": 8, "v_head_dim": 8,
    "sliding_window": 4, "first_k_dense_replace": 1,
}
# Per-family exceptions: extra config values, or a string saying why the type is not swept.
FAMILY_EXCEPTIONS: dict[str, dict | str] = {}
VOCAB = 128
TEXT_INPUTS = ("input_ids", "attention_mask", "token_type_ids", "decoder_input_ids", "decoder_attention_mask")
# Types that mask patches in a random order drawn by torch.rand inside the forward unless `noise` is given:
# the sweep gives it (one value per patch), so that eager, the program and the ONNX draw the same mask.
MASKING_NOISE = ("vit_mae",)


def _set_small(config, seen=None):
    """Applies SIZE_OVERRIDES to `config` and to every sub-config it holds."""
    seen = seen if seen is not None else set()
    if id(config) in seen:
        return
    seen.add(id(config))
    for key, value in SIZE_OVERRIDES.items():
        current = getattr(config, key, None)
        if isinstance(current, int) and not isinstance(current, bool) and current > value:
            setattr(config, key, value)
    if getattr(config, "vocab_size", None):
        ids = [v for k, v in vars(config).items() if k.endswith("token_id") and isinstance(v, int)]
        config.vocab_size = max([VOCAB] + [i + 1 for i in ids])
    for value in list(vars(config).values()):
        if hasattr(value, "to_dict") and hasattr(value, "model_type"):
            _set_small(value, seen)


def _head(model_type: str):
    """(model class name, task) for a model type: the causal-LM or seq2seq head where there is one."""
    from transformers.models.auto import modeling_auto as ma

    # Encoders with a masked-LM head also list a causal-LM head (BERT as a decoder): they are swept as encoders.
    causal = {
        k: v for k, v in ma.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.items() if k not in ma.MODEL_FOR_MASKED_LM_MAPPING_NAMES
    }
    for mapping, task in ((causal, "causal_lm"),
                          (ma.MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES, "seq2seq"),
                          (ma.MODEL_FOR_SPEECH_SEQ_2_SEQ_MAPPING_NAMES, "seq2seq")):
        if model_type in mapping:
            return mapping[model_type], task
    name = ma.MODEL_MAPPING_NAMES[model_type]
    return (name[0] if isinstance(name, (list, tuple)) else name), "base"


def _config_value(config, key, default):
    for c in (config, getattr(config, "vision_config", None), getattr(config, "audio_config", None),
              getattr(config, "encoder_config", None)):
        if c is not None and isinstance(getattr(c, key, None), int):
            return getattr(c, key)
    return default


def _make_input(name: str, config, k: int, task: str):
    """Input `name` of set `k`, or None when the sweep does not know how to make it."""
    b, s = TEXT_SIZES[k]
    if name in ("input_ids", "decoder_input_ids"):
        return torch.randint(3, min(VOCAB, getattr(config, "vocab_size", VOCAB) or VOCAB), (b, s))
    if name in ("attention_mask", "decoder_attention_mask"):
        mask = torch.ones(b, s, dtype=torch.int64)
        if k == 1 and task == "causal_lm":
            mask[0, :3] = 0  # left padding, as a batch for generation is padded
        elif k == 1:
            mask[0, -3:] = 0
        return mask
    if name == "token_type_ids":
        return torch.zeros(b, s, dtype=torch.int64)
    if name == "pixel_values":
        channels = _config_value(config, "num_channels", 3)
        size = _config_value(config, "image_size", IMAGE_SIZE)
        return torch.randn(b, channels, size, size)
    if name == "input_values":
        return torch.randn(b, 1600 + 160 * k)
    if name == "noise":  # MASKING_NOISE: the order in which patches are masked
        patches = _config_value(config, "image_size", IMAGE_SIZE) // _config_value(config, "patch_size", 16)
        return torch.rand(b, patches * patches)
    if name == "input_features":
        mels = _config_value(config, "num_mel_bins", 16)
        frames = 2 * _config_value(config, "max_source_positions", 16)
        return torch.randn(b, mels, frames)
    return None


def _dynamic_axes(name: str):
    if name in TEXT_INPUTS:
        return {0: BATCH, 1: SEQ}
    if name == "input_values":
        return {0: BATCH, 1: Dim.AUTO}
    return {0: BATCH}


class Flat(nn.Module):
    """Calls the model with named tensors and returns every tensor of its output, flattened."""

    def __init__(self, model, names, extra):
        super().__init__()
        self.model, self.names, self.extra = model, list(names), dict(extra)

    def forward(self, *tensors):
        out = self.model(**dict(zip(self.names, tensors)), **self.extra)
        items = out.to_tuple() if hasattr(out, "to_tuple") else out
        leaves = torch.utils._pytree.tree_leaves(items)
        return tuple(t for t in leaves if isinstance(t, torch.Tensor))


class SweepError(RuntimeError):
    pass


def _break_constant_parameters(model, model_type: str):
    """Parameters initialised to one value (MoE routers and expert biases at zero) make top-k routing a tie
    in every row, and torch.topk's order among equal values is unspecified (on CPU not the lowest index
    first, which is ONNX TopK's rule): the sweep would compare tie-breaking, not the program. Such
    parameters get small random values, seeded by the model type."""
    generator = torch.Generator().manual_seed(zlib.crc32(model_type.encode()))
    with torch.no_grad():
        for p in model.parameters():
            if p.is_floating_point() and p.numel() > 1 and bool((p == p.reshape(-1)[0]).all()):
                p.add_(torch.randn(p.shape, generator=generator, dtype=p.dtype) * 0.02)


def _build(model_type: str):
    """(model, input_names, config, task) for a model type; SweepError says why it cannot be built."""
    import transformers
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    exception = FAMILY_EXCEPTIONS.get(model_type, {})
    if isinstance(exception, str):
        raise SweepError(exception)
    class_name, task = _head(model_type)
    cls = getattr(transformers, class_name, None)
    if cls is None:
        raise SweepError(f"transformers has no class {class_name}")
    config = CONFIG_MAPPING[model_type]()
    _set_small(config)
    for key, value in exception.items():
        setattr(config, key, value)
    model = cls(config)
    _break_constant_parameters(model, model_type)
    params = inspect.signature(model.forward).parameters
    required = [n for n, p in params.items() if p.default is inspect.Parameter.empty
                and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    known = [n for n in params if n in TEXT_INPUTS + ("pixel_values", "input_values", "input_features")
             or (n == "noise" and model_type in MASKING_NOISE)]
    names = [n for n in params if n in required or n in known]
    if task == "base" and "decoder_input_ids" in names and "input_ids" not in names:
        names.remove("decoder_input_ids")
    for n in names:
        if _make_input(n, config, 0, task) is None:
            raise SweepError(f"no rule to make the input {n!r} of {class_name}.forward")
    if task != "seq2seq":
        names = [n for n in names if not n.startswith("decoder_")]
    if "input_ids" not in names:  # a mask without ids belongs to a forward that takes other inputs
        names = [n for n in names if n not in ("attention_mask", "token_type_ids")]
    if not names:
        raise SweepError(f"{class_name}.forward takes none of the inputs the sweep can make")
    extra = {k: v for k, v in (("use_cache", False), ("return_dict", True)) if k in params}
    return Flat(model, names, extra), names, config, task


def _case(model_type: str) -> Case:
    name = f"hf_{model_type}"
    built: dict = {}

    def parts():
        if not built:
            try:
                built["parts"] = _build(model_type)
            except Exception as e:  # the report lists why, never drops the type
                why = str(e).splitlines()[0][:300] if str(e) else ""
                kind = "" if isinstance(e, SweepError) else f"{type(e).__name__}: "
                raise SweepError(f"cannot build {name}: {kind}{why}") from e
        return built["parts"]

    def input_sets():
        model, names, config, task = parts()
        return [tuple(_make_input(n, config, k, task) for n in names) for k in range(len(TEXT_SIZES))]

    def shapes():  # forward(*tensors): torch.export sees one argument, the tuple of tensors
        return (tuple(_dynamic_axes(n) for n in parts()[1]),)

    return Case(name=name, make_module=lambda: parts()[0], input_sets=input_sets, dynamic_shapes=shapes,
                description=f"transformers {model_type}, {_head(model_type)[0]}", source=__file__)


def model_types() -> list[str]:
    from transformers.models.auto import modeling_auto as ma

    return sorted(ma.MODEL_MAPPING_NAMES)


for _type in model_types():
    register(_case(_type))
