"""Quantized models: PT2E quantization (torchao's prepare_pt2e / convert_pt2e) of small nets, with the x86
(X86InductorQuantizer) and XNNPACK quantizers, static (per-channel int8 weights, calibrated activations)
and dynamic (activation qparams chosen at run time by choose_qparams). The module a case exports is the
converted program: quantized_decomposed quantize / dequantize / choose_qparams nodes around float ops.

Tiny widths and resolutions, random weights, calibration on seeded random data; nothing is downloaded.
Names: quant_<model>_<x86|xnnpack>_<static|dynamic>.
"""
import copy
import warnings

import torch
from torch import nn

from ..registry import Case, register
from ._zoo import BATCH
from .blocks import LlamaBlock, P, S, _llama_inputs
from .models_vision import BasicBlock, InvertedResidual

CALIBRATION_BATCHES = 4


def _quantizer(kind: str, scheme: str):
    """A fresh quantizer: kind "x86", "xnnpack" (per-channel weights) or "xnnpack_tensor" (per-tensor weights),
    scheme "static" or "dynamic"."""
    dynamic = scheme == "dynamic"
    if kind == "x86":
        import torchao.quantization.pt2e.quantizer.x86_inductor_quantizer as x86

        return x86.X86InductorQuantizer().set_global(
            x86.get_default_x86_inductor_quantization_config(is_dynamic=dynamic)
        )
    from torchao.testing.pt2e._xnnpack_quantizer import XNNPACKQuantizer, get_symmetric_quantization_config
    per_channel = kind != "xnnpack_tensor"
    return XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=per_channel,
                                                                           is_dynamic=dynamic))


def quantize(model: nn.Module, examples: list[tuple], dynamic_shapes, kind: str, scheme: str) -> torch.fx.GraphModule:
    """prepare_pt2e -> calibration on `examples` -> convert_pt2e (weights folded to int8 constants)."""
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        captured = torch.export.export(model.eval(), examples[0], dynamic_shapes=dynamic_shapes).module()
        prepared = prepare_pt2e(captured, _quantizer(kind, scheme))
        with torch.no_grad():
            for args in examples:
                prepared(*args)
        return convert_pt2e(prepared)


def _quantized_case(name, build, inputs, dynamic_shapes, kind, scheme, description, calibration):
    """A case whose module is `build()` quantized; conversion runs once per process (copies after)."""
    converted = {}

    def make_module():
        if "module" not in converted:
            # Calibration data from its own seed, so that the case's input sets are not the calibration set.
            with torch.random.fork_rng():
                model = build()
                torch.manual_seed(1234)
                converted["module"] = quantize(model, calibration(), dynamic_shapes, kind, scheme)
        return copy.deepcopy(converted["module"])

    register(Case(name=f"quant_{name}_{kind}_{scheme}", make_module=make_module, input_sets=inputs,
                  dynamic_shapes=dynamic_shapes, description=f"{description} ({kind} quantizer, {scheme})"))


def _family(name, build, make_inputs, dynamic_shapes, description, schemes):
    """The cases of one model: `make_inputs(k)` gives k argument tuples (input sets and calibration)."""
    for kind, scheme in schemes:
        _quantized_case(name, build, lambda: make_inputs(2), dynamic_shapes, kind, scheme, description,
                        lambda: make_inputs(CALIBRATION_BATCHES))


def _images(size, channels=3):
    return lambda k: [(torch.randn(2 + i % 2, channels, size, size),) for i in range(k)]


def _rows(width):
    return lambda k: [(torch.randn(2 + i % 2, width),) for i in range(k)]


class ConvNet(nn.Module):
    """Conv-BN-ReLU twice, a pooled linear head."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(),
                                  nn.Conv2d(8, 8, 3, padding=1), nn.ReLU())
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        return self.head(torch.flatten(nn.functional.adaptive_avg_pool2d(self.body(x), 1), 1))


class TinyResNet(nn.Module):
    """ResNet-style: models_vision's BasicBlock (in-place ReLU, += residual, a strided 1x1 downsample)."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True))
        self.blocks = nn.Sequential(BasicBlock(8, 8, 1), BasicBlock(8, 16, 2))
        self.fc = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(self.blocks(self.stem(x)), 1), 1))


