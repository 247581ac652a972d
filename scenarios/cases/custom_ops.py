"""A custom op from a C++ library (TORCH_LIBRARY(parity_demo)): parity_demo::scaled_tanh(x, alpha).

The library is built by CMake (scenarios/custom_ops/, PARITY_WITH_TORCH=ON) into <build>/custom_ops/;
<build> is $PARITY_BUILD_DIR (relative to the source tree or absolute), default `build`. Its fake (shape)
kernel is registered here, which is what torch.export traces with. The case records the library (the
libtorch reference loads it) and the demo translation plugin (lowers the op to Mul/Tanh/Mul) in case.json."""
import os
from pathlib import Path

import torch
from torch import nn
from torch.export import Dim

from ..registry import Case, register

ROOT = Path(__file__).resolve().parents[2]


def _build_file(name: str) -> str:
    return str((ROOT / os.environ.get("PARITY_BUILD_DIR", "build") / "custom_ops" / name).resolve())


def demo_ops_library() -> str:
    return _build_file("libparity_demo_ops.so")


def demo_translation_plugin() -> str:
    return _build_file("libparity_demo_translations.so")


_loaded = False


def load_demo_ops():
    """Loads the library once and registers the op's fake kernel (output = input's shape and dtype)."""
    global _loaded
    if _loaded:
        return
    path = demo_ops_library()
    if not Path(path).is_file():
        raise FileNotFoundError(f"{path} is missing: build the target parity_demo_ops (PARITY_WITH_TORCH=ON)")
    torch.ops.load_library(path)

    @torch.library.register_fake("parity_demo::scaled_tanh")
    def _(x, alpha):
        return torch.empty_like(x)

    _loaded = True


class ScaledTanhBlock(nn.Module):
    def __init__(self):
        super().__init__()
        load_demo_ops()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return torch.ops.parity_demo.scaled_tanh(self.fc(x) * 3, 2.0) + x


register(
    Case(
        name="custom_op_scaled_tanh",
        make_module=ScaledTanhBlock,
        input_sets=lambda: [(torch.randn(b, 4),) for b in (2, 5)],
        dynamic_shapes=({0: Dim("batch", min=2, max=64)},),
        description="a TORCH_LIBRARY custom op (parity_demo::scaled_tanh) between standard ops",
        torch_libraries=lambda: [demo_ops_library()],
        export_plugins=lambda: [demo_translation_plugin()],
    )
)
