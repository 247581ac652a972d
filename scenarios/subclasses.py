"""Tensor-subclass parameters (torchao's quantize_: Int8Tensor, IntxUnpackedToInt8Tensor, ...) made exportable
without pickle.

torch.export keeps a subclass parameter as one opaque object, which torch.export.save can only pickle, and
Parity never unpickles. A subclass that implements `__tensor_flatten__` / `__tensor_unflatten__` is a set of
plain tensors plus constant metadata, so each such parameter is replaced by a parametrization: the module
stores the plain tensors (`<name>.original0`, ...) and rebuilds the subclass in forward. Tracing then runs
the subclass's own dispatch (torchao's dequantize_affine, _int_mm, ...) and the program records those ops
on plain tensors, which the exporter translates.
"""
import copy

import torch
from torch import nn
from torch.nn.utils import parametrize


def _is_subclass(t) -> bool:
    return isinstance(t, torch.Tensor) and type(t) not in (torch.Tensor, nn.Parameter) \
        and hasattr(t, "__tensor_flatten__")


def _plain(t: torch.Tensor, where: str) -> torch.Tensor:
    if _is_subclass(t):
        raise TypeError(f"{where}: nested tensor subclass {type(t).__name__} inside a subclass parameter is not "
                        "supported (flatten it to plain tensors before capture)")
    return t


class _Rebuild(nn.Module):
    """Parametrization: the plain tensors of one subclass instance -> the subclass instance."""

    def __init__(self, value: torch.Tensor, where: str):
        super().__init__()
        names, meta = value.__tensor_flatten__()
        self.cls, self.names, self.meta = type(value), list(names), meta
        self.size, self.stride = value.size(), value.stride()
        self.where = where

    def forward(self, *tensors):
        return self.cls.__tensor_unflatten__(dict(zip(self.names, tensors)), self.meta, self.size, self.stride)

    def right_inverse(self, value):
        return [_plain(getattr(value, n), f"{self.where}.{n}") for n in self.names]


def subclass_parameters(module: nn.Module) -> list[str]:
    """Qualified names of the parameters and buffers that are tensor subclasses."""
    named = list(module.named_parameters(remove_duplicate=False)) + list(module.named_buffers(remove_duplicate=False))
    return [name for name, t in named if _is_subclass(t)]


def unwrap(module: nn.Module) -> nn.Module:
    """`module` itself when no parameter is a subclass; otherwise a copy whose subclass parameters are
    parametrizations over plain tensors (the caller's model is left as it was)."""
    if not isinstance(module, nn.Module) or not subclass_parameters(module):
        return module
    module = copy.deepcopy(module)
    for qualified in subclass_parameters(module):
        owner_name, _, attr = qualified.rpartition(".")
        owner = module.get_submodule(owner_name)
        value = getattr(owner, attr)
        parametrize.register_parametrization(owner, attr, _Rebuild(value, qualified), unsafe=True)
    return module
