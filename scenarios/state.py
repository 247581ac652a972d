"""Eager's final state: the oracle for the exported program's mutation outputs.

A program that writes its buffers, parameters or inputs (a counter, a KV cache, batch norm's running
statistics, `x.add_(y)` on an input) leaves state behind, and Parity's ONNX returns that state as extra
outputs (`mutated_buffer.<fqn>`, `mutated_parameter.<fqn>`, `mutated_input.<name>`). Capture records what
eager left in each tensor the call wrote, as `test_data_set_<k>/state_<j>.pb` (the TensorProto's name is the
output name), so verify judges those outputs against eager, not only against libtorch running the same
program. Written means: the module attribute now holds another tensor (`self.buf = ...`), the tensor's
version counter moved (an in-place write bumps it, even one that stores the same values), or, for buffers
and inputs, its values changed (kernels that write a mutable argument, such as batch norm's running
statistics, do not always bump the counter). Buffers and inputs are copied before the call for that last
check; parameters (the bulk of a model's bytes) are judged by identity and version only. A tensor eager did
not write keeps its initial value, which verify takes from the program's inputs and stored weights.
"""
from __future__ import annotations

import torch


def _tracked(module: torch.nn.Module, program_inputs) -> dict[str, tuple[torch.Tensor, bool]]:
    """Every tensor the call may write, by the output name Parity gives its new value, and whether its values
    are copied to be compared."""
    tensors = {f"mutated_buffer.{name}": (t, True) for name, t in module.named_buffers(remove_duplicate=False)}
    tensors.update({f"mutated_parameter.{name}": (t, False)
                    for name, t in module.named_parameters(remove_duplicate=False)})
    tensors.update({f"mutated_input.{name}": (leaf, True) for leaf, name in program_inputs
                    if isinstance(leaf, torch.Tensor)})
    return tensors


def before_call(module: torch.nn.Module, program_inputs) -> dict:
    """Every tracked tensor (a reference), its version and, for buffers and inputs, a copy of its values."""
    return {name: (t, t._version, t.detach().clone() if copy else None)
            for name, (t, copy) in _tracked(module, program_inputs).items()}


def written(before: dict, module: torch.nn.Module, program_inputs) -> dict[str, torch.Tensor]:
    """The tracked tensors the call wrote, with the values eager left in them."""
    def unchanged(name, t):
        if name not in before:
            return False
        old, version, values = before[name]
        same_values = values is None or (values.shape == t.shape and values.dtype == t.dtype and
                                         torch.equal(values, t.detach()))
        return old is t and version == t._version and same_values
    return {name: t for name, (t, _) in _tracked(module, program_inputs).items() if not unchanged(name, t)}
