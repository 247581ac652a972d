"""Every module here registers its cases on import."""
from . import (  # noqa: F401
    basic,
    blocks,
    complex,  # complex tensors at the graph's edges (docs/complex.md)
    control_flow,
    custom_ops,
    data_dependent,  # output sizes and op arguments from the data
    fast_path,  # fast-path kernels called directly (_native_multi_head_attention)
    half,  # zoo models in float16 / bfloat16
    inplace,
    long_tail,
    models_text,
    models_vision,
    mutations,  # state written more than once per call
    ops,
    quantized,
    quantized_ao,  # torchao quantize_ (tensor-subclass weights)
    shapes,
    signal,  # stft / fft front ends
    signatures,
    vision_ops,
)
