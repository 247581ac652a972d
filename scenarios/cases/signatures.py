"""User-level signatures: scalars, lists, dicts, None, kwargs, nested outputs."""
import torch
from torch import nn
from torch.export import Dim

from ..registry import Case, register

B = Dim("batch", min=2, max=64)


class IntArg(nn.Module):
    def forward(self, x, k: int):
        return x * k


class FloatArg(nn.Module):
    def forward(self, x, alpha: float):
        return x * alpha + 1


class BoolArg(nn.Module):
    def forward(self, x, flag: bool):
        return x.relu() if flag else x.abs()


class ListFixed(nn.Module):
    def forward(self, xs: list):
        return xs[0] + xs[1] * xs[2]


class ListWithNone(nn.Module):
    def forward(self, xs: list):
        return xs[0] * 2 if xs[1] is None else xs[0] + xs[1]


class DictInput(nn.Module):
    def forward(self, d: dict):
        return d["a"] @ d["b"]


class NestedOutputs(nn.Module):
    def forward(self, x):
        return {"sum": x.sum(1), "pair": (x.max(1).values, [x.min(1).values, x * 2])}


class Kwargs(nn.Module):
    def forward(self, x, *, scale, bias=None):
        y = x * scale
        return y if bias is None else y + bias


class ShapeAsIndex(nn.Module):
    def forward(self, x):
        return x[:, x.shape[1] - 1]


register(Case(name="sig_int_arg", make_module=IntArg, input_sets=lambda: [(torch.randn(b, 3), 3) for b in (2, 4)],
              dynamic_shapes=({0: B}, None), description="a Python int argument (specialised)"))
register(Case(name="sig_float_arg", make_module=FloatArg,
              input_sets=lambda: [(torch.randn(b, 3), 0.5) for b in (2, 4)], dynamic_shapes=({0: B}, None),
              description="a Python float argument (specialised)"))
register(Case(name="sig_bool_arg", make_module=BoolArg,
              input_sets=lambda: [(torch.randn(b, 3), True) for b in (2, 4)], dynamic_shapes=({0: B}, None),
              description="a Python bool choosing a branch at capture"))
register(Case(name="sig_list_fixed", make_module=ListFixed,
              input_sets=lambda: [([torch.randn(b, 3), torch.randn(b, 3), torch.randn(b, 3)],) for b in (2, 4)],
              dynamic_shapes=([{0: B}, {0: B}, {0: B}],), description="a list of three tensors"))
register(Case(name="sig_list_with_none", make_module=ListWithNone,
              input_sets=lambda: [([torch.randn(b, 3), None],) for b in (2, 4)],
              dynamic_shapes=([{0: B}, None],), description="a list holding None"))
register(Case(name="sig_dict_input", make_module=DictInput,
              input_sets=lambda: [({"a": torch.randn(b, 3), "b": torch.randn(3, 5)},) for b in (2, 4)],
              dynamic_shapes=({"a": {0: B}, "b": None},), description="a dict of tensors"))
register(Case(name="sig_nested_outputs", make_module=NestedOutputs,
              input_sets=lambda: [(torch.randn(b, 5),) for b in (2, 4)], dynamic_shapes=({0: B},),
              description="dict/tuple/list nested outputs"))
register(Case(name="sig_kwargs", make_module=Kwargs, input_sets=lambda: [(torch.randn(b, 3),) for b in (2, 4)],
              kwargs_sets=lambda: [{"scale": torch.randn(3), "bias": torch.randn(3)} for _ in range(2)],
              dynamic_shapes={"x": {0: B}, "scale": None, "bias": None}, description="keyword-only tensor arguments"))
register(
    Case(
        name="sig_shape_as_index",
        make_module=ShapeAsIndex,
        input_sets=lambda: [(torch.randn(2, s),) for s in (3, 6)],
        dynamic_shapes=({1: Dim("width", min=2, max=64)},),
        description="a symbolic size used as an index",
    )
)
