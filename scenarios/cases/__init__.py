"""Every module here registers its cases on import."""
from . import basic, blocks, control_flow, custom_ops, inplace, ops, shapes, signatures  # noqa: F401
