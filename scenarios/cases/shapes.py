"""Dynamic shapes: crops by other tensors' shapes, derived dims, tensors built from shapes."""
import torch
from torch import nn
from torch.export import Dim

from ..registry import Case, register

B = Dim("batch", min=2, max=64)
S = Dim("seq", min=2, max=64)


class CropByShape(nn.Module):
    def forward(self, x, ref):
        return x[:, : ref.shape[1]]


class CropByValue(nn.Module):
    def forward(self, x, n):
        k = n.item()
        torch._check(k >= 1)
        torch._check(k <= x.shape[0])
        return x[:k]


class DerivedDim(nn.Module):
    def forward(self, x, y):
        return torch.cat([x, x], dim=0) + y


class FromShape(nn.Module):
    def forward(self, x):
        pos = torch.arange(x.shape[1], dtype=torch.float32)
        return x + pos + torch.zeros(x.shape[0], 1)


class ReshapeFlatten(nn.Module):
    def forward(self, x):
        return x.reshape(x.shape[0], -1).softmax(-1)


class PastPlusSeq(nn.Module):
    def forward(self, past, new):
        return torch.cat([past, new], dim=1).mean(1)


register(Case(name="shape_crop_by_shape", make_module=CropByShape,
              input_sets=lambda: [(torch.randn(3, 10), torch.randn(3, s)) for s in (4, 7)],
              # max=9: at width 10 the slice is the whole of x, and non-strict export guards width != 10.
              dynamic_shapes=(None, {1: Dim("width", min=2, max=9)}), description="crop x to another input's width"))
register(Case(name="shape_crop_by_value", make_module=CropByValue,
              input_sets=lambda: [(torch.randn(8, 3), torch.tensor(k)) for k in (3, 5)],
              description="crop by a tensor's value (unbacked symint)"))
register(Case(name="shape_derived_dim", make_module=DerivedDim,
              input_sets=lambda: [(torch.randn(b, 3), torch.randn(2 * b, 3)) for b in (2, 5)],
              dynamic_shapes=({0: B}, {0: 2 * B}), description="a derived dim 2*batch"))
register(Case(name="shape_tensors_from_shape", make_module=FromShape,
              input_sets=lambda: [(torch.randn(b, s),) for b, s in ((2, 3), (4, 6))],
              dynamic_shapes=({0: B, 1: S},), description="arange/zeros sized by input dims"))
register(Case(name="shape_reshape_flatten", make_module=ReshapeFlatten,
              input_sets=lambda: [(torch.randn(b, 3, 4),) for b in (2, 5)], dynamic_shapes=({0: B},),
              description="reshape with -1"))
register(Case(name="shape_past_plus_seq", make_module=PastPlusSeq,
              input_sets=lambda: [(torch.randn(2, p, 4), torch.randn(2, s, 4)) for p, s in ((3, 2), (5, 4))],
              dynamic_shapes=({1: Dim("past", min=2, max=64)}, {1: S}), description="seq + past concatenation"))
class Scale(nn.Module):
    def forward(self, x):
        return x * 2 + x.sum(0, keepdim=True)


register(
    Case(
        name="shape_size_one_at_capture",
        make_module=Scale,
        input_sets=lambda: [(torch.randn(b, 3, 4),) for b in (1, 3)],
        dynamic_shapes=({0: Dim("batch1", min=1, max=64)},),
        description="a dynamic dim of size 1 at capture, validated at size 3",
    )
)
