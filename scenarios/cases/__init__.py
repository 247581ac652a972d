"""Every module here registers its cases on import."""
from . import basic  # noqa: F401
