"""Rows of the ATen translation table (aten_cases.CASES) for torch.fft over symbolic sizes (the ATen sweep's FFT
rows), torch.fft of a real half spectrum, the decomposed programs' _conj_physical and complex constant_pad_nd,
and complex Python scalars (docs/complex.md).

Imported last in aten_cases.py: rows are seeded by their index, so a table appended elsewhere would re-seed
the tables after it.
"""
import torch
from aten_cases import case, r

fft = torch.fft
vr, vc = torch.view_as_real, torch.view_as_complex

# --- symbolic signal sizes (the ATen sweep's FFT rows: every dim dynamic) ---
_n = {"x": {1: torch.export.Dim("n", min=2, max=32)}}
# (torch.export guards each size where the program branches on it: the ranges are the ones it accepts.)
case("aten::fft_fft2.default", lambda x: vr(fft.fft2(x, s=(6, 5))), lambda: (r(4, 7),), tag="s_over_symbolic_dim",
     dynamic={"x": {1: torch.export.Dim("n", min=6, max=32)}})
case("aten::fft_rfftn.default", lambda x: vr(fft.rfftn(x, s=(3, 9), norm="ortho")), lambda: (r(4, 7),),
     tag="s_over_symbolic_dim", dynamic={"x": {1: torch.export.Dim("n", min=2, max=8)}})
case("aten::fft_irfft.default", lambda x: fft.irfft(vc(x)), lambda: (r(3, 6, 2),), tag="symbolic_bins", dynamic=_n)
case("aten::fft_irfftn.default", lambda x: fft.irfftn(vc(x), norm="forward"), lambda: (r(3, 6, 2),),
     tag="symbolic_bins", dynamic={"x": {1: torch.export.Dim("n", min=4, max=32)}})
case("aten::fft_hfft.default", lambda x: fft.hfft(vc(x), norm="ortho"), lambda: (r(3, 6, 2),), tag="symbolic_bins",
     dynamic=_n)
case("aten::_fft_c2r.default", lambda x: fft.irfft(vc(x)), lambda: (r(3, 6, 2),), decompose=True,
     tag="symbolic_last_dim_size", dynamic=_n)
case("aten::constant_pad_nd.default", lambda x: vr(fft.fft2(x, s=(6, 16))), lambda: (r(4, 7),), decompose=True,
     tag="complex_symbolic_pad", dynamic={"x": {1: torch.export.Dim("n", min=2, max=15)}})
case("aten::_conj_physical.default", lambda x: vr(fft.ihfft2(x)), lambda: (r(4, 6),), decompose=True)
# A real half spectrum (imaginary parts 0).
case("aten::fft_irfft2.default", lambda x: fft.irfft2(x), lambda: (r(4, 5),), tag="real_half_spectrum")
case("aten::fft_irfftn.default", lambda x: fft.irfftn(x, s=(3, 6)), lambda: (r(4, 5),), tag="real_half_spectrum")
# Complex Python scalars.
case("aten::mul.Tensor", lambda x: vr(vc(x) * 2j + (1 - 0.5j)), lambda: (r(3, 4, 2),), tag="complex_scalar")