class TinyMobileNet(nn.Module):
    """MobileNet-style: models_vision's InvertedResidual (depthwise conv, a residual block, Hardswish with SE)."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True))
        self.blocks = nn.Sequential(InvertedResidual(8, 16, 8, 3, 1, nn.ReLU, None),
                                    InvertedResidual(8, 24, 12, 3, 2, nn.Hardswish, "relu"))
        self.fc = nn.Linear(12, 4)

    def forward(self, x):
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(self.blocks(self.stem(x)), 1), 1))


class Block(nn.Module):
    """BasicBlock with an out-of-place residual add (the x86 quantizer refuses the in-place one)."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(),
                                  nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout))
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        identity = x if self.down is None else self.down(x)
        return torch.relu(self.body(x) + identity)


class ResNet18(nn.Module):
    """A ResNet-18 layout (stem, 4 stages of 2 blocks: 17 quantized convs deep and a linear head) at width 8
    and 32 px: deep enough for float rounding to move a requantized activation by a step somewhere."""

    def __init__(self, width=8, classes=10):
        super().__init__()
        w = [width, width * 2, width * 4, width * 8]
        self.stem = nn.Sequential(nn.Conv2d(3, w[0], 3, 1, 1, bias=False), nn.BatchNorm2d(w[0]), nn.ReLU())
        layers, cin = [], w[0]
        for i, cout in enumerate(w):
            layers += [Block(cin, cout, 1 if i == 0 else 2), Block(cout, cout, 1)]
            cin = cout
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(w[-1], classes)

    def forward(self, x):
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(self.layers(self.stem(x)), 1), 1))


class TransformerEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, dropout=0.0, batch_first=True)

    def forward(self, x):
        return self.layer(x)


class Llama(nn.Module):
    """blocks.LlamaBlock (RMSNorm, RoPE, GQA attention with a KV cache, SwiGLU): its linears quantized."""

    def __init__(self):
        super().__init__()
        self.block = LlamaBlock()

    def forward(self, x, cos, sin, past_k, past_v):
        return self.block(x, cos, sin, past_k, past_v)


STATIC = [("x86", "static"), ("xnnpack", "static")]
ALL = STATIC + [("x86", "dynamic"), ("xnnpack", "dynamic")]
DYNAMIC = [("x86", "dynamic"), ("xnnpack", "dynamic")]
_IMAGE_SHAPES = ({0: BATCH},)

_family("convnet", ConvNet, _images(12), _IMAGE_SHAPES, "Conv-BN-ReLU net", STATIC)
# The x86 quantizer refuses BasicBlock's in-place residual add (prepare_pt2e: "Input partition has more than
# one output node"), so the ResNet-style net is quantized with XNNPACK only (docs/quantization.md).
_family("resnet", TinyResNet, _images(16), _IMAGE_SHAPES, "ResNet-style net of models_vision's BasicBlock",
        [("xnnpack", "static")])
_family("resnet18", ResNet18, _images(32), _IMAGE_SHAPES,
        "ResNet-18 layout, 17 quantized convs deep (per-tensor XNNPACK, per-channel x86)",
        [("xnnpack_tensor", "static"), ("x86", "static")])
_family("mobilenet", TinyMobileNet, _images(16), _IMAGE_SHAPES,
        "MobileNet-style net of models_vision's InvertedResidual (depthwise, SE, Hardswish)", STATIC)
_family("mlp", lambda: nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8)), _rows(16), _IMAGE_SHAPES,
        "Linear-ReLU-Linear", ALL)
_family("transformer_encoder", TransformerEncoder, lambda k: [(torch.randn(2, 5 + 2 * (i % 2), 16),) for i in range(k)],
        ({1: S},), "nn.TransformerEncoderLayer, batch first", [("x86", "static"), ("xnnpack", "dynamic")])


def _llama_sets(k):
    sets = _llama_inputs()
    return [sets[i % len(sets)] for i in range(k)]


_family("llama_decoder", Llama, _llama_sets, ({1: S}, {0: S}, {0: S}, {2: P}, {2: P}),
        "blocks.LlamaBlock, dynamic quantization of its linears", DYNAMIC)
