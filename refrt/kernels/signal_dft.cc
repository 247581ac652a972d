// DFT (opset 17: axis attribute; opset 20: axis input, default -2) and STFT (opset 17).
// Signals are [..., n, 1] (real) or [..., n, 2] (complex, real then imaginary). Each line is
// transformed directly (O(n * bins)) in double with an exact twiddle table indexed by k * t mod n,
// so every length works (no power-of-two restriction) and the result is rounded once to the input's dtype.
// inverse divides by n; onesided keeps bins 0..n/2 (forward) or reads a half spectrum and returns
// the real signal (inverse, as numpy's irfft).
#include <cmath>
#include <complex>
#include <numbers>

#include "double_io.h"

namespace parity::refrt {
namespace {

using Complex = std::complex<double>;

struct Twiddles {
  std::vector<double> cos, sin;  // of 2 pi j / n, j in [0, n)
  explicit Twiddles(int64_t n) : cos(static_cast<size_t>(n)), sin(static_cast<size_t>(n)) {
    for (int64_t j = 0; j < n; ++j) {
      const double a = 2 * std::numbers::pi * static_cast<double>(j) / static_cast<double>(n);
      cos[j] = std::cos(a);
      sin[j] = std::sin(a);
    }
  }
};

// out[k] = sum_t in[t] e^(-+2 pi i k t / n) for k < bins, over the first `m` inputs (the rest are 0).
void dft_line(const Complex* in, int64_t m, int64_t n, int64_t bins, bool inverse, const Twiddles& tw, Complex* out) {
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t k = 0; k < bins; ++k) {
    double re = 0, im = 0;
    int64_t j = 0;  // k * t mod n, stepped without overflow
    for (int64_t t = 0; t < m; ++t) {
      const double c = tw.cos[j], s = sign * tw.sin[j];
      re += in[t].real() * c - in[t].imag() * s;
      im += in[t].real() * s + in[t].imag() * c;
      j += k % n;
      if (j >= n) j -= n;
    }
    out[k] = inverse ? Complex(re / static_cast<double>(n), im / static_cast<double>(n)) : Complex(re, im);
  }
}

// The real signal of length n whose spectrum's first `m` bins are `in` (Hermitian symmetry gives the
// rest; the imaginary parts of bin 0 and, for even n, bin n/2 do not contribute), divided by n.
void inverse_real_line(const Complex* in, int64_t m, int64_t n, const Twiddles& tw, double* out) {
  const int64_t half = n / 2;
  for (int64_t t = 0; t < n; ++t) {
    double sum = m > 0 ? in[0].real() : 0;
    int64_t j = 0;
    for (int64_t k = 1; k <= half && k < m; ++k) {
      j += t;
      j %= n;
      const double term = in[k].real() * tw.cos[j] - in[k].imag() * tw.sin[j];
      sum += (2 * k == n) ? term : 2 * term;
    }
    out[t] = sum / static_cast<double>(n);
  }
}

struct DftSpec {
  int64_t axis = 0, length = 0;
  bool inverse = false, onesided = false;
};

// Transforms x ([..., L, ..., c] with c = 1 or 2) along spec.axis.
Tensor run_dft(const Tensor& x, const DftSpec& spec) {
  const int64_t rank = static_cast<int64_t>(x.rank());
  const int64_t c = x.dim(rank - 1);
  const int64_t len = x.dim(spec.axis), n = spec.length;
  const bool c2r = spec.inverse && spec.onesided;
  const int64_t bins = c2r ? n : (spec.onesided ? n / 2 + 1 : n);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank - 1; ++d) {
    if (d < spec.axis) outer *= x.dim(d);
    if (d > spec.axis) inner *= x.dim(d);
  }
  Shape shape = x.shape();
  shape[spec.axis] = bins;
  shape[rank - 1] = c2r ? 1 : 2;
  const std::vector<double> v = float_values(x);
  std::vector<double> y = output_buffer(shape, "DFT output");
  const Twiddles tw(n);
  const int64_t m = std::min(len, c2r ? n / 2 + 1 : n);
  std::vector<Complex> line(static_cast<size_t>(m)), spectrum(static_cast<size_t>(bins));
  std::vector<double> real(static_cast<size_t>(c2r ? n : 0));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t t = 0; t < m; ++t) {
        const int64_t at = ((o * len + t) * inner + i) * c;
        line[t] = Complex(v[at], c == 2 ? v[at + 1] : 0.0);
      }
      if (c2r) {
        inverse_real_line(line.data(), m, n, tw, real.data());
        for (int64_t t = 0; t < n; ++t) y[(o * n + t) * inner + i] = real[t];
        continue;
      }
      dft_line(line.data(), m, n, bins, spec.inverse, tw, spectrum.data());
      for (int64_t k = 0; k < bins; ++k) {
        const int64_t at = ((o * bins + k) * inner + i) * 2;
        y[at] = spectrum[k].real();
        y[at + 1] = spectrum[k].imag();
      }
    }
  return float_tensor(x.dtype(), shape, y);
}

