"""Rows of the ATen translation table (aten_cases.CASES) for what the ATen sweep found refused or wrong
(issue 45 item 7): splits of a dim of symbolic length, adaptive average pooling over symbolic or unbatched
spatial dims (and an output size read from the input's own shape), antialiased upsampling of symbolic
sizes, circular padding at opset 18, linear upsampling by a scale factor with align_corners (refrt gave
0.495 where eager gives 4.163) and as_strided_scatter. Each runs in ONNX Runtime and refrt against
eager; a dynamic row on two more input sizes.

Imported at the end of aten_cases.py (after every other table: rows are seeded by their index).
"""
import torch
from aten_cases import F, aten, case, r

# 3 pieces of 4 (the last 2 to 4) for every length in range: the program's output count is static, and
# torch guards against a last piece of 1.
_n0 = {"x": {0: torch.export.Dim("n0", min=10, max=12)}}
_n1 = {"x": {1: torch.export.Dim("n1", min=10, max=12)}}
_h = {"x": {2: torch.export.Dim("h", min=4, max=64)}}
_len = {"x": {2: torch.export.Dim("length", min=3, max=64)}}

# --- pieces of symbolic size ---
case("aten::split.Tensor", lambda x: aten.split.Tensor(x, 4), lambda: (r(11, 4),), dynamic=_n0, tag="symbolic")
case("aten::chunk.default", lambda x: aten.chunk.default(x, 3, 1), lambda: (r(2, 11),), dynamic=_n1, tag="symbolic")
case("aten::tensor_split.indices", lambda x: aten.tensor_split.indices(x, [2, 5]), lambda: (r(11, 2),), dynamic=_n0,
     tag="symbolic")
case("aten::vsplit.array", lambda x: aten.vsplit.array(x, [1, -2]), lambda: (r(11, 3),), dynamic=_n0,
     tag="symbolic")
case("aten::hsplit.int", lambda x: aten.hsplit.int(x, 2), lambda: (r(3, 8),),
     dynamic={"x": {1: 2 * torch.export.Dim("half", min=2, max=32)}}, tag="symbolic")

# --- adaptive average pooling ---
case("aten::adaptive_avg_pool2d.default", lambda x: aten.adaptive_avg_pool2d.default(x, [3, 4]),
     lambda: (r(2, 3, 7, 6),), dynamic=_h, tag="symbolic_h")
case("aten::adaptive_avg_pool1d.default", lambda x: aten.adaptive_avg_pool1d.default(x, [4]),
     lambda: (r(2, 3, 9),), dynamic=_len, tag="symbolic")
case("aten::adaptive_avg_pool2d.default", lambda x: aten.adaptive_avg_pool2d.default(x, [x.shape[2], 3]),
     lambda: (r(1, 2, 5, 7),), dynamic=_h, tag="output_size_from_shape")
case("aten::adaptive_avg_pool3d.default", lambda x: aten.adaptive_avg_pool3d.default(x, [2, 3, 4]),
     lambda: (r(3, 5, 7, 6),), tag="unbatched")
case("aten::_adaptive_avg_pool2d.default", lambda x: aten._adaptive_avg_pool2d.default(x, [2, 3]),
     lambda: (r(3, 5, 7),), tag="unbatched")

# --- resampling and padding ---
case("aten::_upsample_bilinear2d_aa.vec", lambda x: F.interpolate(x, size=(5, 3), mode="bilinear", antialias=True),
     lambda: (r(1, 2, 9, 8),), dynamic=_h, tag="symbolic")
case("aten::_upsample_bicubic2d_aa.vec",
     lambda x: F.interpolate(x, scale_factor=(0.6, 1.5), mode="bicubic", antialias=True),
     lambda: (r(1, 2, 9, 8),), dynamic=_h, tag="symbolic_scale")
case("aten::upsample_linear1d.vec", lambda x: F.interpolate(x, scale_factor=1.7, mode="linear", align_corners=True),
     lambda: (r(2, 3, 4),), tag="align_corners_scale")
case("aten::upsample_linear1d.vec", lambda x: F.interpolate(x, scale_factor=1.7, mode="linear", align_corners=True),
     lambda: (r(2, 3, 4),), dynamic=_len, tag="align_corners_scale_symbolic")
case("aten::pad.default", lambda x: F.pad(x, (1, 2, 2, 0), mode="circular"), lambda: (r(1, 2, 5, 4),),
     tag="circular")

# --- strided writes ---
case("aten::as_strided_scatter.default", lambda x, s: aten.as_strided_scatter.default(x, s, [2, 2], [1, 2], 1),
     lambda: (r(3, 3), r(2, 2)))

# --- a shape-changing in-place write: the value is typed by resize_'s own shape, not clone's [5, 4] ---
case("aten::resize_.default", lambda x: x.clone().resize_(4, 5) * 2, lambda: (r(5, 4),), tag="shrink_reshape")
