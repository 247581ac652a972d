"""Complex tensors at the program's edges (issue 45 item 6; docs/complex.md): complex64 / complex128 graph
inputs, outputs, parameters and buffers, carried by the exported ONNX as (real, imaginary) pairs in a trailing
dim of 2, and by the case folders the same way (case.json lists which inputs and outputs are complex).

- complex mul of a complex input by a complex buffer and a complex parameter, complex output;
- magnitude, phase, real and imaginary parts of a complex input (real outputs);
- complex128 end to end (conj, add, scale by a real tensor);
- torch.fft straight to a complex output (rfft of a real signal, fft of a complex one, over a dynamic length);
- view_as_real / view_as_complex round trips in both directions.
"""
import torch
from torch import nn
from torch.export import Dim

from ..registry import Case, register

_B = Dim("batch", min=1, max=16)
_N = Dim("length", min=2, max=64)
_LONG = Dim("length", min=13, max=64)


def _c(*shape, dtype=torch.complex64):
    return torch.randn(*shape, dtype=dtype)


class ComplexGain(nn.Module):
    """z * buffer * parameter + z: a complex input, a complex buffer, a complex parameter, a complex output."""

    def __init__(self, n=8):
        super().__init__()
        self.register_buffer("phase", torch.polar(torch.ones(n), torch.linspace(0, 3, n)))
        self.gain = nn.Parameter(torch.randn(n, dtype=torch.complex64))

    def forward(self, z):  # [batch, n] complex64
        return z * self.phase * self.gain + z


class ComplexParts(nn.Module):
    """Real outputs of a complex input: |z|, angle(z), Re, Im (and Re(z * conj(z)) = |z|^2)."""

    def forward(self, z):
        return z.abs(), z.angle(), z.real * 2, z.imag - 1, (z * z.conj()).real


class Complex128(nn.Module):
    """complex128 in and out: conj(a) + b, scaled by a real float64 tensor."""

    def forward(self, a, b, scale):  # a, b [batch, n] complex128, scale [n] float64
        return (a.conj() + b) * scale


class FftToComplex(nn.Module):
    """torch.fft to complex outputs: the half spectrum of a real signal, the spectrum of a complex one."""

    def forward(self, x, z):  # x [batch, length] float32, z [batch, length] complex64
        return torch.fft.rfft(x, norm="ortho"), torch.fft.fft(z), torch.fft.ifft(z, n=12)


class ViewRoundTrips(nn.Module):
    """view_as_complex of real pairs (a complex output) and view_as_real of a complex input (a real output)."""

    def __init__(self, n=6):
        super().__init__()
        self.register_buffer("rotation", torch.polar(torch.ones(n), torch.arange(n) * 0.5))

    def forward(self, pairs, z):  # pairs [batch, n, 2] float32, z [batch, n] complex64
        rotated = torch.view_as_complex(pairs) * self.rotation
        return rotated, torch.view_as_real(z * self.rotation).sum(-1), torch.view_as_complex(torch.view_as_real(z) * 2)


register(Case(name="complex_gain", make_module=ComplexGain,
              input_sets=lambda: [(_c(3, 8),), (_c(5, 8),)], dynamic_shapes=({0: _B},),
              description="complex64 input x complex buffer x complex parameter -> complex64 output"))
register(Case(name="complex_parts", make_module=ComplexParts,
              input_sets=lambda: [(_c(2, 7),), (_c(4, 3),)], dynamic_shapes=({0: _B, 1: _N},),
              description="abs, angle, real, imag of a complex64 input (real outputs)"))
register(Case(name="complex128_conj_add", make_module=Complex128,
              input_sets=lambda: [(_c(2, 5, dtype=torch.complex128), _c(2, 5, dtype=torch.complex128),
                                   torch.randn(5, dtype=torch.float64)),
                                  (_c(4, 5, dtype=torch.complex128), _c(4, 5, dtype=torch.complex128),
                                   torch.randn(5, dtype=torch.float64))],
              dynamic_shapes=({0: _B}, {0: _B}, None),
              description="complex128 inputs and output: conj, add, real scale"))
register(Case(name="complex_fft_outputs", make_module=FftToComplex,
              input_sets=lambda: [(torch.randn(2, 16), _c(2, 16)), (torch.randn(3, 21), _c(3, 21))],
              # torch.export guards length >= 13 for ifft's n=12 (a cut, never a pad)
              dynamic_shapes=({0: _B, 1: _LONG}, {0: _B, 1: _LONG}),
              description="rfft / fft / ifft(n=12) over a dynamic length straight to complex64 outputs"))
register(Case(name="complex_view_round_trips", make_module=ViewRoundTrips,
              input_sets=lambda: [(torch.randn(2, 6, 2), _c(2, 6)), (torch.randn(5, 6, 2), _c(5, 6))],
              dynamic_shapes=({0: _B}, {0: _B}),
              description="view_as_complex of real pairs and view_as_real of a complex input, both ways out"))
