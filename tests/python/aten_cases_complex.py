"""Rows of the ATen translation table (aten_cases.CASES) for complex values, torch.fft and torch.stft.

Graph inputs and outputs are real (the exporter refuses complex ones): complex inputs come in through
view_as_complex, complex results leave through view_as_real, abs, angle, real or imag.

Imported at the end of aten_cases.py.
"""
import torch
from aten_cases import case, r

fft = torch.fft
vr, vc = torch.view_as_real, torch.view_as_complex


def _hann(n):
    return torch.hann_window(n)


# --- torch.fft.* as non-strict programs hold them (forward: no scaling; ortho 1/sqrt(n); forward-norm 1/n) ---
case("aten::fft_rfft.default", lambda x: vr(fft.rfft(x)), lambda: (r(3, 16),))
case("aten::fft_rfft.default", lambda x: vr(fft.rfft(x, dim=0, norm="ortho")), lambda: (r(15, 3),), tag="odd_dim0_ortho")
case("aten::fft_rfft.default", lambda x: vr(fft.rfft(x, n=10, norm="forward")), lambda: (r(2, 16),), tag="n_cut_forward")
case("aten::fft_rfft.default", lambda x: vr(fft.rfft(x, n=20)), lambda: (r(2, 13),), tag="n_padded")
case("aten::fft_rfft.default", lambda x: vr(fft.rfft(x, norm="ortho")), lambda: (r(2, 12),), tag="dynamic",
     dynamic={"x": {0: torch.export.Dim("b", min=1, max=64)}})
# onnxruntime's DFT works in float32: its absolute error grows as eps * sum|x| (1.6e-5 on a 48-sample
# rfft2, 2.1e-5 on an unscaled 20-sample irfft), past the default atol of 1e-5 on near-zero bins; refrt
# (double inside) meets 1e-4 / 1e-5. These rows take atol 3e-5 for that reason.
_ORT_FFT_TOL = 3e-4
case("aten::fft_rfft2.default", lambda x: vr(fft.rfft2(x)), lambda: (r(2, 6, 8),), tol=_ORT_FFT_TOL)
case("aten::fft_rfftn.default", lambda x: fft.rfftn(x, dim=(0, 2), norm="ortho").abs(), lambda: (r(5, 2, 6),))
case("aten::fft_fft.default", lambda x: vr(fft.fft(x)), lambda: (r(3, 10),), tag="real")
case("aten::fft_fft.default", lambda x: vr(fft.fft(vc(x), n=7, dim=0)), lambda: (r(5, 3, 2),), tag="complex_n")
case("aten::fft_ifft.default", lambda x: vr(fft.ifft(vc(x))), lambda: (r(3, 9, 2),))
case("aten::fft_ifft.default", lambda x: vr(fft.ifft(vc(x), norm="ortho")), lambda: (r(3, 8, 2),), tag="ortho")
case("aten::fft_fft2.default", lambda x: vr(fft.fft2(vc(x), norm="forward")), lambda: (r(2, 4, 6, 2),))
case("aten::fft_fftn.default", lambda x: vr(fft.fftn(x, s=(4, 5))), lambda: (r(2, 3, 6),))
case("aten::fft_ifft2.default", lambda x: vr(fft.ifft2(vc(x))), lambda: (r(4, 6, 2),))
case("aten::fft_ifftn.default", lambda x: vr(fft.ifftn(vc(x), dim=(0,), norm="forward")), lambda: (r(5, 3, 2),))
# irfft: the imaginary parts of bin 0 and bin n/2 are ignored (random here, so the row tests that too).
case("aten::fft_irfft.default", lambda x: fft.irfft(vc(x)), lambda: (r(3, 9, 2),))
case("aten::fft_irfft.default", lambda x: fft.irfft(vc(x), n=15, norm="ortho"), lambda: (r(3, 8, 2),), tag="odd_n")
case("aten::fft_irfft.default", lambda x: fft.irfft(vc(x), n=20, dim=0, norm="forward"), lambda: (r(6, 2, 2),),
     tag="n_padded", tol=_ORT_FFT_TOL)
case("aten::fft_irfft2.default", lambda x: fft.irfft2(vc(x)), lambda: (r(4, 5, 2),))
case("aten::fft_irfftn.default", lambda x: fft.irfftn(vc(x), s=(3, 7)), lambda: (r(2, 4, 4, 2),))

# --- the primitives run_decompositions leaves ---
case("aten::_fft_r2c.default", lambda x: vr(fft.rfft(x, norm="ortho")), lambda: (r(3, 16),), decompose=True)
case("aten::_fft_r2c.default", lambda x: vr(fft.fft(x, norm="forward")), lambda: (r(3, 11),), decompose=True,
     tag="twosided_forward")
case("aten::_fft_r2c.default", lambda x: vr(fft.rfft2(x)), lambda: (r(2, 5, 8),), decompose=True, tag="2d")
case("aten::_fft_c2c.default", lambda x: vr(fft.fft(vc(x))), lambda: (r(3, 10, 2),), decompose=True)
case("aten::_fft_c2c.default", lambda x: vr(fft.ifft(vc(x), dim=0)), lambda: (r(7, 3, 2),), decompose=True,
     tag="inverse")
case("aten::_fft_c2r.default", lambda x: fft.irfft(vc(x), n=13), lambda: (r(3, 7, 2),), decompose=True)
case("aten::_fft_c2r.default", lambda x: fft.irfft2(vc(x), norm="ortho"), lambda: (r(4, 5, 2),), decompose=True,
     tag="2d")
case("aten::constant_pad_nd.default", lambda x: fft.irfft(vc(x), n=20), lambda: (r(3, 6, 2),), decompose=True,
     tag="complex")

