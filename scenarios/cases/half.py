"""Half precision: zoo models cast to float16 and bfloat16 as people deploy them (`model.to(dtype)`, inputs in
the same dtype; integer inputs such as token ids stay integers). Each case is the base case's module, input
sets and dynamic shapes, so a half case fails where its float32 twin passes only because of the dtype.
The matrix name is half_<base>_<f16|bf16>."""
import torch

from ..registry import _CASES, Case, register
from . import blocks, models_text, models_vision  # noqa: F401  (the base cases, registered first)

BASES = ("mlp_batch", "block_transformer_encoder", "model_llama", "model_llama_decode_step", "model_vit",
         "model_resnet18_tv", "model_mobilenet_v2")
DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16}


def _cast(value, dtype):
    """Floating tensors to dtype, through lists, tuples and dicts (a decode step's cache); others as they are."""
    if isinstance(value, torch.Tensor):
        return value.to(dtype) if value.is_floating_point() else value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _cast(v, dtype) for k, v in value.items()}
    return value


def _half_case(base: Case, tag: str, dtype: torch.dtype) -> Case:
    return Case(name=f"half_{base.name}_{tag}", make_module=lambda: base.make_module().to(dtype),
                input_sets=lambda: [_cast(tuple(s), dtype) for s in base.input_sets()],
                kwargs_sets=(lambda: [_cast(k, dtype) for k in base.kwargs_sets()]) if base.kwargs_sets else None,
                dynamic_shapes=base.dynamic_shapes, description=f"{base.name} in {dtype}".replace("torch.", ""))


for _base in BASES:
    for _tag, _dtype in DTYPES.items():
        register(_half_case(_CASES[_base], _tag, _dtype))
