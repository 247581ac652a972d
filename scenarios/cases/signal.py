"""Signal-processing front ends and complex-number programs: complex values inside the graph, real
tensors at its edges.

- an audio front end as speech models have it: waveform -> torch.stft with a Hann window -> power
  spectrum -> mel filterbank (a matmul) -> log, batch and waveform length dynamic;
- spectral features through torch.fft: rfft of frames, their power through view_as_real, a filter
  applied by complex multiplication and back through irfft;
- rotary position embeddings as LLaMA's reference code writes them (polar, view_as_complex, complex
  mul, view_as_real), inside a causal self-attention.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.export import Dim

from ..registry import Case, register


def mel_filterbank(n_freqs: int, n_mels: int, sample_rate: int) -> torch.Tensor:
    """[n_freqs, n_mels] triangular filters on the HTK mel scale (what torchaudio's melscale_fbanks gives)."""
    def mel(f):
        return 2595.0 * math.log10(1.0 + f / 700.0)

    def hz(m):
        return 700.0 * (10 ** (m / 2595.0) - 1.0)

    freqs = torch.linspace(0, sample_rate / 2, n_freqs, dtype=torch.float64)
    edges = torch.tensor([hz(m) for m in torch.linspace(mel(0.0), mel(sample_rate / 2), n_mels + 2).tolist()],
                         dtype=torch.float64)
    lower, centre, upper = edges[:-2], edges[1:-1], edges[2:]
    up = (freqs[:, None] - lower[None]) / (centre - lower)[None]
    down = (upper[None] - freqs[:, None]) / (upper - centre)[None]
    return torch.clamp(torch.minimum(up, down), min=0).to(torch.float32)


class LogMelFrontEnd(nn.Module):
    def __init__(self, n_fft=64, hop=16, n_mels=16, sample_rate=8000):
        super().__init__()
        self.n_fft, self.hop = n_fft, hop
        self.register_buffer("window", torch.hann_window(n_fft))
        self.register_buffer("mel", mel_filterbank(n_fft // 2 + 1, n_mels, sample_rate))

    def forward(self, wave):  # [batch, samples]
        spec = torch.stft(wave, self.n_fft, hop_length=self.hop, window=self.window, return_complex=True)
        power = spec.abs().pow(2)  # [batch, freqs, frames]
        mel = torch.matmul(power.transpose(1, 2), self.mel)  # [batch, frames, mels]
        return torch.log(mel + 1e-6)


class SpectralFilter(nn.Module):
    """Frames of a signal, their spectrum (rfft), its power (view_as_real), a learned complex gain per bin
    (view_as_complex, complex mul) and the filtered frames (irfft)."""

    def __init__(self, frame=32, hop=16):
        super().__init__()
        self.frame, self.hop = frame, hop
        self.gain = nn.Parameter(torch.randn(frame // 2 + 1, 2) * 0.5 + torch.tensor([1.0, 0.0]))

    def forward(self, x):  # [batch, samples]
        frames = x.unfold(-1, self.frame, self.hop)  # [batch, frames, frame]
        spec = torch.fft.rfft(frames, norm="ortho")
        power = torch.view_as_real(spec).pow(2).sum(-1)
        filtered = torch.fft.irfft(spec * torch.view_as_complex(self.gain), n=self.frame, norm="ortho")
        return power, filtered


class ComplexRopeAttention(nn.Module):
    """Self-attention whose queries and keys are rotated by freqs_cis = polar(1, position * frequency),
    each (even, odd) feature pair taken as one complex number."""

    def __init__(self, dim=32, heads=4, max_len=64):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.out = nn.Linear(dim, dim, bias=False)
        freqs = 1.0 / (10000 ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim))
        self.register_buffer("angles", torch.outer(torch.arange(max_len).float(), freqs))

    def rotate(self, x, freqs_cis):  # x [b, s, h, d]
        z = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2))
        return torch.view_as_real(z * freqs_cis[None, :, None, :]).flatten(3)

    def forward(self, x):  # [batch, seq, dim]
        b, s, _ = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, self.head_dim).unbind(2)
        angles = self.angles[:s]
        freqs_cis = torch.polar(torch.ones_like(angles), angles)
        q, k = self.rotate(q, freqs_cis), self.rotate(k, freqs_cis)
        att = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        return self.out(att.transpose(1, 2).reshape(b, s, -1))


_B = Dim("batch", min=1, max=16)
_T = Dim("samples", min=128, max=16000)

register(Case(name="signal_logmel_stft", make_module=LogMelFrontEnd,
              input_sets=lambda: [(torch.randn(2, 400),), (torch.randn(3, 513),), (torch.randn(1, 256),)],
              dynamic_shapes=({0: _B, 1: _T},),
              description="audio front end: stft (Hann window) -> power -> mel filterbank matmul -> log"))
register(Case(name="signal_rfft_filter", make_module=SpectralFilter,
              input_sets=lambda: [(torch.randn(2, 160),), (torch.randn(3, 160),)],
              dynamic_shapes=({0: _B},),
              description="framed rfft, power via view_as_real, complex gain per bin, irfft"))
register(Case(name="complex_rope_attention", make_module=ComplexRopeAttention,
              input_sets=lambda: [(torch.randn(2, 7, 32),), (torch.randn(3, 11, 32),)],
              dynamic_shapes=({0: _B, 1: Dim("seq", min=2, max=64)},),
              description="causal self-attention with rotary embeddings in complex form (polar, complex mul)"))
