"""Tensor-subclass parameters (scenarios/subclasses.py): torchao's quantize_ models captured without pickle.

Oracles: the caller's module and eager outputs, the .pt2 archive's own weight descriptions
(model_weights_config.json / model_constants_config.json: "use_pickle" per tensor) and the program's nodes.
"""
import json
import sys
import zipfile
from pathlib import Path

import pytest
import torch
from conftest import ROOT
from torch import nn
from torch.export import Dim
from torch.nn.utils import parametrize
from torch.testing._internal.two_tensor import TwoTensor

torchao = pytest.importorskip("torchao")
from torchao.quantization import Int8WeightOnlyConfig, IntxWeightOnlyConfig, PerGroup, quantize_  # noqa: E402

from scenarios import subclasses  # noqa: E402  (conftest puts ROOT on sys.path)

sys.path.insert(0, str(ROOT / "python"))  # this tree's package, as test_python_api.py does
import parity  # noqa: E402

CONFIGS = {"w8": lambda: Int8WeightOnlyConfig(),
           "w4g32": lambda: IntxWeightOnlyConfig(weight_dtype=torch.int4, granularity=PerGroup(32))}


def _mlp(config=None):
    """The issue's MLP, quantized with `config` (a CONFIGS key) when given."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 32)).eval()
    if config:
        quantize_(model, CONFIGS[config]())
    return model


def _is_plain(t):
    return type(t) in (torch.Tensor, nn.Parameter)


@pytest.mark.parametrize("config", CONFIGS)
def test_unwrap_copies_and_leaves_the_callers_module_alone(config):
    model = _mlp(config)
    weight_type = type(model[0].weight)
    assert not _is_plain(model[0].weight)  # quantize_ made it a subclass: the premise of the test
    x = torch.randn(3, 64)
    with torch.no_grad():
        want = model(x)
    unwrapped = subclasses.unwrap(model)
    assert unwrapped is not model
    assert type(model[0].weight) is weight_type and type(model[2].weight) is weight_type
    assert subclasses.subclass_parameters(model) == ["0.weight", "2.weight"]
    tensors = list(unwrapped.named_parameters()) + list(unwrapped.named_buffers())
    assert tensors and all(_is_plain(t) for _, t in tensors), [(n, type(t).__name__) for n, t in tensors]
    assert subclasses.subclass_parameters(unwrapped) == []
    with torch.no_grad():
        torch.testing.assert_close(unwrapped(x), want, rtol=0, atol=0)


def _archive_tensors(pt2: Path) -> dict:
    """name -> entry of every weight and constant the archive describes (torch.export.save's *_config.json)."""
    entries = {}
    with zipfile.ZipFile(pt2) as z:
        for name in z.namelist():
            if name.endswith(("weights_config.json", "constants_config.json")):
                entries.update(json.loads(z.read(name))["config"])
    return entries


@pytest.mark.parametrize("config", CONFIGS)
def test_capture_writes_no_pickled_tensor(config, tmp_path):
    model = _mlp(config)
    # decompose_unsupported=False: the program as torch.export captured it, whatever the build's exporter
    # translates today.
    (captured,) = parity.capture(model, (torch.randn(2, 64),), dynamic_shapes=({0: Dim("batch", min=2, max=16)},),
                                 input_sets=[(torch.randn(3, 64),)], modes=("nonstrict",), out=tmp_path,
                                 name=f"mlp_{config}", decompose_unsupported=False)
    assert captured.status == "captured", captured.error
    pt2 = captured.dir / "model.pt2"
    tensors = _archive_tensors(pt2)
    assert tensors, "the archive describes no weights"
    assert [n for n, e in tensors.items() if e["use_pickle"]] == []
    ep = torch.export.load(str(pt2))
    int8 = [n for n, t in ep.state_dict.items() if t.dtype == torch.int8 and tuple(t.shape) == (128, 64)]
    assert int8, f"no int8 [128, 64] weight among {[(n, t.dtype) for n, t in ep.state_dict.items()]}"
    targets = {str(n.target) for n in ep.graph.nodes if n.op == "call_function"}
    if config == "w4g32":
        assert "torchao.dequantize_affine.default" in targets, sorted(targets)


def test_nested_subclass_is_a_type_error_naming_the_parameter():
    model = nn.Sequential(nn.Linear(4, 4))
    w = model[0].weight.detach()
    model[0].weight = nn.Parameter(TwoTensor(TwoTensor(w, w.clone()), w.clone()), requires_grad=False)
    with pytest.raises(TypeError, match=r"0\.weight.*nested tensor subclass TwoTensor"):
        subclasses.unwrap(model)
    assert not parametrize.is_parametrized(model[0])  # the failed unwrap worked on a copy


def test_a_model_without_subclasses_is_returned_as_is():
    model = _mlp()
    assert subclasses.unwrap(model) is model