void check_signal(const NodeDef& node, const Tensor& x) {
  if (!is_float_dtype(x.dtype())) node.fail("input must be a float tensor, got " + dtype_name(x.dtype()));
  if (x.rank() < 2 || (x.dim(x.rank() - 1) != 1 && x.dim(x.rank() - 1) != 2))
    node.fail("input must be [..., n, 1] (real) or [..., n, 2] (complex), got " + shape_str(x.shape()));
}

class DftKernel : public Kernel {
 public:
  explicit DftKernel(const NodeDef& node)
      : node_(node),
        inverse_(node.attr_int("inverse", 0) != 0),
        onesided_(node.attr_int("onesided", 0) != 0),
        axis_attr_(node.attr_int("axis", 1)) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    check_signal(node_, x);
    const int64_t rank = static_cast<int64_t>(x.rank());
    int64_t axis = node_.opset < 20 ? axis_attr_ : -2;
    if (node_.opset >= 20 && io.optional(2)) axis = scalar_int(node_, *io.optional(2), "axis");
    if (axis < -rank || axis >= rank)
      node_.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
    DftSpec spec{axis < 0 ? axis + rank : axis, 0, inverse_, onesided_};
    if (spec.axis == rank - 1) node_.fail("axis must not be the last dim (it holds real and imaginary parts)");
    const int64_t len = x.dim(spec.axis);
    spec.length = io.optional(1) ? scalar_int(node_, *io.optional(1), "dft_length")
                                 : (inverse_ && onesided_ ? 2 * (len - 1) : len);
    if (spec.length <= 0) node_.fail("dft_length must be > 0, got " + std::to_string(spec.length));
    if (spec.length > (int64_t{1} << 24)) node_.fail("dft_length " + std::to_string(spec.length) + " is too large");
    io.outputs[0] = run_dft(x, spec);
  }

 private:
  NodeDef node_;
  bool inverse_, onesided_;
  int64_t axis_attr_;
};

// Frames of frame_length samples every frame_step samples (1 + (L - frame_length) / frame_step of
// them), each multiplied by the window and transformed: [batch, frames, bins, 2].
class StftKernel : public Kernel {
 public:
  explicit StftKernel(const NodeDef& node) : node_(node), onesided_(node.attr_int("onesided", 1) != 0) {}
  void compute(KernelIO& io) const override {
    const Tensor& x = io.in(0);
    check_signal(node_, x);
    if (x.rank() != 3) node_.fail("signal must be [batch, length, 1 or 2], got " + shape_str(x.shape()));
    const int64_t step = scalar_int(node_, io.in(1), "frame_step");
    const Tensor* window = io.optional(2);
    if (window && (window->rank() != 1 || window->dtype() != x.dtype()))
      node_.fail("window must be a 1-D " + dtype_name(x.dtype()) + " tensor, got " + dtype_name(window->dtype()) + " " +
                 shape_str(window->shape()));
    const int64_t batch = x.dim(0), len = x.dim(1), c = x.dim(2);
    int64_t frame = window ? window->dim(0) : len;
    if (io.optional(3)) {
      frame = scalar_int(node_, *io.optional(3), "frame_length");
      if (window && window->dim(0) != frame)
        node_.fail("frame_length " + std::to_string(frame) + " differs from the window's length " +
                   std::to_string(window->dim(0)));
    }
    if (step <= 0) node_.fail("frame_step must be > 0, got " + std::to_string(step));
    if (frame <= 0 || frame > len)
      node_.fail("frame_length must be in [1, signal length " + std::to_string(len) + "], got " +
                 std::to_string(frame));
    const int64_t frames = 1 + (len - frame) / step;
    const int64_t bins = onesided_ ? frame / 2 + 1 : frame;
    const std::vector<double> v = float_values(x);
    const std::vector<double> w = window ? float_values(*window) : std::vector<double>(static_cast<size_t>(frame), 1.0);
    std::vector<double> y = output_buffer({batch, frames, bins, 2}, "STFT output");
    const Twiddles tw(frame);
    std::vector<Complex> line(static_cast<size_t>(frame)), spectrum(static_cast<size_t>(bins));
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t f = 0; f < frames; ++f) {
        for (int64_t t = 0; t < frame; ++t) {
          const int64_t at = (b * len + f * step + t) * c;
          line[t] = Complex(v[at] * w[t], c == 2 ? v[at + 1] * w[t] : 0.0);
        }
        dft_line(line.data(), frame, frame, bins, false, tw, spectrum.data());
        for (int64_t k = 0; k < bins; ++k) {
          const int64_t at = ((b * frames + f) * bins + k) * 2;
          y[at] = spectrum[k].real();
          y[at + 1] = spectrum[k].imag();
        }
      }
    io.outputs[0] = float_tensor(x.dtype(), {batch, frames, bins, 2}, y);
  }

 private:
  NodeDef node_;
  bool onesided_;
};

}  // namespace

// 17 introduced DFT with an axis attribute; 20 made axis an input (default -2).
PARITY_KERNEL("DFT", 17, DftKernel, kFloatTypes16);
PARITY_KERNEL("DFT", 20, DftKernel, kFloatTypes16);
PARITY_KERNEL("STFT", 17, StftKernel, kFloatTypes16);

}  // namespace parity::refrt
