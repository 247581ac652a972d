"""Rows of the ATen translation table (aten_cases.CASES) for aten::_int_mm: the two dtype pairs torch accepts and
torchao's u8s8 pattern (issue 44).

Imported at the end of aten_cases.py (after every other table: rows are seeded by their index, so a row
inserted before another table would change that table's inputs).
"""
import torch
from aten_cases import _batch, aten, case, ri

# --- _int_mm: the two dtype pairs torch accepts (int8 x int8, uint8 x int8; a uint8 mat2 is refused), and
# torchao's u8s8 pattern (docs/cpu-branches.md): x + 128 as uint8, _int_mm, minus 128 * colsum(W) in place.
# mat2 stays in [-64, 63]: onnxruntime's AVX2 uint8 x int8 kernel adds byte products in pairs in a saturating
# int16 (255 * 64 * 2 fits), so the ORT leg holds on every host; refrt's full-range rows are in
# tests/refrt/cases/quantize.py (MatMulInteger, numpy oracle).
_s8 = lambda *shape, lo=-128, hi=128: ri(hi, *shape, lo=lo).to(torch.int8)  # noqa: E731
_u8s8 = lambda a, w: aten._int_mm.default((a.to(torch.int32) + 128).to(torch.uint8), w)  # noqa: E731
case("aten::_int_mm.default", lambda a, w: aten._int_mm.default(a, w), lambda: (_s8(17, 40), _s8(40, 9, lo=-64, hi=64)),
     dynamic=_batch, onnx_ops=("MatMulInteger",), tag="int8_int8")
case("aten::_int_mm.default", lambda a, w: aten._int_mm.default(a, w),
     lambda: (ri(256, 17, 40).to(torch.uint8), _s8(40, 9, lo=-64, hi=64)), dynamic=_batch, onnx_ops=("MatMulInteger",),
     tag="uint8_int8")
case("aten::_int_mm.default", lambda a, w: _u8s8(a, w).sub_(w.sum(0, keepdim=True, dtype=torch.int32) * 128),
     lambda: (_s8(5, 64), _s8(64, 24, lo=-64, hi=64)), dynamic=_batch, onnx_ops=("MatMulInteger",),
     tag="torchao_u8s8_pattern")
case("aten::_int_mm.default", lambda a, w: _u8s8(a, w).sub_(w.sum(0, keepdim=True, dtype=torch.int32) * 128),
     lambda: (_s8(5, 64), _s8(64, 24, lo=-64, hi=64)), dynamic=_batch, decompose=True, onnx_ops=("MatMulInteger",),
     tag="torchao_u8s8_pattern-decomposed")
