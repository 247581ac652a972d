"""Every module here registers its cases on import."""
from . import (basic, blocks, control_flow, custom_ops, inplace, long_tail, models_text, models_vision,  # noqa: F401
               ops, quantized, shapes, signatures, vision_ops)
from . import signal  # noqa: F401,E402  (stft / fft front ends)
