"""Eager's final state: the oracle for the exported program's mutation outputs.

A program that writes its buffers, parameters or inputs (a counter, a KV cache, batch norm's running
statistics, `x.add_(y)` on an input) leaves state behind, and Parity's ONNX returns that state as extra
outputs (`mutated_buffer.<fqn>`, `mutated_parameter.<fqn>`, `mutated_input.<name>`). Capture records what
eager left in each tensor the call wrote, as `test_data_set_<k>/state_<j>.pb` (the TensorProto's name is the
output name), so verify judges those outputs against eager, not only against libtorch running the same
program. Written means: the tensor's version counter moved (every in-place write bumps it, even one that
stores the same values) or the module attribute now holds another tensor (`self.buf = ...`). A tensor eager
did not write keeps its initial value, which verify takes from the program's inputs and stored weights.
"""
from __future__ import annotations

import torch


def _tracked(module: torch.nn.Module, program_inputs) -> dict[str, torch.Tensor]:
    """Every tensor the call may write, by the output name Parity gives its new value."""
    tensors = {f"mutated_buffer.{name}": t for name, t in module.named_buffers(remove_duplicate=False)}
    tensors.update({f"mutated_parameter.{name}": t for name, t in module.named_parameters(remove_duplicate=False)})
    tensors.update({f"mutated_input.{name}": leaf for leaf, name in program_inputs if isinstance(leaf, torch.Tensor)})
    return tensors


def before_call(module: torch.nn.Module, program_inputs) -> dict[str, tuple[torch.Tensor, int]]:
    """Every tracked tensor and its version, before eager runs (references, not copies: models can be large)."""
    return {name: (t, t._version) for name, t in _tracked(module, program_inputs).items()}


def written(before: dict[str, tuple[torch.Tensor, int]], module: torch.nn.Module,
            program_inputs) -> dict[str, torch.Tensor]:
    """The tracked tensors the call wrote, with the values eager left in them."""
    def unchanged(name, t):
        return name in before and before[name][0] is t and before[name][1] == t._version
    return {name: t for name, t in _tracked(module, program_inputs).items() if not unchanged(name, t)}
