// HannWindow, HammingWindow, BlackmanWindow and MelWeightMatrix (opset 17): tensors built from
// scalar inputs, computed in double and rounded once to `output_datatype` (default float32),
// following the formulas of the ONNX operator text (periodic windows divide by N, symmetric by N - 1).
#include <cmath>
#include <numbers>

#include "double_io.h"
#include "elementwise.h"
#include "../src/element_values.h"

namespace parity::refrt {
namespace {

// A tensor of any numeric dtype from doubles (float types rounded once; integers truncated as a cast).
Tensor numeric_tensor(const NodeDef& node, DType dtype, Shape shape, const std::vector<double>& values) {
  if (is_float_dtype(dtype)) return float_tensor(dtype, std::move(shape), values);
  if (dtype == DType::kString || dtype == DType::kBool || dtype_size(dtype) == 0)
    node.fail("output_datatype " + dtype_name(dtype) + " is not a numeric type", ErrorKind::kUnsupported);
  Tensor out(dtype, std::move(shape));
  auto* p = static_cast<unsigned char*>(out.mutable_raw());
  const size_t size = dtype_size(dtype);
  for (size_t i = 0; i < values.size(); ++i) {
    const auto bytes = element_bytes(dtype, values[i]);
    std::copy(bytes.begin(), bytes.end(), p + i * size);
  }
  return out;
}

DType output_datatype(const NodeDef& node) {
  const int64_t v = node.attr_int("output_datatype", 1);
  if (!dtype_is_supported(static_cast<int32_t>(v)) || v > 16)
    node.fail("output_datatype " + std::to_string(v) + " is not a supported tensor type", ErrorKind::kUnsupported);
  return static_cast<DType>(v);
}

enum class Window { kHann, kHamming, kBlackman };

template <Window W>
class WindowKernel : public Kernel {
 public:
  explicit WindowKernel(const NodeDef& node)
      : node_(node), dtype_(output_datatype(node)), periodic_(node.attr_int("periodic", 1) != 0) {}
  void compute(KernelIO& io) const override {
    const int64_t size = scalar_int(node_, io.in(0), "size");
    if (size < 0) node_.fail("size must be >= 0, got " + std::to_string(size));
    // Windows weight DFT frames, whose length refrt caps at 2^24 (DFT): a longer window has no use, and a
    // hostile model asking for billions of elements would spend the load's constant folding on it.
    if (size > (int64_t{1} << 24)) node_.fail("size " + std::to_string(size) + " is too large (at most 2^24)");
    const double n1 = static_cast<double>(periodic_ ? size : size - 1);
    constexpr double pi = std::numbers::pi;
    std::vector<double> w(static_cast<size_t>(size));
    for (int64_t i = 0; i < size; ++i) {
      const double n = static_cast<double>(i);
      if constexpr (W == Window::kHann) {
        const double s = std::sin(n * pi / n1);
        w[i] = s * s;
      } else if constexpr (W == Window::kHamming) {
        const double alpha = 25.0 / 46.0;
        w[i] = alpha - std::cos(n * pi * 2 / n1) * (1 - alpha);
      } else {
        w[i] = std::cos(n * (pi * 2) / n1) * -0.5 + std::cos(n * (pi * 4) / n1) * 0.08 + 0.42;
      }
    }
    io.outputs[0] = numeric_tensor(node_, dtype_, {size}, w);
  }

