"""Rows of the ATen translation table (aten_cases.CASES) for convolutions of an unbatched input (C, spatial...),
which conv1d/2d/3d and conv_transposeNd accept and ONNX's Conv does not (the ATen sweep found them refused
by refrt and ONNX Runtime: the exported Conv's input was one rank short).

Imported at the end of aten_cases.py (after every other table: rows are seeded by their index).
"""
from aten_cases import aten, case, r

case("aten::conv1d.default", lambda x, w, b: aten.conv1d.default(x, w, b, [1], [1]),
     lambda: (r(4, 9), r(6, 4, 3), r(6)), onnx_ops=("Conv",), tag="unbatched")
case("aten::conv2d.default", lambda x, w: aten.conv2d.default(x, w, None, [2, 1], [1, 0], [1, 1], 2),
     lambda: (r(4, 7, 6), r(6, 2, 3, 3)), onnx_ops=("Conv",), tag="unbatched-groups")
case("aten::conv3d.default", lambda x, w: aten.conv3d.default(x, w),
     lambda: (r(2, 4, 5, 4), r(3, 2, 2, 2, 2)), onnx_ops=("Conv",), tag="unbatched")
case("aten::conv_transpose1d.default", lambda x, w, b: aten.conv_transpose1d.default(x, w, b, [2], [1], [1]),
     lambda: (r(4, 5), r(4, 3, 3), r(3)), onnx_ops=("ConvTranspose",), tag="unbatched")
case("aten::conv_transpose2d.input", lambda x, w: aten.conv_transpose2d.input(x, w),
     lambda: (r(3, 4, 5), r(3, 2, 3, 3)), onnx_ops=("ConvTranspose",), tag="unbatched")
