"""Every module here registers its cases on import."""
from . import basic, blocks, control_flow, inplace, ops, shapes, signatures  # noqa: F401