# --- stft (center=True pads by reflection before the op) ---
case("aten::stft.default", lambda x, w: torch.stft(x, 16, hop_length=4, window=w, return_complex=True).abs().pow(2),
     lambda: (r(2, 100), _hann(16)))
case("aten::stft.default", lambda x, w: vr(torch.stft(x, 20, hop_length=5, win_length=12, window=w, normalized=True,
                                                    return_complex=True)),
     lambda: (r(90), _hann(12)), tag="1d_short_window_normalized")
case("aten::stft.default", lambda x: vr(torch.stft(x, 8, hop_length=3, center=False, onesided=False,
                                                 return_complex=True)),
     lambda: (r(2, 40),), tag="no_window_twosided")
# A decomposed stft frames the signal with unfold, along a dim that is symbolic when the length is dynamic.
case("aten::unfold.default", lambda x: x.unfold(-1, 5, 3), lambda: (r(2, 17),), tag="symbolic_dim",
     dynamic={"x": {1: torch.export.Dim("t", min=8, max=64)}})
case("aten::_fft_r2c.default", lambda x, w: torch.stft(x, 16, hop_length=4, window=w, return_complex=True).abs(),
     lambda: (r(2, 64), _hann(16)), decompose=True, tag="stft")

# --- complex values ---
case("aten::view_as_real.default", lambda x: vr(vc(x)) * 2, lambda: (r(3, 4, 2),))
case("aten::view_as_complex.default", lambda x: vr(vc(x).transpose(0, 1)), lambda: (r(3, 4, 2),))
case("aten::transpose.int", lambda x: vr(vc(x).transpose(0, 1)), lambda: (r(3, 4, 2),), tag="complex")
case("aten::permute.default", lambda x: vr(vc(x).permute(2, 0, 1)), lambda: (r(2, 3, 4, 2),), tag="complex")
case("aten::view.default", lambda x: vr(vc(x).view(6, 2)), lambda: (r(3, 4, 2),), tag="complex")
case("aten::real.default", lambda x: fft.rfft(x).real, lambda: (r(3, 8),))
case("aten::imag.default", lambda x: fft.rfft(x).imag, lambda: (r(3, 8),))
case("aten::abs.default", lambda x: vc(x).abs(), lambda: (r(3, 5, 2),), tag="complex")
case("aten::angle.default", lambda x: vc(x).angle(), lambda: (r(3, 5, 2),), tag="complex")
case("aten::polar.default", lambda a, t: vr(torch.polar(a, t)), lambda: (r(3, 4, lo=0.1, hi=2), r(3, 4, lo=-3, hi=3)))
case("aten::complex.default", lambda a, b: vr(torch.complex(a, b) * torch.complex(b, a)), lambda: (r(3, 4), r(4)))
case("aten::mul.Tensor", lambda a, b: vr(vc(a) * vc(b)), lambda: (r(3, 4, 2), r(4, 2)), tag="complex")
case("aten::mul.Tensor", lambda a, b: vr(vc(a) * b * 0.5), lambda: (r(3, 4, 2), r(3, 1)), tag="complex_by_real")
case("aten::add.Tensor", lambda a, b: vr(vc(a) + b), lambda: (r(3, 4, 2), r(4)), tag="complex_plus_real")
case("aten::sub.Tensor", lambda a, b: vr(torch.sub(vc(a), vc(b), alpha=3)), lambda: (r(3, 4, 2), r(3, 4, 2)),
     tag="complex")
case("aten::conj_physical.default", lambda x: vr(torch.conj_physical(vc(x))), lambda: (r(3, 4, 2),))
case("aten::select.int", lambda x: vr(fft.fft(x)[:, 1:5][1]), lambda: (r(3, 8),), tag="complex")
case("aten::cat.default", lambda x: vr(torch.cat([fft.rfft(x), fft.fft(x)], dim=-1)), lambda: (r(3, 8),),
     tag="complex")
case("aten::_conj.default", lambda x: vr(vc(x).conj() * vc(x)), lambda: (r(3, 4, 2),))
case("aten::sum.dim_IntList", lambda x: vr(vc(x).sum((0, -1))), lambda: (r(3, 4, 5, 2),), tag="complex")
case("aten::mean.dim", lambda x: vr(vc(x).mean(-1, keepdim=True)), lambda: (r(3, 4, 2),), tag="complex")
# Rotary embeddings as LLaMA's reference code writes them: pairs as complex numbers times polar(1, angle).
case("aten::polar.default", lambda x, t: vr(vc(x.reshape(2, 3, -1, 2)) * torch.polar(torch.ones_like(t), t)).flatten(2),
     lambda: (r(2, 3, 8), r(3, 4, lo=-3, hi=3)), tag="rope")
case("aten::to.dtype", lambda x, y: vr(x.to(torch.complex64) * vc(y)), lambda: (r(3, 4), r(3, 4, 2)), tag="to_complex")
case("aten::_to_copy.default", lambda x, y: vr(x.to(torch.complex128) + vc(y).to(torch.complex128)),
     lambda: (r(3, 4), r(3, 4, 2)), decompose=True, tag="to_complex")
# Opset 20: DFT takes its axis as an input.
case("aten::fft_rfft.default", lambda x: vr(fft.rfft(x, dim=0, norm="ortho")), lambda: (r(9, 3),), tag="opset20",
     opset=20, onnx_ops=("DFT",))
case("aten::fft_irfft2.default", lambda x: fft.irfft2(vc(x), s=(4, 7)), lambda: (r(3, 5, 2),), tag="opset20",
     opset=20, onnx_ops=("DFT",))
