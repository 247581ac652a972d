"""Signal ops: DFT (opset 17 attribute axis, opset 20 input axis), STFT, Hann/Hamming/Blackman windows and
MelWeightMatrix. Oracles: numpy.fft and the window / mel formulas of the ONNX operator text, in float64."""
import numpy as np

RNG = np.random.default_rng(1724)  # own stream: the shared one feeds the other tables


def as_complex(x):
    return x[..., 0] + 1j * x[..., 1] if x.shape[-1] == 2 else x[..., 0].astype(np.complex128)


def stack(z, dtype):
    return np.stack([z.real, z.imag], axis=-1).astype(dtype)


def window(kind, n, periodic):
    n1 = n if periodic else n - 1
    k = np.arange(n, dtype=np.float64)
    if kind == "HannWindow":
        return np.sin(np.pi * k / n1) ** 2
    if kind == "HammingWindow":
        return 25 / 46 - (21 / 46) * np.cos(2 * np.pi * k / n1)
    return 0.42 - 0.5 * np.cos(2 * np.pi * k / n1) + 0.08 * np.cos(4 * np.pi * k / n1)


def mel_matrix(mels, dft_length, rate, low_hz, high_hz):
    """Triangular filters, band edges evenly spaced in mel and floored to bins of (dft_length + 1) / rate Hz."""
    to_mel = lambda f: np.float64(np.float32(2595) * np.log1p(np.float32(f) / np.float32(700))) / np.log(10)  # noqa: E731
    lo, hi = to_mel(low_hz), to_mel(high_hz)
    mel = np.arange(mels + 2) * ((hi - lo) / (mels + 2)) + lo
    edges = np.floor((dft_length + 1) * (700 * np.expm1(mel / 2595 * np.log(10))) / rate).astype(np.int64)
    out = np.zeros((dft_length // 2 + 1, mels))
    for m in range(mels):
        a, c, b = edges[m], edges[m + 1], edges[m + 2]
        if c == a:
            out[c, m] = 1
        else:
            out[a:c + 1, m] = (np.arange(a, c + 1) - a) / (c - a)
        if b > c:
            out[c:b, m] = (b - np.arange(c, b)) / (b - c)
    return out


def build(api):
    case, node = api.case, api.node
    i64 = lambda v: np.array(v, np.int64)  # noqa: E731
    tol = (1e-4, 1e-5)

    x = RNG.uniform(-1, 1, (2, 12, 1)).astype(np.float32)
    case("dft17_real_axis1", [node("DFT", ["x"], ["y"])], {"x": x}, {"y": stack(np.fft.fft(x[..., 0], axis=1), np.float32)},
         opset=17, tol=tol)
    case("dft17_real_onesided_padded_to_16", [node("DFT", ["x", "n"], ["y"], onesided=1)], {"x": x},
         {"y": stack(np.fft.rfft(x[..., 0], n=16, axis=1), np.float32)}, initializers={"n": i64(16)}, opset=17, tol=tol)
    xc = RNG.uniform(-1, 1, (3, 7, 2)).astype(np.float64)
    case("dft17_complex_inverse_f64", [node("DFT", ["x"], ["y"], inverse=1)], {"x": xc},
         {"y": stack(np.fft.ifft(as_complex(xc), axis=1), np.float64)}, opset=17, tol=(1e-10, 1e-12),
         ort_differs="onnxruntime's float64 DFT of length 7 is off by ~3e-8 (float twiddles), numpy by ~1e-16")
    case("dft17_complex_truncated_to_5", [node("DFT", ["x", "n"], ["y"])], {"x": xc},
         {"y": stack(np.fft.fft(as_complex(xc), n=5, axis=1), np.float64)}, initializers={"n": i64(5)}, opset=17,
         tol=(1e-10, 1e-12))
    x3 = RNG.uniform(-1, 1, (4, 5, 6, 2)).astype(np.float32)
    case("dft20_axis_input_negative", [node("DFT", ["x", "", "ax"], ["y"])], {"x": x3},
         {"y": stack(np.fft.fft(as_complex(x3), axis=0), np.float32)}, initializers={"ax": i64(-4)}, opset=20, tol=tol)
    case("dft20_default_axis_minus2", [node("DFT", ["x"], ["y"])], {"x": x3},
         {"y": stack(np.fft.fft(as_complex(x3), axis=-1), np.float32)}, opset=20, tol=tol)
    spec = np.fft.rfft(RNG.uniform(-1, 1, (2, 10)), axis=1)  # a one-sided spectrum of length 6
    xs = stack(spec, np.float32)
    case("dft20_irfft_default_length", [node("DFT", ["x", "", "ax"], ["y"], inverse=1, onesided=1)], {"x": xs},
         {"y": np.fft.irfft(as_complex(xs), axis=1)[..., None].astype(np.float32)}, initializers={"ax": i64(1)}, opset=20, tol=tol)
    case("dft20_irfft_odd_length_9", [node("DFT", ["x", "n", "ax"], ["y"], inverse=1, onesided=1)], {"x": xs},
         {"y": np.fft.irfft(as_complex(xs), n=9, axis=1)[..., None].astype(np.float32)},
         initializers={"n": i64(9), "ax": i64(1)}, opset=20, tol=tol,
         ort_differs="for an odd length onnxruntime reads another number of bins than numpy's irfft (the ONNX reference)")
    xh = RNG.uniform(-1, 1, (1, 8, 1)).astype(np.float16)
    case("dft17_float16", [node("DFT", ["x"], ["y"])], {"x": xh},
         {"y": stack(np.fft.fft(xh[..., 0].astype(np.float64), axis=1), np.float16)}, opset=17, tol=(2e-3, 4e-3))

    sig = RNG.uniform(-1, 1, (2, 64, 1)).astype(np.float32)
    win = window("HannWindow", 16, True).astype(np.float32)
    frames = 1 + (64 - 16) // 6
    seg = np.stack([sig[:, f * 6:f * 6 + 16, 0] * win for f in range(frames)], axis=1)
    case("stft_hann_window_onesided", [node("STFT", ["s", "step", "w"], ["y"], onesided=1)], {"s": sig},
         {"y": stack(np.fft.rfft(seg.astype(np.float64), axis=-1), np.float32)},
         initializers={"step": i64(6), "w": win}, opset=17, tol=tol)
    seg = np.stack([sig[:, f * 4:f * 4 + 10, 0] for f in range(1 + (64 - 10) // 4)], axis=1)
    case("stft_frame_length_two_sided", [node("STFT", ["s", "step", "", "len"], ["y"], onesided=0)], {"s": sig},
         {"y": stack(np.fft.fft(seg.astype(np.float64), axis=-1), np.float32)},
         initializers={"step": i64(4), "len": i64(10)}, opset=17, tol=tol)

    for kind in ("HannWindow", "HammingWindow", "BlackmanWindow"):
        for periodic in (1, 0):
            case(f"{kind.lower()}_periodic{periodic}", [node(kind, ["n"], ["y"], periodic=periodic)], {},
                 {"y": window(kind, 11, periodic).astype(np.float32)}, initializers={"n": i64(11)}, opset=17, tol=(1e-6, 1e-6))
    case("hannwindow_float64_output", [node("HannWindow", ["n"], ["y"], output_datatype=11)], {},
         {"y": window("HannWindow", 8, True)}, initializers={"n": np.array(8, np.int32)}, opset=17, tol=(1e-12, 1e-12))
    case("melweightmatrix_16k_512", [node("MelWeightMatrix", ["m", "n", "r", "lo", "hi"], ["y"])], {},
         {"y": mel_matrix(10, 512, 16000, 20.0, 8000.0).astype(np.float32)},
         initializers={"m": i64(10), "n": i64(512), "r": i64(16000), "lo": np.array(20, np.float32),
                       "hi": np.array(8000, np.float32)}, opset=17, tol=(1e-6, 1e-6))
    case("melweightmatrix_narrow_bands_f64", [node("MelWeightMatrix", ["m", "n", "r", "lo", "hi"], ["y"], output_datatype=11)],
         {}, {"y": mel_matrix(8, 64, 8000, 0.0, 4000.0)},
         initializers={"m": i64(8), "n": i64(64), "r": i64(8000), "lo": np.array(0, np.float32),
                       "hi": np.array(4000, np.float32)}, opset=17, tol=(1e-12, 1e-12))
