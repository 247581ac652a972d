"""Every module here registers its cases on import."""
from . import (basic, blocks, control_flow, custom_ops, inplace, models_text, models_vision, ops,  # noqa: F401
               quantized, shapes, signatures)