 private:
  NodeDef node_;
  DType dtype_;
  bool periodic_;
};

// The triangular filters of a mel filter bank over the dft_length / 2 + 1 bins of a one-sided
// spectrum. Band edges are placed evenly on the mel scale (mel = 2595 log10(1 + f / 700)) and
// rounded down to bins as (dft_length + 1) * f / sample_rate, as the operator text specifies.
class MelWeightMatrixKernel : public Kernel {
 public:
  explicit MelWeightMatrixKernel(const NodeDef& node) : node_(node), dtype_(output_datatype(node)) {}
  void compute(KernelIO& io) const override {
    const int64_t mels = scalar_int(node_, io.in(0), "num_mel_bins");
    const int64_t dft_length = scalar_int(node_, io.in(1), "dft_length");
    const int64_t sample_rate = scalar_int(node_, io.in(2), "sample_rate");
    if (mels <= 0 || dft_length <= 0 || sample_rate <= 0)
      node_.fail("num_mel_bins, dft_length and sample_rate must be > 0, got " + std::to_string(mels) + ", " +
                 std::to_string(dft_length) + ", " + std::to_string(sample_rate));
    if (mels > (int64_t{1} << 20) || dft_length > (int64_t{1} << 30))
      node_.fail("num_mel_bins or dft_length is too large");
    const double low = edge_mel(io.in(3), "lower_edge_hertz");
    const double high = edge_mel(io.in(4), "upper_edge_hertz");
    const int64_t bins = dft_length / 2 + 1;
    const double step = (high - low) / static_cast<double>(mels + 2);
    std::vector<int64_t> edge(static_cast<size_t>(mels + 2));
    for (int64_t i = 0; i < mels + 2; ++i) {
      const double hz = 700 * std::expm1((static_cast<double>(i) * step + low) / 2595 * std::log(10.0));
      const double bin = std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(sample_rate));
      if (!(bin >= 0 && bin < static_cast<double>(bins)))
        node_.fail("band edge " + std::to_string(i) + " (" + std::to_string(hz) + " Hz) falls outside the " +
                   std::to_string(bins) + " spectrogram bins");
      edge[i] = static_cast<int64_t>(bin);
    }
    std::vector<double> w = output_buffer({bins, mels}, "MelWeightMatrix output");
    for (int64_t m = 0; m < mels; ++m) {
      const int64_t lo = edge[m], center = edge[m + 1], hi = edge[m + 2];
      if (center == lo) {
        w[center * mels + m] = 1;
      } else {
        for (int64_t j = lo; j <= center; ++j)
          w[j * mels + m] = static_cast<double>(j - lo) / static_cast<double>(center - lo);
      }
      for (int64_t j = center; j < hi; ++j)
        w[j * mels + m] = static_cast<double>(hi - j) / static_cast<double>(hi - center);
    }
    io.outputs[0] = numeric_tensor(node_, dtype_, {bins, mels}, w);
  }

 private:
  // The mel value of an edge frequency: log1p and the factor 2595 in the input's own precision
  // (float32 inputs give float32 there, as the reference does), the division by ln 10 in double.
  double edge_mel(const Tensor& t, const std::string& what) const {
    if (t.numel() != 1 || !is_float_dtype(t.dtype()))
      node_.fail(what + " must be one float value, got " + dtype_name(t.dtype()) + " " + shape_str(t.shape()));
    const double hz = float_values(t)[0];
    if (!std::isfinite(hz) || hz < 0) node_.fail(what + " must be finite and >= 0, got " + std::to_string(hz));
    if (t.dtype() == DType::kFloat64) return 2595 * std::log1p(hz / 700) / std::log(10.0);
    const float mel = 2595.0f * std::log1p(static_cast<float>(hz) / 700.0f);
    return static_cast<double>(mel) / std::log(10.0);
  }

  NodeDef node_;
  DType dtype_;
};

}  // namespace

PARITY_KERNEL("HannWindow", 17, WindowKernel<Window::kHann>, kAllNumericTypes);
PARITY_KERNEL("HammingWindow", 17, WindowKernel<Window::kHamming>, kAllNumericTypes);
PARITY_KERNEL("BlackmanWindow", 17, WindowKernel<Window::kBlackman>, kAllNumericTypes);
PARITY_KERNEL("MelWeightMatrix", 17, MelWeightMatrixKernel, kAllNumericTypes);

}  // namespace parity::refrt
